"""Chains of backlog batches: how the match workers drain the backlog faster than beat's one
batch a minute, and no more than MATCH_PARALLEL_BATCHES batches at a time, each chain's slot
lapsing MATCH_CHAIN_SECONDS after it was last renewed (wovepaper.lib.chains). The claims
(`claim`) keep chains from matching the same papers; the slots only bound how many run.
"""

from __future__ import annotations

from django.conf import settings

from wovepaper.lib import chains

KIND = "match"


def chain_slots_take() -> list[str]:
    """Take every free slot; returns a token per chain to start (none when all are held)."""
    return chains.chain_slots_take(
        KIND, slots=settings.MATCH_PARALLEL_BATCHES, seconds=settings.MATCH_CHAIN_SECONDS
    )


def chain_slot_renew(token: str) -> bool:
    """Whether the chain still holds its slot; if so, it holds it MATCH_CHAIN_SECONDS more."""
    return chains.chain_slot_renew(KIND, token, seconds=settings.MATCH_CHAIN_SECONDS)


def chain_slot_release(token: str) -> None:
    chains.chain_slot_release(KIND, token)
