"""TeX in titles and abstracts, shown as MathML rendered on the server.

arXiv titles and abstracts are plain text with TeX math between `$...$` (sometimes `$$...$$`,
`\\(...\\)`, `\\[...\\]`). Each formula is converted by latex2mathml, then rebuilt from an allowlist
of MathML elements and attributes: the converter copies `\\text{...}` and `\\href{...}` through
as they are, so its output is never trusted as it stands. A formula that does not convert, or
converts into anything outside the allowlist, is shown as its escaped source. Text outside the
formulas is always escaped.

An author's own macro (`\\GL`, `\\D`: defined in their paper, unknown to the converter) is
written upright as its name (`\\mathrm{GL}`) before a formula is given up as source: the name
reads better than the raw TeX. Braces in running text are BibTeX's case protection
("{\\beta} Pictoris b"), shown without them.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from functools import lru_cache
from html import escape
from typing import TYPE_CHECKING

from django.utils.safestring import SafeString, mark_safe
from latex2mathml.converter import convert
from pylatexenc.latex2text import LatexNodes2Text

from . import conversions

if TYPE_CHECKING:
    from wovepaper.lib.search.highlight import QueryWords

MATHML_NS = "{http://www.w3.org/1998/Math/MathML}"
ELEMENTS = frozenset(
    {
        "math",
        "mrow",
        "mi",
        "mn",
        "mo",
        "ms",
        "mtext",
        "mspace",
        "msub",
        "msup",
        "msubsup",
        "mfrac",
        "msqrt",
        "mroot",
        "mstyle",
        "mpadded",
        "mphantom",
        "menclose",
        "munder",
        "mover",
        "munderover",
        "mtable",
        "mtr",
        "mtd",
        "mmultiscripts",
        "mprescripts",
        "none",
        "mfenced",
    }
)
ATTRIBUTES = frozenset(
    {
        "display",
        "mathvariant",
        "stretchy",
        "fence",
        "separator",
        "lspace",
        "rspace",
        "accent",
        "accentunder",
        "displaystyle",
        "scriptlevel",
        "linethickness",
        "columnalign",
        "columnspacing",
        "rowspacing",
        "columnlines",
        "rowlines",
        "frame",
        "notation",
        "width",
        "height",
        "depth",
        "minsize",
        "maxsize",
        "movablelimits",
        "symmetric",
        "largeop",
        "form",
        "open",
        "close",
        "separators",
    }
)
# Shorthands that abstracts use as if they were standard (authors define them in their papers)
# and whose meaning is not in doubt, rewritten to standard TeX before conversion; anything else
# unknown falls back to the source. Measured on the bundled sample (docs/pages-and-api.md,
# Public pages): the formulas that still fail use macros whose meaning only their paper
# says (\fa, \p, \M, ...).
_BLACKBOARD = "RCNZQF"
MACROS = {
    **{letter: rf"\mathbb{{{letter}}}" for letter in "RCNZQ"},  # \R: the reals, ...
    **{letter * 2: rf"\mathbb{{{letter}}}" for letter in _BLACKBOARD},  # \RR
    **{f"set{letter}": rf"\mathbb{{{letter}}}" for letter in _BLACKBOARD},  # \setR
    **{f"I{letter}": rf"\mathbb{{{letter}}}" for letter in "RCNZQ"},  # \IR
    "la": r"\langle",
    "ra": r"\rangle",
    "eps": r"\epsilon",
    "veps": r"\varepsilon",
    "vep": r"\varepsilon",
    "vp": r"\varphi",
    "Om": r"\Omega",
    "om": r"\omega",
    "lam": r"\lambda",
    "msun": r"M_\odot",  # the Sun's mass
    # Old and astronomers' spellings of standard symbols.
    "lsim": r"\lesssim",
    "gsim": r"\gtrsim",
    "dag": r"\dagger",
    "AA": r"\text{Å}",  # TeX's Ångström
    "ensuremath": "",  # \ensuremath{x} is x, inside math already
    "sl": r"\it",
    # Operators written as macros of their own name.
    **{
        name: rf"\operatorname{{{name}}}"
        for name in ("Aut", "End", "Hom", "Tr", "tr", "Rank", "rank", "Ker", "Span", "diag")
    },
    **{name: rf"\mathrm{{{name}}}" for name in ("GL", "SL", "SO", "SU", "PSL")},
    # Units as macros (astronomy and particle physics), set upright.
    **{
        unit: rf"\,\mathrm{{{unit}}}"
        for unit in ("eV", "keV", "MeV", "GeV", "TeV", "kHz", "MHz", "GHz", "pc", "kpc", "Mpc")
    },
}
_MACRO = re.compile(r"\\(" + "|".join(sorted(MACROS, key=len, reverse=True)) + r")(?![A-Za-z])")
# Plain TeX's `{n \choose k}`, which latex2mathml does not read: LaTeX's \binom{n}{k}.
_CHOOSE = re.compile(r"\{([^{}]*)\\choose(?![A-Za-z])([^{}]*)\}")


def standard_tex(tex: str) -> str:
    """The formula with the shorthands above written in standard TeX."""
    tex = _CHOOSE.sub(lambda m: rf"\binom{{{m[1].strip()}}}{{{m[2].strip()}}}", tex)
    return _MACRO.sub(lambda m: MACROS[m[1]], tex)


# Commands of running text, whose braced argument is words or a reference, never a formula's:
# written without dollars they stay text ("\\cite{x}" as written), where any other command
# takes its braced arguments into the formula ("\\sqrt{2}", "\\frac{a}{b}", "\\hat{x}").
_TEXT_COMMANDS = (
    r"(?:emph|text[a-z]*|mbox|hbox|underline|cite[a-z]*|ref|eqref|label|url|href|footnote"
    r"|ion[A-Za-z]*)"
)

# Formulas longer than this are shown as source: a runaway `$` would otherwise swallow a
# paragraph into one giant formula.
MAX_FORMULA = 400

# Display math first; inline `$...$` as TeX reads it, spaces inside allowed (arXiv authors
# write "$ W_R, Z_R$" and "$x \tau $", and arXiv's own pages show them as formulas), with
# guards for text where the content holds no TeX (a backslash, script or brace): then no
# digit right after the closing dollar ("costs $5 and $10" stays text, while "$\sim$150 G"
# is a formula) and a space after the opening one only before a relation, so that a stray
# dollar ("\frac{\sin x}{x}$ and the definition of $\pi$", the source missing its first
# one) does not make a formula of the words after it.
# Last, a command written without dollars, as many physics titles do ("\Lambda_b^0 baryon",
# "J/\psi"), with its braced arguments ("\sqrt{2}"; not those of running text's commands,
# _TEXT_COMMANDS) and its sub- and superscripts: MathML when it converts, plain text when not.
_MATH = re.compile(
    # Every formula starts with one of these two: the scan skips to them.
    r"(?=[$\\])(?:"
    r"\$\$(?P<dd>.+?)\$\$"
    r"|\\\[(?P<bd>.+?)\\\]"
    r"|\\\((?P<bi>.+?)\\\)"
    r"|(?<![\\$])\$(?P<dt>(?=[^$]*?[\\^_{}])\s*[^\s$](?:[^$]*?[^\\$])?)\$(?!\$)"
    r"|(?<![\\$])\$(?P<di>(?:\s+(?=[^$]*?[=<>]))?[^\s$](?:[^$]*?[^\\$])?)\$(?![\d$])"
    r"|(?P<bare>\\(?:(?!" + _TEXT_COMMANDS + r"(?![A-Za-z]))[A-Za-z]+(?:\{[^{}$]*\})*|[A-Za-z]+)"
    r"(?:[_^](?:\{[^{}$]*\}|[A-Za-z0-9+\-*'])+)*))",
    re.DOTALL,
)


def segments(text: str) -> list[tuple[str, str, bool]]:
    """(source, tex, display) pieces: tex is empty for plain text, and equal to the source for
    a command written without delimiters."""
    return list(_pieces(text))


def _pieces(text: str) -> Iterator[tuple[str, str, bool]]:
    # As segments, one piece at a time: a reader that stops early (the opening words of an
    # abstract) leaves the rest of the text unscanned.
    if "$" not in text and "\\" not in text:
        # Every formula starts with one of the two (most abstracts have neither), and the
        # pattern's scan for them was most of a search snippet's time.
        if text:
            yield (text, "", False)
        return
    at = 0
    for match in _MATH.finditer(text):
        if match.start() > at:
            yield (text[at : match.start()], "", False)
        tex = next(filter(None, match.group("dd", "bd", "bi", "dt", "di", "bare")), "")
        yield (match.group(0), tex, bool(match["dd"] or match["bd"]))
        at = match.end()
    if at < len(text):
        yield (text[at:], "", False)


def _serialise(element: ET.Element, out: list[str]) -> None:
    tag = element.tag.removeprefix(MATHML_NS)
    if tag not in ELEMENTS:
        raise ValueError(f"not allowed: {tag}")
    text = element.text or ""
    if "\\" in text:
        raise ValueError("unconverted command")  # latex2mathml keeps unknown commands as text
    attrs = "".join(
        f' {k}="{escape(v)}"' for k, v in sorted(element.attrib.items()) if k in ATTRIBUTES
    )
    out.append(f"<{tag}{attrs}>{escape(text)}")
    for child in element:
        _serialise(child, out)
        tail = child.tail or ""
        if "\\" in tail:
            raise ValueError("unconverted command")
        out.append(escape(tail))
    out.append(f"</{tag}>")


def _mathml(tex: str, display: bool) -> str | None:
    try:
        root = ET.fromstring(convert(tex, display="block" if display else "inline"))
        out: list[str] = []
        _serialise(root, out)
    except Exception:  # the converter raises many kinds; any of them means "show the source"
        return None
    return "".join(out)


@conversions.kept("formula")
def formula_html(tex: str, display: bool = False) -> str | None:
    """MathML for one formula, or None when it does not convert cleanly."""
    if len(tex) > MAX_FORMULA:
        return None
    html = _mathml(standard_tex(tex), display)
    if html is None:
        return None
    alt = escape(" ".join(tex.split()))
    return html.replace("<math", f'<math alttext="{alt}"', 1)


# The converter copies a command it does not know into its output as text.
_UNKNOWN = re.compile(r"\\([A-Za-z]+)")


@lru_cache(maxsize=8192)
def readable_tex(tex: str) -> str:
    """The formula in standard TeX with every command the converter does not know written
    upright as its name: `\\GL_n(\\D)` → `\\mathrm{GL}_n(\\mathrm{D})`."""
    tex = standard_tex(tex)
    try:
        unknown = set(_UNKNOWN.findall(convert(tex)))
    except Exception:  # a formula that does not parse has no command list to read
        return tex
    if not unknown:
        return tex
    return re.sub(
        r"\\([A-Za-z]+)", lambda m: rf"\mathrm{{{m[1]}}}" if m[1] in unknown else m[0], tex
    )


@conversions.kept("readable")
def readable_formula_html(tex: str, display: bool = False) -> str | None:
    """As formula_html, but an author's own macros are shown upright as their names rather
    than the formula given up as source."""
    html = formula_html(tex, display)
    if html is not None or len(tex) > MAX_FORMULA:
        return html
    upright = readable_tex(tex)
    if upright == standard_tex(tex):
        return None
    html = _mathml(upright, display)
    if html is None:
        return None
    alt = escape(" ".join(tex.split()))
    return html.replace("<math", f'<math alttext="{alt}"', 1)


# A sub- or superscript written in running text, without dollars: "AdS_3", "Cu^{II}", "T_c".
SCRIPT_RUN = re.compile(r"(?:[_^](?:\{[^{}$]*\}|[A-Za-z0-9+\-*'])+)")
_AFTER_BASE = re.compile(r"[\w)\]}]")
_WEB_ADDRESS = re.compile(r"\S*://\S*")
# A script of several characters without braces: "s_NN" means s with NN below, not TeX's
# N below and N after it.
_BARE_SCRIPT = re.compile(r"([_^])([A-Za-z0-9+\-*']{2,})")


def text_scripts(text: str) -> Iterator[re.Match[str]]:
    """The sub- and superscripts of running text: only those that follow a letter, digit or
    bracket ("T_c", "(1)_N"; not "_" alone or "x ^ y"), never inside a web address."""
    addresses = [m.span() for m in _WEB_ADDRESS.finditer(text)] if "://" in text else []
    for match in SCRIPT_RUN.finditer(text):
        if match.start() == 0 or not _AFTER_BASE.match(text[match.start() - 1]):
            continue
        if any(start <= match.start() < end for start, end in addresses):
            continue
        yield match


def script_tex(script: str) -> str:
    """A script of running text as TeX, each script of several characters in braces."""
    return _BARE_SCRIPT.sub(r"\1{\2}", script)


@conversions.kept("script")
def _script_html(script: str) -> str | None:
    # An empty base ({}) carries the script: the letters before it stay text.
    html = _mathml("{}" + script_tex(script), False)
    if html is None:
        return None
    return html.replace("<math", f'<math alttext="{escape(script)}"', 1)


# A newline that a source wrote as the two characters "\\n" ("Cold\\n Starts", from OpenAlex).
LITERAL_NEWLINE = re.compile(r"\\n(?![A-Za-z])")


# A brace in running text protects case for BibTeX ("{\beta} Pictoris b"); an escaped one
# is the brace itself.
_TEXT_BRACE = re.compile(r"\\([{}])|[{}]")


def _shown_text(text: str) -> str:
    # TeX's thin space between a number and its unit ("1.1\,fb") is written outside the math.
    return _TEXT_BRACE.sub(lambda m: m[1] or "", text).replace("\\,", "\u202f")


def _text_html(text: str) -> str:
    if "_" not in text and "^" not in text:
        return escape(_shown_text(text))
    out: list[str] = []
    at = 0
    for match in text_scripts(text):
        html = _script_html(match[0])
        if html is not None:
            out += [escape(_shown_text(text[at : match.start()])), html]
            at = match.end()
    out.append(escape(_shown_text(text[at:])))
    return "".join(out)


@lru_cache(maxsize=4096)
def conversions_of(text: str) -> tuple[conversions.Key, ...]:
    """The conversions rendering `text` whole may ask for (papers.conversions' keys), found
    without converting: each formula's, and each sub- or superscript's of running text. Kept
    per text: finding them costs about a third of rendering the text from converted formulas."""
    keys: list[conversions.Key] = []
    for source, tex, display in _pieces(text):
        if tex:
            keys.append(("formula" if source == tex else "readable", tex, display))
        elif "_" in source or "^" in source:
            keys += [("script", match[0], False) for match in text_scripts(source)]
    return tuple(keys)


def formulas_shared(texts: Iterable[str]) -> AbstractContextManager[None]:
    """Around the rendering of `texts` (a page's titles and abstracts): their conversions read
    from, and written to, the cache every web process shares (papers.conversions)."""
    return conversions.shared_for(key for text in texts if text for key in conversions_of(text))


def _after_command(pieces: Iterator[tuple[str, str, bool]]) -> Iterator[tuple[str, str, bool]]:
    """The pieces with the text that follows a bare command shown as written (tex "" marks
    it as text, display True that its braces stay): a command that does not convert
    (\\emph{old}, \\cite{x}) keeps its argument's braces, or it would read as \\emphold."""
    kept = False
    for source, tex, display in pieces:
        if not tex and kept:
            yield source, "", True
        else:
            yield source, tex, display
        kept = bool(tex) and source == tex and formula_html(tex, display) is None


def _piece_html(source: str, tex: str, display: bool) -> str:
    if not tex:
        return escape(source) if display else _text_html(source)
    if source == tex and LITERAL_NEWLINE.fullmatch(source):
        return " "
    if source == tex:
        # A bare command is a formula only when it converts as it stands: \emph, \cite, an
        # accent or a word after a backslash would read worse upright.
        html = formula_html(tex, display)
    else:
        html = readable_formula_html(tex, display)
    if html is not None:
        return html
    # A bare command that does not convert (\emph, \cite, an accent) is just text.
    return escape(source) if source == tex else f'<span class="tex">{escape(source)}</span>'


# Formulas read as Unicode text: \alpha as α, \to as →, sub- and superscripts as _ and ^.
_AS_TEXT = LatexNodes2Text(math_mode="text")


def plain_text(text: str) -> str:
    """The text as it reads, for places that take no markup (the browser tab's title, meta
    tags): braces of running text dropped, formulas as Unicode text, an author's own macros as
    their names; a formula that cannot be read stays as its source."""
    out: list[str] = []
    for source, tex, as_written in _after_command(_pieces(text or "")):
        if not tex:
            out.append(source if as_written else _shown_text(source))
            continue
        if source == tex and LITERAL_NEWLINE.fullmatch(source):
            out.append(" ")
            continue
        if source == tex and formula_html(tex) is None:
            out.append(source)  # as on the page: a bare command that is no formula
            continue
        try:
            read = _AS_TEXT.latex_to_text(readable_tex(tex))
        except Exception:  # pylatexenc gives up on some malformed TeX: the source then
            read = source
        # pylatexenc writes a command whose arguments are missing as "%s" placeholders.
        out.append(source if "%s" in read or not read.strip() else read)
    return " ".join("".join(out).split())


# Words of a passage shown before its first highlighted word.
LEAD_IN = 8
_NON_SPACE = re.compile(r"\S+")


def tex_html(text: str) -> SafeString:
    """Escaped text with its formulas as MathML."""
    return mark_safe("".join(_piece_html(*piece) for piece in _after_command(_pieces(text or ""))))


@lru_cache(maxsize=64)
def _first_words(count: int) -> re.Pattern[str]:
    """A text's first `count` words, and the spaces before and after them."""
    return re.compile(rf"\s*(?:\S+\s*){{{count}}}")


def tex_html_words(text: str, limit: int) -> SafeString:
    """As tex_html, cut after `limit` words; a formula counts as one word and is never cut."""
    out: list[str] = []
    left = limit
    for source, tex, display in _after_command(_pieces(text or "")):
        if tex:
            out.append(_piece_html(source, tex, display))
            left -= 1
        else:
            # The words wanted with the spaces after them, in one match: what follows is
            # left out.
            count = len(source.split())
            if count < left:
                kept, left = source, left - count
            else:
                kept, left = _first_words(left).match(source).group(), 0  # type: ignore[union-attr]
            out.append(escape(kept) if display else _text_html(kept))
        if left <= 0:
            out.append(" …")
            break
    return mark_safe("".join(out).replace("  …", " …"))


def tex_html_passage(text: str, words: QueryWords, limit: int) -> SafeString:
    """As tex_html_words, but about `limit` words around the passage that holds most of the
    query's `words`, each of them in <mark>; "…" where text is left out. Every piece of text
    is escaped before it is wrapped, so the only markup added is the <mark> tags (and the
    formulas' MathML). The opening words, as tex_html_words, when no word matches."""
    text = text or ""
    found = [start for start, _ in words.spans(text)]
    if not found:
        return tex_html_words(text, limit)
    # Found in C-speed passes over the whole abstract; only the passage is rendered (escaping
    # every word of an abstract cost five times the rest). Words here are runs of non-space.
    starts = [m.start() for m in _NON_SPACE.finditer(text)]
    hits = sorted({bisect_right(starts, at) - 1 for at in found})
    # The window of `limit` words with the most matches (the first such), opened a few words
    # before its first match so that the passage reads from a little before it.
    best, best_count = hits[0], 0
    for first in hits:
        count = bisect_left(hits, first + limit) - bisect_left(hits, first)
        if count > best_count:
            best, best_count = first, count
    first_word = max(0, best - LEAD_IN)
    last_word = min(len(starts), first_word + limit) - 1
    low = starts[first_word]
    high = _NON_SPACE.match(text, starts[last_word]).end()  # type: ignore[union-attr]
    for formula in _MATH.finditer(text):  # a formula is shown whole or not at all
        if formula.start() >= high:
            break  # the rest lie past the passage
        if formula.start() < low < formula.end():
            low = formula.start()
        if formula.start() < high < formula.end():
            high = formula.end()
    shown = "".join(
        _piece_html(source, tex, display) if tex or display else _marked_html(source, words)
        for source, tex, display in _after_command(_pieces(text[low:high]))
    )
    before = "… " if low > 0 else ""
    after = " …" if text[high:].strip() else ""
    return mark_safe(f"{before}{shown}{after}")  # noqa: S308


def _marked_html(part: str, words: QueryWords) -> str:
    html, at = [], 0
    for start, end in words.spans(part):
        html.append(_text_html(part[at:start]))
        html.append(f"<mark>{_text_html(part[start:end])}</mark>")
        at = end
    html.append(_text_html(part[at:]))
    return "".join(html)
