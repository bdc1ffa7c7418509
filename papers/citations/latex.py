"""Field text that LaTeX and biber read as the author meant it.

arXiv titles are plain text with TeX in them, often without its dollars ("AdS_3", "E_6/U(1)_N",
"\\chi_{c0,2} decay", "J/\\psi \\to \\gamma"), sometimes with an odd number of them, and with
characters LaTeX reads as commands ("&", "%", "#", "~", "_", "^"). In a BibTeX field, each
formula is kept in balanced `$...$` (the pieces papers.mathtext finds: `$...$`, `$$...$$`,
`\\(...\\)`, `\\[...\\]` and bare commands with their sub- and superscripts); a bare
sub- or superscript in the text ("AdS_3", "Cu^{II}") is set as a formula of its own
("AdS$_3$"; papers.mathtext.text_scripts finds them, as for the pages); every other special
character outside a formula is escaped; Unicode is kept as it is (biber reads UTF-8), and
braces stay (they protect case in BibTeX) once balanced.
"""

from __future__ import annotations

import re

from papers.mathtext import (
    LITERAL_NEWLINE,
    formula_html,
    script_tex,
    segments,
    text_scripts,
)

# Outside formulas: characters LaTeX reads as commands, unless already escaped.
_TEXT_SPECIAL = {
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "$": r"\$",
    "_": r"\_",
    "^": r"\^{}",
    # "z~0.45": arXiv authors mean "about", which LaTeX would typeset as a space.
    "~": r"$\sim$",
}
# A backslash followed by one of these is already a text-mode escape or accent (\&, \', \"o).
_TEXT_ESCAPES = set("&%#$_{}'\"`^~=.,;: \\-")


def balanced_braces(text: str) -> str:
    """The text with every brace that has no partner dropped: BibTeX ends a field at the brace
    that closes it, so one stray brace in a title would swallow or cut the rest of the entry.
    BibTeX counts `\\{` and `\\}` as braces too, so they pair like any other; an unpaired one
    goes with its backslash."""
    unmatched: list[int] = []
    dropped: set[int] = set()
    for index, char in enumerate(text):
        if char == "{":
            unmatched.append(index)
        elif char == "}":
            if unmatched:
                unmatched.pop()
            else:
                dropped.add(index)
    dropped.update(unmatched)
    dropped.update(index - 1 for index in list(dropped) if index and text[index - 1] == "\\")
    return "".join(char for index, char in enumerate(text) if index not in dropped)


def _plain_text(text: str) -> str:
    """Running text, LaTeX-safe: scripts set as formulas, specials escaped, escapes kept."""
    out: list[str] = []
    at = 0
    for match in text_scripts(text):
        out.append(_escaped(text[at : match.start()]))
        out.append(f"${script_tex(match[0])}$")
        at = match.end()
    out.append(_escaped(text[at:]))
    return "".join(out)


def _escaped(text: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            following = text[index + 1 : index + 2]
            if following and following in _TEXT_ESCAPES:
                out.append(text[index : index + 2])
                index += 2
                continue
            out.append(r"\textbackslash{}")
        else:
            out.append(_TEXT_SPECIAL.get(char, char))
        index += 1
    return "".join(out)


def _with_lost_dollar_restored(text: str) -> str:
    """A title with an odd number of `$` whose first formula lost its opening one
    ("\\lim_{x\\to 0}\\frac{\\sin x}x$ and ... $\\pi$"): the dollar goes back at the start when
    the text before the first `$` reads as one formula; otherwise the text is left as it is,
    and the stray `$` is escaped as text."""
    unescaped = [m.start() for m in re.finditer(r"(?<!\\)\$", text)]
    if len(unescaped) % 2 == 0:
        return text
    head = text[: unescaped[0]]
    if head.strip() and "\\" in head and formula_html(head.strip()) is not None:
        return "$" + text
    return text


def latex_safe(text: str) -> str:
    """`text` as a BibTeX field value that LaTeX typesets without an error."""
    text = " ".join(LITERAL_NEWLINE.sub(" ", text or "").split())
    text = _with_lost_dollar_restored(text)
    out: list[str] = []
    for source, tex, _display in segments(text):
        if not tex:
            out.append(_plain_text(source))
        elif source == tex and formula_html(tex) is None:
            # A bare command that is no formula (\emph, an accent, a typo): text, shown as
            # written.
            out.append(_escaped(source))
        else:
            formula = balanced_braces(tex.replace("$", ""))
            out.append(f"${formula.strip()}$")
    return balanced_braces("".join(out))
