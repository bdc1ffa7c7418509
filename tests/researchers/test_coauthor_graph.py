"""The co-author graph says something: a large author list (every pair of co-authors on one
paper) is not drawn as a complete-graph sunburst, and labels around the circle never crowd."""

from __future__ import annotations

import itertools

from researchers.coauthors import LABELLED_NODES, coauthor_graph


def _coauthors(size: int, pairs: list[tuple[int, int]]) -> list[dict]:
    links: dict[int, list[list[int]]] = {i: [] for i in range(1, size + 1)}
    for a, b in pairs:
        links[a].append([b, 1])
        links[b].append([a, 1])
    return [
        {"id": i, "name": f"Coauthor Number {i}", "count": 1, "links": links[i]}
        for i in range(1, size + 1)
    ]


def test_one_thirty_one_author_paper_draws_spokes_and_says_why_no_chords():
    everyone = list(itertools.combinations(range(1, 31), 2))  # 30 co-authors, all together
    graph = coauthor_graph(_coauthors(30, everyone))
    assert graph is not None and len(graph.nodes) == 24
    assert graph.edges == [] and "not drawn" in graph.links_note
    labelled = [n for n in graph.nodes if n.label]
    assert 0 < len(labelled) <= LABELLED_NODES
    assert all(n.name for n in graph.nodes)  # every node keeps its name for the tooltip


def test_a_sparse_graph_keeps_its_chords_and_every_label():
    graph = coauthor_graph(_coauthors(8, [(1, 2), (2, 3), (5, 6)]))
    assert graph is not None and len(graph.edges) == 3 and graph.links_note == ""
    assert all(n.label for n in graph.nodes)


def _boxes(graph, field: str, size: float, y_field: str) -> list[tuple[float, ...]]:
    from researchers.coauthors import _label_box

    return [
        _label_box(n, getattr(n, field), size, getattr(n, y_field))
        for n in graph.nodes
        if getattr(n, field)
    ]


def test_the_strongest_coauthors_are_labelled_wherever_the_circle_puts_them():
    # As on I. Sommerville's demo page: one co-author of 6 papers among 23 of one paper each,
    # linked so that the strong one sits among one-paper co-authors (it used to lose its label
    # to every other node's).
    pairs = [(1, n) for n in range(2, 24)]
    coauthors = _coauthors(24, pairs)
    coauthors[0]["count"] = 6
    coauthors[0]["name"] = "David Greenwood"
    coauthors[1]["count"] = 3
    for position in range(24):  # wherever the strong one lands on the circle
        rotated = coauthors[position:] + coauthors[:position]
        graph = coauthor_graph(rotated)
        assert graph is not None
        by_name = {n.name: n for n in graph.nodes}
        assert by_name["David Greenwood"].label == "David Greenwood"
        assert by_name["David Greenwood"].phone_label.startswith("David Greenw")
        assert by_name["Coauthor Number 2"].label and by_name["Coauthor Number 2"].phone_label
        from researchers.coauthors import LABEL_SIZE, PHONE_LABEL_SIZE, WIDTH

        for field, size, y in (
            ("label", LABEL_SIZE, "ly"),
            ("phone_label", PHONE_LABEL_SIZE, "phone_ly"),
        ):
            boxes = _boxes(graph, field, size, y)
            assert 0 < len(boxes) <= LABELLED_NODES
            for a, b in itertools.combinations(boxes, 2):  # no two labels touch
                assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])
            assert all(0 <= box[0] and box[2] <= WIDTH for box in boxes)
