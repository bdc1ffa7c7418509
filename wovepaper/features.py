"""What a reader can do here, each with its page, its routes and its API: the one list that
/developers, the demo's closing list and the README's first paragraph are made from or checked
against (tests/test_features.py).

Every named route of the site (but the admin's, the API's and allauth's own) belongs to one
feature here or to `NOT_A_FEATURE` with its reason, and every path of /openapi.json to one
feature's `api`: a new route fails that test until it is placed, so the lists a reader reads
cannot fall behind the code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Feature:
    title: str
    # The page a reader opens first (a path; "#…" for a part of a page).
    page: str
    what: str
    # Words of the README's first paragraph that name it.
    readme: str
    signed_in: bool = False
    # The route names (namespace:name) it owns.
    routes: tuple[str, ...] = ()
    # Its paths in /openapi.json.
    api: tuple[str, ...] = ()


FEATURES: tuple[Feature, ...] = (
    Feature(
        "Search",
        "/search",
        "keyword, semantic and hybrid search over papers, researchers and institutions",
        readme="keyword, semantic and hybrid search",
        routes=("home", "search"),
        api=(
            "/api/v1/search/papers/",
            "/api/v1/search/researchers/",
            "/api/v1/search/institutions/",
        ),
    ),
    Feature(
        "Papers",
        "/papers",
        "the newest papers, by category, each with its byline, analysis and similar papers",
        readme="every arXiv paper",
        routes=("papers", "papers:detail", "category"),
        api=("/api/v1/papers/", "/api/v1/papers/{arxiv_id}/"),
    ),
    Feature(
        "References and citations",
        "/papers/<arxiv-id>/references",
        "each paper's references and the papers citing it, with their sources",
        readme="references and citing papers",
        routes=("papers:references", "papers:cited-by"),
        api=("/api/v1/papers/{arxiv_id}/references/", "/api/v1/papers/{arxiv_id}/citations/"),
    ),
    Feature(
        "Researchers",
        "/researchers",
        "researcher pages matched to Semantic Scholar and OpenAlex, with the evidence, "
        "co-authors and same-name records; report a wrong match",
        readme="the researchers who",
        routes=("researchers:list", "researchers:detail", "researchers:report"),
        api=(
            "/api/v1/researchers/",
            "/api/v1/researchers/{id}/",
            "/api/v1/researchers/{id}/papers/",
            "/api/v1/researchers/{id}/same-name/",
            "/api/v1/researchers/{id}/identity/",
        ),
    ),
    Feature(
        "Institutions",
        "/institutions",
        "institutions (ROR) with their papers and researchers",
        readme="institutions they work at",
        routes=(
            "institutions:list",
            "institutions:detail",
            "institutions:lookup",
            "researchers:institution-researchers",
        ),
        api=(
            "/api/v1/institutions/",
            "/api/v1/institutions/{key}/",
            "/api/v1/institutions/{key}/papers/",
            "/api/v1/institutions/{key}/researchers/",
        ),
    ),
    Feature(
        "Citation exports",
        "/papers/<arxiv-id>/cite.bib",
        "BibTeX, RIS and CSL-JSON of a paper, a researcher's papers, a search or a list",
        readme="BibTeX, RIS and CSL-JSON exports",
        routes=(
            "papers:cite",
            "researchers:cite",
            "search-cite",
            "accounts:library_cite",
            "accounts:shared_list_cite",
        ),
        api=(
            "/api/v1/papers/{arxiv_id}/cite.{extension}",
            "/api/v1/researchers/{id}/cite.{extension}",
            "/api/v1/search/papers/cite.{extension}",
            "/api/v1/me/lists/{list_id}/cite.{extension}",
        ),
    ),
    Feature(
        "Feeds",
        "/feeds/latest.rss",
        "RSS and Atom of the newest papers, a category, a researcher, an institution and the "
        "papers citing a paper or a researcher",
        readme="feeds",
        routes=(
            "feed-latest-rss",
            "feed-latest-atom",
            "feed-category-rss",
            "feed-category-atom",
            "papers:feed-cited-by-rss",
            "papers:feed-cited-by-atom",
            "feed-researcher-rss",
            "feed-researcher-atom",
            "feed-researcher-cited-by-rss",
            "feed-researcher-cited-by-atom",
            "feed-institution-rss",
            "feed-institution-atom",
        ),
    ),
    Feature(
        "Conflict check",
        "/conflicts",
        "which of a list of reviewers wrote with a list of authors, with the papers",
        readme="conflict-of-interest check",
        signed_in=True,
        routes=("researchers:conflicts",),
        api=("/api/v1/conflicts/",),
    ),
    Feature(
        "Following and the digest",
        "/following",
        "new papers by the researchers and institutions you follow, news of the papers you "
        "keep, and a daily or weekly digest",
        readme="follow researchers",
        signed_in=True,
        routes=(
            "accounts:following",
            "accounts:followed",
            "accounts:follow",
            "accounts:unfollow",
            "accounts:follow_institution",
            "accounts:unfollow_institution",
            "accounts:digest_unsubscribe",
            "accounts:digest_preview",
        ),
        api=("/api/v1/me/follows/", "/api/v1/me/follows/{researcher_id}/"),
    ),
    Feature(
        "Library",
        "/me/library",
        "lists of saved papers with notes, shared by a secret link, imported from BibTeX or RIS",
        readme="library of lists with notes",
        signed_in=True,
        routes=(
            "accounts:library",
            "accounts:save",
            "accounts:unsave",
            "accounts:library_list",
            "accounts:list_rename",
            "accounts:list_import",
            "accounts:list_import_job",
            "accounts:list_delete",
            "accounts:list_share",
            "accounts:list_unshare",
            "accounts:note",
            "accounts:remove",
            "accounts:shared_list",
        ),
        api=(
            "/api/v1/me/lists/",
            "/api/v1/me/lists/{list_id}/",
            "/api/v1/me/lists/{list_id}/papers/",
            "/api/v1/me/lists/{list_id}/papers/{arxiv_id}/",
        ),
    ),
    Feature(
        "Saved searches and alerts",
        "/me/searches",
        "a search saved from its results page, checked for new papers, shown on /following, "
        "in the digest and in a private feed",
        readme="save searches that alert them",
        signed_in=True,
        routes=(
            "accounts:saved_searches",
            "accounts:saved_search_delete",
            "accounts:alert_feed_reset",
            "accounts:alert_feed_atom",
            "accounts:alert_feed_rss",
        ),
        api=(
            "/api/v1/me/searches/",
            "/api/v1/me/searches/{search_id}/",
            "/api/v1/me/searches/{search_id}/alerts/",
        ),
    ),
    Feature(
        "Recommendations",
        "/following#recommendations",
        "papers like a list or the whole library, each with the saved paper it is close to; "
        "\u201cnot relevant\u201d ranks their like lower",
        readme="get recommendations",
        signed_in=True,
        routes=("accounts:not_relevant", "accounts:not_relevant_undo"),
        api=(
            "/api/v1/me/lists/{list_id}/recommendations/",
            "/api/v1/me/not-relevant/",
            "/api/v1/me/not-relevant/{arxiv_id}/",
        ),
    ),
    Feature(
        "Chat with the papers",
        "/chat",
        "questions answered from the papers here, each answer citing the papers it used",
        readme="chat",
        signed_in=True,
        routes=(
            "chat:page",
            "chat:conversation",
            "chat:ask",
            "chat:answer",
            "chat:answer_stream",
            "chat:rename",
            "chat:delete",
        ),
        api=(
            "/api/v1/me/conversations/",
            "/api/v1/me/conversations/{conversation_id}/",
            "/api/v1/me/conversations/{conversation_id}/messages/",
        ),
    ),
    Feature(
        "Claims and owners' pages",
        "/researchers/<id>",
        "\u201cthis is me\u201d on a researcher page, with evidence for the curators; once "
        "verified, the owner corrects their page",
        readme="claim and correct their own page",
        signed_in=True,
        routes=(
            "accounts:claim",
            "accounts:owner",
            "accounts:not_mine",
            "accounts:mine_too",
            "accounts:propose_merge",
            "accounts:owner_profile",
        ),
    ),
    Feature(
        "Account",
        "/accounts/",
        "sign-up and onboarding, the digest and fields, the API token, the export of your data "
        "and deleting the account",
        readme="Signed-in readers",
        signed_in=True,
        routes=(
            "accounts:settings",
            "accounts:export",
            "accounts:delete",
            "accounts:api_token",
            "accounts:onboarding",
            "accounts:onboarding_fields",
            "accounts:onboarding_researchers",
            "accounts:onboarding_claim",
            "accounts:onboarding_skip",
            "accounts:onboarding_finish",
        ),
    ),
    Feature(
        "Developers",
        "/developers",
        "the REST API (/openapi.json and its reference), /llms.txt, the sitemap, the open "
        "identity-links file and a markdown version of every page",
        readme="a REST API",
        routes=(
            "developers",
            "openapi",
            "api-reference",
            "api-redoc",
            "llms-txt",
            "sitemap-index",
            "sitemap-section",
            "data-identity-links",
        ),
    ),
    Feature(
        "About",
        "/about",
        "what the site is, who to contact, what it keeps about you",
        readme="Papers, researchers and institutions",
        routes=("about", "contact", "privacy"),
    ),
)

# Routes that are no reader's feature, each with why.
NOT_A_FEATURE: dict[str, str] = {
    "admin-login": "the curators' sign-in to the admin",
    "robots-txt": "for crawlers",
    "health": "for the load balancer and deploy/healthcheck.sh",
    "favicon": "a browser's icon",
    "accounts:me_state": "the reader's state that reader.js reads",
    "^api/": "any other path under /api/: the API's JSON 404",
}


def feature_routes() -> dict[str, str]:
    """Each owned route name with its feature's title."""
    return {route: f.title for f in FEATURES for route in f.routes}
