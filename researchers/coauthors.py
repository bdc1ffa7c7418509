"""The stored co-author entries of a researcher (researchers.page_figures) as pages and the API read
them, and where the page's co-author graph draws them.

The graph puts the researcher in the middle and their most frequent co-authors on a circle
around them, labels outside the circle so that they never overlap the lines. Co-authors who
wrote together are placed next to each other (a greedy walk along the strongest links), so their
lines, drawn as curves bent towards the middle, stay short and groups read as arcs. It is plain
arithmetic over at most GRAPH_NODES nodes, under a millisecond a page; networkx's spring layout
took 30-60 ms for 30 nodes on this machine and its labels collided.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def coauthor_path(entry: dict) -> str:
    """`/researchers/<id>-<slug>` of a stored co-author entry."""
    pk = entry["id"]
    slug = str(entry.get("slug") or "")
    # Entries stored before the slug lost its id prefix read "<id>-<slug>"; a page or the API
    # built from one would link to /researchers/<id>-<id>-<slug>, a redirect.
    slug = slug.removeprefix(f"{pk}-") if slug != str(pk) else ""
    return f"/researchers/{pk}-{slug}" if slug else f"/researchers/{pk}"


GRAPH_NODES = 24
WIDTH, HEIGHT = 640, 440
CX, CY, RADIUS = WIDTH / 2, HEIGHT / 2, 150
LABEL_CHARS = 22
# Labels around the circle before they touch: past this, every other node's name is left to
# its tooltip and the list below (both name every co-author).
LABELLED_NODES = 14
# A chord set this dense says nothing (one large author list makes every pair co-authors: a
# complete-graph "sunburst"); the graph then shows the spokes alone and says why.
DENSE_LINKS = 0.6


@dataclass(frozen=True)
class Node:
    id: int
    name: str
    label: str
    url: str
    count: int
    x: float
    y: float
    r: float
    lx: float
    ly: float
    anchor: str


@dataclass(frozen=True)
class Edge:
    path: str
    width: float
    weight: int
    names: str


@dataclass(frozen=True)
class Graph:
    nodes: list[Node]
    spokes: list[Edge]
    edges: list[Edge]
    width: int = WIDTH
    height: int = HEIGHT
    cx: float = CX
    cy: float = CY
    # Why the chords between co-authors are not drawn, when they are not.
    links_note: str = ""


def _order(ids: list[int], counts: dict[int, int], links: dict[tuple[int, int], int]) -> list[int]:
    """Walk from the strongest co-author to whichever unplaced one shares most papers with the
    last placed, falling back to the strongest unplaced one: linked co-authors end up adjacent."""
    left = set(ids)
    order: list[int] = []
    rank = {i: n for n, i in enumerate(ids)}
    while left:
        last = order[-1] if order else None
        linked = (
            [(links.get((min(last, o), max(last, o)), 0), -rank[o]) for o in left]
            if last is not None
            else []
        )
        best = (
            max(zip(linked, left, strict=True))[1]
            if linked and max(linked)[0] > 0
            else min(left, key=rank.__getitem__)
        )
        order.append(best)
        left.remove(best)
    return order


def coauthor_graph(coauthors: list[dict]) -> Graph | None:
    """The graph of the first GRAPH_NODES linked co-authors of a stored `coauthors` list (most
    shared papers first; each may carry "links": [[other id, shared papers], ...])."""
    shown = [c for c in coauthors if c.get("id")][:GRAPH_NODES]
    if not shown:
        return None
    by_id = {c["id"]: c for c in shown}
    counts = {c["id"]: int(c.get("count") or 1) for c in shown}
    links: dict[tuple[int, int], int] = {}
    for c in shown:
        for other, n in c.get("links") or []:
            if other in by_id and other != c["id"]:
                links[(min(c["id"], other), max(c["id"], other))] = int(n)
    order = _order([c["id"] for c in shown], counts, links)
    top = max(counts.values())
    top_link = max(links.values(), default=1)
    place: dict[int, tuple[float, float, float]] = {}
    nodes = []
    label_every = math.ceil(len(order) / LABELLED_NODES)
    for index, cid in enumerate(order):
        angle = 2 * math.pi * index / len(order) - math.pi / 2
        cos, sin = math.cos(angle), math.sin(angle)
        x, y = CX + RADIUS * cos, CY + RADIUS * sin
        place[cid] = (x, y, angle)
        c = by_id[cid]
        name = str(c.get("name") or "")
        nodes.append(
            Node(
                id=cid,
                name=name,
                label=""
                if index % label_every
                else name
                if len(name) <= LABEL_CHARS
                else name[: LABEL_CHARS - 1] + "…",
                url=coauthor_path(c),
                count=counts[cid],
                x=round(x, 1),
                y=round(y, 1),
                r=round(3.5 + 4.5 * counts[cid] / top, 1),
                lx=round(CX + (RADIUS + 14) * cos, 1),
                # Labels below the circle sit lower, so that neighbours' labels do not touch.
                ly=round(CY + (RADIUS + 14) * sin + (4 + 6 * sin if sin > 0 else 4), 1),
                anchor="start" if cos > 0.12 else "end" if cos < -0.12 else "middle",
            )
        )
    spokes = [
        Edge(
            path=f"M{CX:.1f} {CY:.1f}L{n.x} {n.y}",
            width=round(0.6 + 2.4 * n.count / top, 2),
            weight=n.count,
            names=n.name,
        )
        for n in nodes
    ]
    pairs = len(order) * (len(order) - 1) // 2
    if len(order) > 4 and len(links) > DENSE_LINKS * pairs:
        note = (
            f"Nearly every pair of these co-authors wrote together ({len(links)} of {pairs} "
            "pairs), as one large author list makes them: the links between them are not drawn."
        )
        return Graph(nodes=nodes, spokes=spokes, edges=[], links_note=note)
    edges = []
    for (a, b), n in sorted(links.items(), key=lambda item: item[1]):
        ax, ay, _ = place[a]
        bx, by, _ = place[b]
        # Bend each chord towards the middle, the more the longer it is.
        mx, my = (ax + bx) / 2, (ay + by) / 2
        qx, qy = CX + (mx - CX) * 0.35, CY + (my - CY) * 0.35
        edges.append(
            Edge(
                path=f"M{ax:.1f} {ay:.1f}Q{qx:.1f} {qy:.1f} {bx:.1f} {by:.1f}",
                width=round(0.8 + 3.2 * n / top_link, 2),
                weight=n,
                names=f"{by_id[a].get('name')} and {by_id[b].get('name')}",
            )
        )
    return Graph(nodes=nodes, spokes=spokes, edges=edges)
