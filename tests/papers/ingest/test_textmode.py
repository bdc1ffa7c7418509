"""Text-mode TeX in titles and abstracts is read as the Unicode it prints as; formulas stay TeX.
The cases are real titles of the bundled sample (papers/sample/arxiv-sample.jsonl.gz)."""

from __future__ import annotations

import gzip
import json

import pytest

from papers.ingest.importing import snapshot_import
from papers.ingest.snapshot import parse_snapshot_line
from papers.ingest.textmode import text_mode_to_unicode
from papers.models import Paper


@pytest.mark.parametrize(
    ("typed", "printed"),
    [
        (r"Partial sums of the M{\"o}bius function", "Partial sums of the Möbius function"),
        (
            r"S\'emantique des d\'eterminants dans un cadre richement typ\'e",
            "Sémantique des déterminants dans un cadre richement typé",
        ),
        (r"Curve Counting \`a la G\"ottsche", "Curve Counting à la Göttsche"),
        (
            r"Charged particle interferometry in Pleba\'{n}ski--Demia\'{n}ski black hole",
            "Charged particle interferometry in Plebański--Demiański black hole",
        ),
        (
            r"The magnetic groundstate of an experimental $S=1/2$ kagom\'{e} antiferromagnet",
            "The magnetic groundstate of an experimental $S=1/2$ kagomé antiferromagnet",
        ),
        (r"Vari\'et\'es homog\`enes sous $\PGL_n$", r"Variétés homogènes sous $\PGL_n$"),
        (r"{\it in vivo} and \emph{in vitro}, 5\% \& 10 \AA", "in vivo and in vitro, 5% & 10 Å"),
        (r"a formula $\"{x} + \'y$ kept as written", r"a formula $\"{x} + \'y$ kept as written"),
        ("plain text", "plain text"),
        # 0705.0145, 0705.0723, 0801.4379: the space after a letter command is kept, an
        # accent's argument may follow a space, a script's styled argument stays the script's.
        (r"radius $\sim$125 \AA and using", r"radius $\sim$125 Å and using"),
        (r"M\" obius maps on K\" ahler manifolds", "Möbius maps on Kähler manifolds"),
        (r"detected (L_{\rm 1.4 GHz}~10^{32} erg/s)", "detected (L_{1.4 GHz}~10^{32} erg/s)"),
        (r"SU(3)_{\rm colour} and N^{\it eff}", "SU(3)_{colour} and N^{eff}"),
        # 0705.0096: AASTeX's symbols and ions.
        (
            r"the \ion{Fe}{1} 630.2 nm lines at 0\farcs32 and 1\arcsec; \ion{C}{IV} at 5\fdg2",
            "the Fe I 630.2 nm lines at 0.″32 and 1″; C IV at 5.°2",
        ),
        (r"\ion{Fe}{14} and $\ion{Fe}{2}$", r"Fe XIV and $\ion{Fe}{2}$"),
        # 1302.1286, 1072: a control space is a space (a line break's "\\" is not one).
        (r"304 \AA\ loops \\ a J/\psi\ meson", r"304 Å loops \\ a J/\psi meson"),
    ],
)
def test_text_mode_is_read_as_unicode_and_formulas_stay(typed, printed):
    assert text_mode_to_unicode(typed) == printed


def test_imported_titles_and_abstracts_carry_no_text_mode_tex(sample_path, tmp_path, db, client):
    with gzip.open(sample_path, "rt") as lines:
        wanted = [line for line in lines if json.loads(line)["id"] in {"0705.0723", "1302.1422"}]
    assert len(wanted) == 2
    records = [parse_snapshot_line(line) for line in wanted]
    assert {r.title for r in records} == {
        "Partial sums of the Möbius function",
        "Sémantique des déterminants dans un cadre richement typé",
    }
    path = tmp_path / "two-papers.jsonl"
    path.write_text("".join(wanted))
    snapshot_import(path)
    paper = Paper.objects.get(arxiv_id="0705.0723")
    page = client.get(paper.get_absolute_url(), follow=True).content.decode()
    assert "Möbius" in page and '{\\"o}' not in page
