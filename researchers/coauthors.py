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
from dataclasses import dataclass, replace


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
# Labels that do not touch, up to one a node; the names left out are in their tooltips and the
# list below (both name every co-author).
LABELLED_NODES = GRAPH_NODES
# Label sizes in the graph's own units (site.css: 11 on a wide screen; on a phone the 640-unit
# drawing is shown about 350 px wide, so its labels are drawn at 19 to read as ~10 px, fewer
# and shorter).
LABEL_SIZE, PHONE_LABEL_SIZE = 11, 19
PHONE_LABEL_CHARS = 14
# A chord set this dense says nothing (one large author list makes every pair co-authors: a
# complete-graph "sunburst"); the graph then shows the spokes alone and says why.
DENSE_LINKS = 0.6


@dataclass(frozen=True)
class Node:
    id: int
    name: str
    label: str
    url: str
    # The shorter label a phone shows ("" for none: it would touch a stronger one's).
    phone_label: str
    count: int
    x: float
    y: float
    r: float
    lx: float
    ly: float
    anchor: str
    # A phone's larger labels sit lower below the circle still.
    phone_ly: float = 0.0


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
    strength = {cid: (-counts[cid], n) for n, cid in enumerate(c["id"] for c in shown)}
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
                label=_shortened(name, LABEL_CHARS),
                phone_label=_shortened(name, PHONE_LABEL_CHARS),
                url=coauthor_path(c),
                count=counts[cid],
                x=round(x, 1),
                y=round(y, 1),
                r=round(3.5 + 4.5 * counts[cid] / top, 1),
                lx=round(CX + (RADIUS + 14) * cos, 1),
                # Labels below the circle sit lower, so that neighbours' labels do not touch.
                ly=round(CY + (RADIUS + 14) * sin + (4 + 6 * sin if sin > 0 else 4), 1),
                anchor="start" if cos > 0.12 else "end" if cos < -0.12 else "middle",
                phone_ly=round(CY + (RADIUS + 14) * sin + (4 + 14 * sin if sin > 0 else 4), 1),
            )
        )
    nodes = _labels_that_fit(nodes, strength)
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


def _shortened(name: str, chars: int) -> str:
    return name if len(name) <= chars else name[: chars - 1] + "…"


def _label_box(node: Node, label: str, size: float, y: float) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of a label, from an average glyph of 0.56 em plus a margin."""
    width = len(label) * size * 0.56 + 2
    left = (
        node.lx
        if node.anchor == "start"
        else node.lx - width
        if node.anchor == "end"
        else node.lx - width / 2
    )
    return (left, y - size * 0.9, left + width, y + size * 0.3)


def _labels_that_fit(nodes: list[Node], strength: dict[int, tuple[int, int]]) -> list[Node]:
    """Labels for the co-authors with most shared papers first: a label that would touch a
    stronger one's moves one line further out, and failing that goes without (its tooltip and
    the list still name it). So the strongest co-author is always labelled, wherever the circle
    puts them."""
    kept: dict[str, dict[int, tuple[str, float]]] = {"label": {}, "phone_label": {}}
    for field, size in (("label", LABEL_SIZE), ("phone_label", PHONE_LABEL_SIZE)):
        boxes: list[tuple[float, float, float, float]] = []
        for node in sorted(nodes, key=lambda n: strength[n.id]):
            if len(kept[field]) >= LABELLED_NODES:
                break
            label = getattr(node, field)
            base = node.ly if field == "label" else node.phone_ly
            outward = -1 if node.y < CY else 1
            for y in (base + outward * size * 1.25 * k for k in range(3)):
                box = _label_box(node, label, size, y)
                if box[0] < 0 or box[2] > WIDTH or box[1] < 0 or box[3] > HEIGHT:
                    continue
                if not any(
                    box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3]
                    for b in boxes
                ):
                    boxes.append(box)
                    kept[field][node.id] = (label, round(y, 1))
                    break
    return [
        replace(
            n,
            label=kept["label"].get(n.id, ("", n.ly))[0],
            ly=kept["label"].get(n.id, ("", n.ly))[1],
            phone_label=kept["phone_label"].get(n.id, ("", n.phone_ly))[0],
            phone_ly=kept["phone_label"].get(n.id, ("", n.phone_ly))[1],
        )
        for n in nodes
    ]
