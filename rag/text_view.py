"""The text the injection guard reads (`rag.guard`): untrusted text with its invisible
characters stripped (`strip_invisible`), and the normalised view its patterns are matched
on, mapped back character by character to the text (`matching_view`): look-alikes read as
Latin letters, accents dropped, hyphenation, letter spacing and word-splitting markup
closed up, leetspeak read as letters, every run of whitespace one blank."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Dict, List, Tuple

# Characters that render as nothing (or as a blank) and only hide or split text.
# Category Cf covers zero-width spaces/joiners, soft hyphen, bidi controls, BOM and the
# tag block U+E0000-U+E007F; the rest are invisible fillers of other categories.
_INVISIBLE_EXTRA = {
    "\u034f",  # combining grapheme joiner
    "\u115f",
    "\u1160",
    "\u3164",
    "\uffa0",  # Hangul fillers
    "\u180e",  # Mongolian vowel separator (formerly Cf)
    "\u2800",  # braille pattern blank
}
_KEEP_CONTROLS = {"\n", "\t"}
_TAG_BLOCK = range(0xE0000, 0xE0080)


# A word broken by a hyphen at a line end ("instruc-\ntions").
_HYPHENATED_BREAK = re.compile(r"-(?<=[^\W\d_]-)[ \t]*\n[ \t]*(?=[^\W\d_])")
# Three or more single letters separated by blanks ("I g n o r e"): closed up for matching.
_LETTER_SPACED = re.compile(r"(?<!\S)(?:[^\W\d_][ \t]){2,}[^\W\d_](?!\S)")


@lru_cache(maxsize=1)
def _latin_lookalikes() -> Dict[str, str]:
    """Non-ASCII letters that imitate Latin ones -> the ASCII letters they imitate."""
    from confusable_homoglyphs.confusables import confusables_data

    table: Dict[str, str] = {}
    for char, homoglyphs in confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        latin = [glyph["c"] for glyph in homoglyphs if glyph["c"].isascii() and glyph["c"].isalpha()]
        if latin:
            # Same case first: Greek capital iota looks like "I" and like "l"; it means "I".
            same_case = [letter for letter in latin if letter.isupper() == char.isupper()]
            letter = (same_case or latin)[0]
            # Unicode's table maps "I" to "l" as one shape; a capital that looks so is an I.
            table[char] = "I" if letter == "l" and char.isupper() else letter
    return table


def _is_invisible(char: str) -> bool:
    if char in _KEEP_CONTROLS:
        return False
    if char in _INVISIBLE_EXTRA or ord(char) in _TAG_BLOCK:
        return True
    category = unicodedata.category(char)
    # Cc: control characters (terminal escapes, NUL); Cf: format characters (above);
    # Mn between variation selectors: FE00-FE0F and E0100-E01EF change nothing visible.
    return category in ("Cc", "Cf") or 0xFE00 <= ord(char) <= 0xFE0F or 0xE0100 <= ord(char) <= 0xE01EF


# Every character `_is_invisible` accepts, as code point ranges (Unicode 14, Python 3.11;
# tests/rag/test_injection_set.py checks the table against the running Unicode database).
INVISIBLE_RANGES = [
    (0x0000, 0x0008),
    (0x000B, 0x001F),
    (0x007F, 0x009F),
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE007F),
    (0xE0100, 0xE01EF),
]
# The invisible characters as the inside of a regex character class (`rag.guard` reads runs of them).
INVISIBLE_CLASS = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in INVISIBLE_RANGES)
_INVISIBLE = re.compile("[" + INVISIBLE_CLASS + "]")
_TAG_TEXT = re.compile("[\U000e0020-\U000e007e]")


# Compatibility characters that spell no letter and that a manual means as written: "20 m²",
# "½ turn", "HX-300™". NFKC would make them "m2", "1⁄2" and "TM"; every other compatibility
# character (fullwidth letters and punctuation, ligatures, styled and circled letters) is folded,
# as it could spell an order the patterns must see.
_KEEP_AS_WRITTEN = re.compile(
    r"[\u00b2\u00b3\u00b9\u00bc-\u00be\u2070\u2074-\u2079\u2080-\u2089\u2150-\u215f\u2122\u2120]+"
)


def _nfkc_but_figures(text: str) -> str:
    """NFKC, except the runs of `_KEEP_AS_WRITTEN`, which stay as written."""
    pieces, cursor = [], 0
    for match in _KEEP_AS_WRITTEN.finditer(text):
        pieces += [unicodedata.normalize("NFKC", text[cursor : match.start()]), match.group(0)]
        cursor = match.end()
    pieces.append(unicodedata.normalize("NFKC", text[cursor:]))
    return "".join(pieces)


def strip_invisible(text: str) -> Tuple[str, int, str]:
    """NFKC (figures excepted, `_KEEP_AS_WRITTEN`), line separators as newlines, invisible
    characters removed.

    Returns the cleaned text, how many characters were removed, and what the tag
    characters spelled (ASCII smuggled in the tag block), for the record."""
    normalised = _nfkc_but_figures(text).replace("\r\n", "\n").replace("\r", "\n")
    normalised = normalised.replace("\u2028", "\n").replace("\u2029", "\n")
    smuggled = "".join(chr(ord(char) - 0xE0000) for char in _TAG_TEXT.findall(normalised))
    cleaned = _INVISIBLE.sub("", normalised)
    return cleaned, len(normalised) - len(cleaned), smuggled


def _without(text: str, drops: List[Tuple[int, int]]) -> Tuple[str, List[int]]:
    """`text` with the (sorted, disjoint) spans in `drops` removed, and the origin map."""
    pieces: List[str] = []
    origin: List[int] = []
    cursor = 0
    for start, end in drops:
        pieces.append(text[cursor:start])
        origin.extend(range(cursor, start))
        cursor = end
    pieces.append(text[cursor:])
    origin.extend(range(cursor, len(text)))
    return "".join(pieces), origin


# What the view changes: blank runs other than one plain space, and non-ASCII characters.
_IRREGULAR = re.compile(r"[ \t\n\r\f\v]{2,}|[\t\n\r\f\v]|[^\x00-\x7f]")


# Markup that splits a word without showing: emphasis marks (ig**nore**, ig~~no~~re),
# inline formatting tags (ig<b>nore</b>), a hyphen inside a word (in-structions).
_SPLITTING_MARKUP = re.compile(
    r"[*~`]+|</?(?:b|i|u|s|em|strong|span|font|mark|del|ins|sub|sup|small|big|code|a|tt)\b[^<>]{0,40}>"
    r"|(?<=[^\W\d_])-(?=[^\W\d_])",
    re.IGNORECASE,
)
# Leetspeak: a word that mixes letters with digits or $ @ reads as the letters they stand for.
_LEET = str.maketrans("013457$@", "oieastsa")
_LEET_WORD = re.compile(r"(?=[\w$@]*[^\W\d_])(?=[\w$@]*[0134578$@])[\w$@]{3,}")


def _disjoint(spans: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    merged: List[Tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def matching_view(text: str) -> Tuple[str, List[int]]:
    """The normalised view patterns are matched on, and for each of its characters the
    index of the character in `text` it came from.

    Look-alikes map to Latin letters, accents and other combining marks go, hyphenation
    and letter spacing are closed up, and every run of whitespace is one space (one
    newline when the run holds a line break, for the role-prefix pattern)."""
    drops = [match.span() for match in _HYPHENATED_BREAK.finditer(text)]
    drops += [match.span() for match in _SPLITTING_MARKUP.finditer(text)]
    for match in _LETTER_SPACED.finditer(text):
        drops.extend((index, index + 1) for index in range(match.start(), match.end()) if text[index] in " \t")
    closed, closed_origin = _without(text, _disjoint(drops)) if drops else (text, range(len(text)))
    closed = _LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), closed.replace("_", " "))  # same length
    lookalikes = _latin_lookalikes()
    view: List[str] = []
    origin: List[int] = []
    cursor = 0
    for spot in _IRREGULAR.finditer(closed):
        start, piece = spot.start(), spot.group(0)
        view.append(closed[cursor:start])  # regular text: as it is
        origin.extend(closed_origin[cursor:start])
        cursor = spot.end()
        if piece.isspace():
            view.append("\n" if "\n" in piece else " ")
            origin.append(closed_origin[start])
        elif unicodedata.category(piece) == "Mn":
            continue  # combining marks (underlines, accents) hide nothing a pattern needs
        else:
            mapped = lookalikes.get(piece)
            if mapped is None:
                # Accented Latin letters match as their base letter ("ïgnöre").
                base = unicodedata.normalize("NFKD", piece)[0]
                mapped = base if base.isascii() and base.isalpha() else piece
            view.append(mapped)
            origin.extend([closed_origin[start]] * len(mapped))
    view.append(closed[cursor:])
    origin.extend(closed_origin[cursor:])
    return "".join(view), origin
