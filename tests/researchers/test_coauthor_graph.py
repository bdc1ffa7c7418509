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
