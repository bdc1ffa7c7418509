"""The slots bounding how many backlog batch chains run at once (researchers.matching.chains)."""

from __future__ import annotations

import pytest

from researchers.matching.chains import chain_slot_release, chain_slot_renew, chain_slots_take
from wovepaper.lib.cache import coordination_cache


@pytest.fixture
def slots():
    coordination_cache().clear()
    yield
    coordination_cache().clear()


def test_chains_take_free_slots_only_and_a_released_slot_is_free_again(settings, slots):
    settings.MATCH_PARALLEL_BATCHES = 2
    first = chain_slots_take()
    assert len(first) == 2
    assert chain_slots_take() == []
    assert all(chain_slot_renew(token) for token in first)
    chain_slot_release(first[0])
    assert not chain_slot_renew(first[0])
    (again,) = chain_slots_take()
    assert again.split(":")[0] == first[0].split(":")[0] and again != first[0]
    # Releasing a token that lost its slot leaves the slot's new holder alone.
    chain_slot_release(first[0])
    assert chain_slot_renew(again)
