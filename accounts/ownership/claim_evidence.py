"""The evidence a claim ("this is me") carries to the curators, gathered once when it is made.

- The ORCID tie: the account signed in with an ORCID iD that a source gives the record.
- ORCID works: the works of the ORCID record that allauth stored at sign-in (the public v3.0
  record, `activities-summary.works`) whose DOI or arXiv id is one of the record's papers. Only
  what the sign-in recorded is read; nothing is fetched.
- E-mail domains: a verified address of the account whose domain is, or is under, the website
  host of an institution on the record's bylines (ROR's `domains` list is empty in every ROR
  record we hold, so the website from ROR's `links` is what there is to compare).
- Conflicts: the record is already verified as someone else's, or the claimant already owns
  another record (one person, one verified record): both sides, for the curators.

Every query is bounded by the claimant's own data and the record's own papers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth.models import User
from django.db.models import Q
from django.db.models.functions import Lower

from institutions.models import AuthorshipInstitution
from papers.models import Paper
from researchers.models import Researcher, ResearcherExternalId

from ..models import Claim

# ORCID records list hundreds of works at most in practice; the bound keeps a query's IN list
# and the evidence stored with a claim small whatever a record holds.
MAX_WORK_IDS = 2000
WORKS_SHOWN = 20
INSTITUTIONS_READ = 200
ARXIV_PREFIX = re.compile(r"^(?:arxiv:|https?://arxiv\.org/abs/)", re.IGNORECASE)
ARXIV_VERSION = re.compile(r"v\d+$")
DOI_PREFIX = re.compile(r"^(?:doi:|https?://(?:dx\.)?doi\.org/)", re.IGNORECASE)


@dataclass(frozen=True)
class OrcidWork:
    kind: str  # "doi" or "arxiv"
    value: str  # normalised: DOI lower-case, arXiv id without prefix or version
    title: str


def bare_orcid(value: str) -> str:
    return value.strip().rstrip("/").rsplit("/", 1)[-1].upper()


def _normalise(kind: str, value: str) -> str:
    value = value.strip()
    if kind == "doi":
        return DOI_PREFIX.sub("", value).lower()
    return ARXIV_VERSION.sub("", ARXIV_PREFIX.sub("", value))


def orcid_record_works(record: dict) -> list[OrcidWork]:
    """The DOIs and arXiv ids of the works in an ORCID v3.0 record (`/v3.0/<iD>/record`, as
    allauth stores it in SocialAccount.extra_data), each once, in the record's order. Only a
    work's own ids count ("self"): a "part-of" id is the journal's or the book's."""
    works = ((record or {}).get("activities-summary") or {}).get("works") or {}
    out: dict[tuple[str, str], OrcidWork] = {}
    for group in works.get("group") or []:
        summaries = group.get("work-summary") or [{}]
        title = (((summaries[0] or {}).get("title") or {}).get("title") or {}).get("value") or ""
        for ext in ((group.get("external-ids") or {}).get("external-id")) or []:
            kind = (ext.get("external-id-type") or "").lower()
            if kind not in ("doi", "arxiv") or ext.get("external-id-relationship") == "part-of":
                continue
            value = _normalise(kind, ext.get("external-id-value") or "")
            if value and (kind, value) not in out:
                out[(kind, value)] = OrcidWork(kind=kind, value=value, title=title)
    return list(out.values())[:MAX_WORK_IDS]


def orcid_works_matching(*, user: User, researcher: Researcher) -> list[dict]:
    """The works of the user's ORCID record(s) that are papers of `researcher`, by DOI or arXiv
    id (one query for the accounts, one for the papers)."""
    works: list[OrcidWork] = []
    for extra in SocialAccount.objects.filter(user=user, provider="orcid").values_list(
        "extra_data", flat=True
    ):
        works.extend(orcid_record_works(extra if isinstance(extra, dict) else {}))
    if not works:
        return []
    dois = {w.value for w in works if w.kind == "doi"}
    arxiv_ids = {w.value for w in works if w.kind == "arxiv"}
    papers = (
        Paper.objects.filter(authorships__researcher_id=researcher.pk)
        .annotate(doi_lower=Lower("doi"))
        .filter(Q(doi_lower__in=dois) | Q(arxiv_id__in=arxiv_ids))
        .order_by("arxiv_id")
        .values("arxiv_id", "doi", "title")
        .distinct()[:WORKS_SHOWN]
    )
    matched = []
    for paper in papers:
        how = "arXiv id" if paper["arxiv_id"] in arxiv_ids else "DOI"
        matched.append(
            {
                "arxiv_id": paper["arxiv_id"],
                "doi": paper["doi"],
                "title": paper["title"],
                "by": how,
            }
        )
    return matched


def website_host(url: str) -> str:
    host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host


def email_domains_matching(*, user: User, researcher: Researcher) -> list[dict]:
    """The user's verified e-mail domains that are, or are under, the website host of an
    institution on the record's bylines (two queries)."""
    domains = {
        address.rsplit("@", 1)[-1].lower()
        for address in EmailAddress.objects.filter(user=user, verified=True).values_list(
            "email", flat=True
        )
        if "@" in address
    }
    if not domains:
        return []
    institutions = (
        AuthorshipInstitution.objects.filter(authorship__researcher_id=researcher.pk)
        .exclude(institution__website="")
        .values_list(
            "institution_id", "institution__name", "institution__ror_id", "institution__website"
        )
        .distinct()[:INSTITUTIONS_READ]
    )
    matched = []
    for pk, name, ror_id, website in institutions:
        host = website_host(website)
        if not host:
            continue
        for domain in sorted(domains):
            if domain == host or domain.endswith(f".{host}"):
                matched.append(
                    {
                        "domain": domain,
                        "institution": pk,
                        "name": name,
                        "ror_id": ror_id or "",
                        "website": website,
                    }
                )
    return matched


def orcid_tie(*, user: User, researcher: Researcher) -> list[int]:
    """The record's ORCID links whose iD is one the user signed in with (two queries)."""
    signed_in = {
        bare_orcid(uid)
        for uid in SocialAccount.objects.filter(user=user, provider="orcid").values_list(
            "uid", flat=True
        )
    }
    if not signed_in:
        return []
    return [
        pk
        for pk, value in researcher.external_ids.filter(
            source=ResearcherExternalId.ORCID
        ).values_list("pk", "value")
        if bare_orcid(value) in signed_in
    ]


def claim_conflicts(*, user: User, researcher: Researcher) -> list[dict]:
    """The other side of "one person, one verified record": another user's confirmed claim on
    this record, and this user's confirmed or pending claims on other records (one query)."""
    rows = (
        Claim.objects.filter(
            Q(researcher_id=researcher.pk, status=Claim.Status.CONFIRMED) & ~Q(user=user)
            | Q(user=user, status__in=[Claim.Status.CONFIRMED, Claim.Status.PENDING])
            & ~Q(researcher_id=researcher.pk)
        )
        .select_related("researcher")
        .order_by("pk")[:20]
    )
    out = []
    for other in rows:
        out.append(
            {
                "kind": "record_owned" if other.researcher_id == researcher.pk else "other_record",
                "claim": other.pk,
                "user": other.user_id,
                "researcher": other.researcher_id,
                "name": other.researcher.display_name,
                "status": other.status,
                "method": other.method,
                "since": (other.reviewed_at or other.created_at).isoformat(),
            }
        )
    return out


def claim_evidence(*, user: User, researcher: Researcher) -> dict:
    """Everything the curators weigh for this claim, JSON-ready (a fixed number of queries)."""
    return {
        "orcid_tie": bool(orcid_tie(user=user, researcher=researcher)),
        "orcid_works": orcid_works_matching(user=user, researcher=researcher),
        "email_domains": email_domains_matching(user=user, researcher=researcher),
        "conflicts": claim_conflicts(user=user, researcher=researcher),
    }


def blocking_conflicts(evidence: dict) -> list[dict]:
    """The conflicts that keep a claim from being confirmed without the curators: the record
    owned by someone else, or the claimant owning another record."""
    return [c for c in evidence.get("conflicts", []) if c["status"] == Claim.Status.CONFIRMED]


def claim_preview(*, user: User, researcher: Researcher) -> dict:
    """What the confirm step of "this is me" shows before a claim is sent: the evidence the
    curators would see, whether an ORCID sign-in would verify it at once, and what an ORCID
    sign-in would add (a fixed number of queries)."""
    from django.conf import settings

    evidence = claim_evidence(user=user, researcher=researcher)
    record_orcids = list(
        researcher.external_ids.filter(source=ResearcherExternalId.ORCID).values_list(
            "value", flat=True
        )[:5]
    )
    return {
        "evidence": evidence,
        "verifies_at_once": evidence["orcid_tie"] and not blocking_conflicts(evidence),
        "record_orcids": record_orcids,
        "orcid_signed_in": SocialAccount.objects.filter(user=user, provider="orcid").exists(),
        "orcid_available": "orcid" in settings.SOCIALACCOUNT_PROVIDERS,
    }
