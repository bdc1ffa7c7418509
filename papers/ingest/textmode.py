"""TeX's text mode in titles and abstracts, written as the Unicode it stands for.

arXiv's metadata keeps what authors typed: `Schr\\"{o}dinger`, `S\\'emantique`, `{\\it in vivo}`,
`\\emph{not}`, `\\AA`. Those are spellings, not content, so they are turned into the text they
print as when a record is read (harvest and snapshot alike), and every surface (pages, feeds,
the API, search) shows and finds `Schrödinger`. Formulas (`$...$`, `\\(...\\)`, `\\[...\\]`,
`$$...$$`) are left exactly as written: papers.mathtext renders them.
"""

from __future__ import annotations

import re

from ..authors import decode_text_accents

_MATH = re.compile(r"\$\$.+?\$\$|\\\[.+?\\\]|\\\(.+?\\\)|(?<!\\)\$[^$]+?(?<!\\)\$", re.DOTALL)
# {\it words}, {\em words}: a switch inside a group, the group's words kept.
_SWITCH_GROUP = re.compile(r"\{\\(?:it|em|bf|sl|sc|tt|rm|sf|up|md)\s+([^{}$\\]*)\}")
# \emph{words}, \textit{words}, ...: the argument kept.
_FORMAT_COMMAND = re.compile(
    r"\\(?:emph|textit|textbf|textsl|textsc|texttt|textrm|textsf|textup|textmd|textnormal)"
    r"\{([^{}$\\]*)\}"
)
# A switch left without its group ("\it Keywords:"): the switch goes, the words stay.
_BARE_SWITCH = re.compile(r"\\(?:it|em|bf|sl|sc|tt|rm|sf)\b\s*")
_ESCAPED = re.compile(r"\\([&%#_])")
# TeX's control space ("304 \\AA\\ that", "\\CM \\ local"; not a line break's "\\\\ "): one
# space, whatever spaces come before it.
_CONTROL_SPACE = re.compile(r"\s*(?<!\\)\\ ")
# AASTeX's symbols of astronomy: "0\\farcs32" prints as 0.″32, "1\\arcsec" as 1″.
_AAS_SYMBOLS = {
    "arcsec": "″",
    "arcmin": "′",
    "farcs": ".″",
    "farcm": ".′",
    "fdg": ".°",
    "degr": "°",
}
_AAS_SYMBOL = re.compile(r"\\(arcsec|arcmin|farcs|farcm|fdg|degr)(?![A-Za-z])(?:\{\})?")
# AASTeX's \ion{element}{stage}: "\ion{Fe}{2}" prints as Fe II.
_ION = re.compile(r"\\ion\{([A-Z][a-z]?)\}\{(\d{1,2}|[IVX]{1,6})\}")
_ROMAN = (("XC", 90), ("L", 50), ("XL", 40), ("X", 10), ("IX", 9), ("V", 5), ("IV", 4), ("I", 1))
# What an accent leaves behind: `{\"o}` became `{ö}`; BibTeX-style case braces `{B}ayes` too.
_ONE_LETTER_GROUP = re.compile(r"\{([^\W\d_])\}")


def _words(match: re.Match[str]) -> str:
    # A script's argument keeps its braces: "L_{\\rm 1.4 GHz}" is L with "1.4 GHz" below it,
    # not L_1 followed by ".4 GHz".
    before = match.string[match.start() - 1 : match.start()]
    return f"{{{match[1]}}}" if before in ("_", "^") else match[1]


def _roman(number: int) -> str:
    out = ""
    for letters, value in _ROMAN:
        count, number = divmod(number, value)
        out += letters * count
    return out


def _ion(match: re.Match[str]) -> str:
    stage = match[2]
    return f"{match[1]} {_roman(int(stage)) if stage.isdigit() else stage}"


def _text_piece(text: str) -> str:
    text = decode_text_accents(text)
    text = _ION.sub(_ion, text)
    text = _AAS_SYMBOL.sub(lambda m: _AAS_SYMBOLS[m[1]], text)
    text = _SWITCH_GROUP.sub(_words, text)
    text = _FORMAT_COMMAND.sub(_words, text)
    text = _BARE_SWITCH.sub("", text)
    if "\\ " in text:
        text = _CONTROL_SPACE.sub(" ", text)
    text = _ESCAPED.sub(r"\1", text)
    return _ONE_LETTER_GROUP.sub(r"\1", text)


def text_mode_to_unicode(text: str) -> str:
    """`text` with its text-mode TeX (accents, special letters, emphasis, escaped symbols)
    written as Unicode; formulas untouched. Plain text passes unchanged at the cost of one
    `in` test, which keeps the import's hot path fast."""
    if "\\" not in text and "{" not in text:
        return text
    out: list[str] = []
    at = 0
    for formula in _MATH.finditer(text):
        out.append(_text_piece(text[at : formula.start()]))
        out.append(formula.group(0))
        at = formula.end()
    out.append(_text_piece(text[at:]))
    return "".join(out)
