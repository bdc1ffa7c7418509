"""Did you mean (papers.spelling, #43): the words papers write, counted on the database itself
(its own upsert on SQLite and PostgreSQL), and a search's misspelt words corrected by them."""

from __future__ import annotations

import pytest

from papers.models import WrittenWord
from papers.spelling import (
    count_written_words,
    misspelt_words,
    one_edit_away,
    search_spelling,
    spelling_suggestion,
    written_words,
)


def counts() -> dict[str, int]:
    return dict(WrittenWord.objects.values_list("word", "papers"))


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("atention", "attention"),  # a letter left out
        ("dropuot", "dropout"),  # two neighbours swapped
        ("feild", "field"),
        ("coolling", "cooling"),  # a letter doubled
        ("quantm", "quantum"),
        ("convolutonal", "convolutional"),
        ("tensar", "tensor"),  # a letter replaced
    ],
)
def test_one_edit_away_holds_the_word_meant(typed, meant):
    edits = one_edit_away(typed)
    assert meant in edits
    assert typed not in edits
    # Each edit is one: nothing two edits away ("atention" -> "retention").
    assert "retention" not in one_edit_away("atention")


def test_written_words_are_folded_letters_only():
    assert written_words("Schrödinger's CAT-state: 2D x-ray 3He a") == {
        "schrodinger",
        "cat",
        "state",
        "ray",
        "he",
    }


def test_the_count_is_of_papers_and_a_rerun_gives_the_same(paper_factory):
    paper_factory(title="Gravitational waves", abstract="Waves, waves and more waves.")
    paper_factory(title="Gravitational lensing", abstract="Strong lensing of quasars.")
    gone = paper_factory(title="Gravitational collapse", abstract="A deleted paper.")
    gone.is_deleted = True
    gone.save()
    assert count_written_words(batch_size=1) == len(counts())
    first = counts()
    # A paper is one however often it writes a word; a deleted paper is none; bylines count.
    assert first["waves"] == 1
    assert first["gravitational"] == 2
    assert first["lensing"] == 1
    assert "collapse" not in first and "deleted" not in first
    assert first["lovelace"] == 2
    assert count_written_words(batch_size=2) == len(first)
    assert counts() == first
    assert set(WrittenWord.objects.values_list("counting", flat=True)) == set(first.values())


def test_a_word_no_longer_written_leaves_the_vocabulary(paper_factory):
    paper = paper_factory(title="Spreadsheet errors", abstract="")
    count_written_words()
    assert counts()["spreadsheet"] == 1
    paper.title = "Ledger errors"
    paper.save()
    count_written_words()
    assert "spreadsheet" not in counts() and counts()["ledger"] == 1


@pytest.fixture
def written(paper_factory):
    paper_factory(title="Gravitational waves from binary mergers", abstract="Towers of data.")
    paper_factory(title="Gravitational waves and pulsar timing", abstract="A model of noise.")
    paper_factory(title="A model of eigenvectors", abstract="Random model matrices.")
    paper_factory(title="Cellular automata", abstract="A mode of growth.")
    count_written_words()


def test_a_misspelt_word_is_corrected_to_what_papers_write(written):
    suggestion = spelling_suggestion("gravitatonal waves")
    assert suggestion is not None
    assert suggestion.text == "gravitational waves"
    assert suggestion.parts == (("gravitational", True), (" waves", False))
    # In the case it was typed in, other words as typed.
    typed = spelling_suggestion("Gravitatonal WAVES!")
    assert typed is not None and typed.text == "Gravitational WAVES!"
    # The most written of the words one edit away: "model" (2 papers) over "mode" (1).
    assert (s := spelling_suggestion("random modle")) is not None and s.text == "random model"


def test_what_is_not_misspelt_is_left_alone(written, settings):
    # Written by a paper, or a word of English that no paper writes ("towels", one letter
    # from "towers", which one does): no suggestion.
    assert spelling_suggestion("gravitational waves") is None
    assert misspelt_words("towels of data") == []
    assert spelling_suggestion("towels of data") is None
    # Held by the keyword engine as an inflection of a word papers write.
    assert misspelt_words("eigenvector") == []
    # Too short to correct at the settings' length.
    settings.SPELLING_MIN_LENGTH = 6
    assert spelling_suggestion("random modle") is None
    # Nothing counted yet: nothing to correct against.
    WrittenWord.objects.all().delete()
    settings.SPELLING_MIN_LENGTH = 4
    assert spelling_suggestion("gravitatonal waves") is None


def test_a_correction_that_finds_nothing_is_not_suggested(written):
    # "gravitatonal" is one edit from a written word, but no paper holds "zorblat" too.
    assert misspelt_words("gravitatonal zorblat") == ["gravitatonal", "zorblat"]
    assert spelling_suggestion("gravitatonal zorblat") is None


def test_a_search_that_finds_papers_or_names_an_id_gets_none(written):
    assert search_spelling("gravitatonal waves", 0) is not None
    assert search_spelling("gravitatonal waves", 3) is None
    assert search_spelling("arXiv:2401.00001", 0) is None


def test_the_search_page_its_markdown_and_the_api_suggest_it(client, written, settings):
    html = client.get("/search", {"q": "gravitatonal waves", "mode": "keyword"}).content.decode()
    assert (
        '<p class="did-you-mean" role="status">Did you mean '
        '<a href="/search?q=gravitational+waves&amp;mode=keyword">'
        "<b>gravitational</b> waves</a>?</p>"
    ) in html
    followed = client.get("/search", {"q": "gravitational waves", "mode": "keyword"})
    assert "Gravitational waves from binary mergers" in followed.content.decode()
    assert "did-you-mean" not in followed.content.decode()
    markdown = client.get(
        "/search", {"q": "gravitatonal waves"}, HTTP_ACCEPT="text/markdown"
    ).content.decode()
    assert (
        f'Did you mean "gravitational waves"? {settings.SITE_URL}/search?q=gravitational+waves\n'
        in markdown
    )
    api = client.get("/api/v1/search/papers/", {"q": "gravitatonal waves"}).json()
    assert api["count"] == 0 and api["did_you_mean"] == "gravitational waves"
    found = client.get("/api/v1/search/papers/", {"q": "gravitational waves"}).json()
    assert found["count"] == 2 and found["did_you_mean"] is None
    # What the reader typed beside the words stays text.
    quoted = client.get("/search", {"q": 'gravitatonal "waves"'}).content.decode()
    assert "<b>gravitational</b> &quot;waves&quot;</a>?</p>" in quoted


class Died(Exception):
    """A worker that dies part way through a count."""


def test_a_count_cut_short_goes_on_where_its_last_batch_left_it(paper_factory):
    from papers.models import WordCount
    from papers.spelling import word_count_go_on, word_count_start
    from papers.tasks import count_written_words as count_task

    for n in range(5):
        paper_factory(title=f"Spin glass number {n}", abstract="Replica symmetry breaking.")
    count_written_words()
    whole = counts()
    assert whole["spin"] == 5

    def die_after_two(read: int) -> None:
        if read >= 2:
            raise Died

    count = word_count_start()
    with pytest.raises(Died):
        word_count_go_on(count, batch_size=1, progress=die_after_two)
    # The complete count still serves searches meanwhile.
    assert counts() == whole
    position = WordCount.objects.get(pk=count.pk).counted_through
    assert position > 0
    # Delivered again, the task goes on from there: no paper counted twice.
    result = count_task.apply(kwargs={"go_on": True}).get()
    assert result["done"] and result["count"] == count.pk
    assert counts() == whole
    # A stale copy of the count (another link moved it on) writes nothing.
    stale = WordCount.objects.get(pk=count.pk)
    stale.counted_through, stale.finished_at = position, None
    assert word_count_go_on(stale) is False
    assert counts() == whole


def test_beat_starts_no_second_count_while_one_moves(paper_factory):
    from papers.spelling import word_count_start
    from papers.tasks import count_written_words as count_task

    paper_factory(title="Topological insulators", abstract="")
    running = word_count_start()
    assert count_task.apply().get() == {"count": running.pk, "already_running": True}
    assert counts() == {}


def test_a_lookup_takes_any_text_as_words(paper_factory):
    from papers.spelling import papers_writing

    paper_factory(title="Spin chains", abstract="")
    count_written_words()
    odd = ['a"b', "c\\d", "it's", "{x,y}", "", "spin"]
    assert papers_writing(odd) == {"spin": 1}
    assert papers_writing(["chains", *(f"w{i}" for i in range(2000))]) == {"chains": 1}
