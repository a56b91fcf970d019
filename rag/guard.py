"""Untrusted text (retrieved chunks, file names, teammates' messages, tool output) is
neutralised before it reaches a prompt: invisible characters are stripped, and
prompt-injection patterns are matched on a normalised view of the text and replaced
by a marker in the text itself.

The normalised view is what defeats the cheap evasions: NFKC (full-width and other
compatibility forms), no zero-width characters, soft hyphens, Unicode tag characters
or combining marks, Cyrillic/Greek look-alikes mapped to the Latin letters they
imitate (Unicode's confusables table, from `confusable_homoglyphs`), line breaks and
hyphenation joined, letter-spaced words ("I g n o r e") closed up, markup that splits a
word (``ig**nore**``, ``ig<b>nore</b>``, ``in-structions``) dropped, underscores read as
spaces and leetspeak ("1gn0r3") read as letters. Besides fixed phrases the patterns
recognise instruction-like sentences: overrides in other languages and paraphrased
("set aside what you were told"), orders about the output ("write only X", "in every
section write X", "the assistant must ..."), role lines (also in a table cell or an
``### Instruction:`` block) and fake teammate messages ("Message from LeadArchitect:").
Every match is
mapped back to its span in the text, so only the injection is replaced and benign
text (Russian, Greek symbols, "ignore the noise term") stays as written.

Pattern matching cannot make injected text harmless in general; prompts also wrap
untrusted text in data blocks (`agents_llm.prompts.data_block`) that the model is
told to treat as data. Every neutralised span is recorded, so a trace shows what a
document tried to do.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
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

_INSTRUCTION_NOUNS = (
    r"(?:instructions?|prompts?|rules|directions|guidelines|directives|context|messages?|"
    r"commands?|orders|tasks?|everything)"
)
_EARLIER = r"(?:previous|prior|above|earlier|preceding|foregoing|former)"

# (kind, pattern), matched on the normalised view. Each match becomes a marker that no
# pattern matches.
_INJECTION_PATTERNS: List[Tuple[str, re.Pattern]] = [
    (
        "instruction_override",
        re.compile(
            r"\b(?:ignore|disregard|forget|override|bypass|skip|drop|discard)\b[^.\n]{0,40}?\b"
            r"(?:" + _EARLIER + r"|all|any|your|system|original|the)\b[^.\n]{0,40}?\b" + _INSTRUCTION_NOUNS + r"\b",
            re.IGNORECASE,
        ),
    ),
    (
        # "Ignore the above." / "forget everything before this": an override that names
        # no noun. Only when the clause ends there, so "ignore the above-mentioned
        # noise term" stays prose.
        "instruction_override",
        re.compile(
            r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|everything\s+|anything\s+)?(?:of\s+)?"
            r"(?:the\s+|what(?:\s+is|'s)?\s+(?:written\s+|said\s+)?|that\s+)?"
            r"(?:" + _EARLIER + r"|before\s+this|so\s+far)(?=\s*(?:[.,;:!?\"')\]]|and\b|then\b|$))",
            re.IGNORECASE,
        ),
    ),
    (
        "new_instructions",
        re.compile(
            r"\b(?:new|updated|real|actual|true|revised|your\s+new|your\s+real)\s+(?:system\s+)?"
            r"(?:" + _INSTRUCTION_NOUNS + r"|task|goal|role|objective|orders)\s*:",
            re.IGNORECASE,
        ),
    ),
    (
        "role_override",
        re.compile(
            r"\byou\s+are\s+now\b[^.\n]{0,60}|\bfrom\s+now\s+on,?\s+(?:you|respond|answer|reply|only)\b[^.\n]{0,60}|"
            r"\bpretend\s+(?:to\s+be|you\s+are)\b[^.\n]{0,60}|"
            r"\bact\s+as\s+(?:an?\s+)?(?:unfiltered|unrestricted|jailbroken|evil|uncensored)\b[^.\n]{0,40}",
            re.IGNORECASE,
        ),
    ),
    (
        "prompt_exfiltration",
        re.compile(
            r"\b(?:reveal|print|show|repeat|output|leak|disclose|tell\s+me)\b[^.\n]{0,30}?\b"
            r"(?:system\s+prompt|hidden\s+(?:instructions|prompt)|your\s+(?:instructions|prompt|rules))\b",
            re.IGNORECASE,
        ),
    ),
    (
        "jailbreak",
        re.compile(r"\b(?:developer\s+mode|jailbreak(?:ing)?|do\s+anything\s+now|DAN\s+mode)\b", re.IGNORECASE),
    ),
    (
        "chat_markup",
        re.compile(
            r"<\|[a-z_ ]{2,30}\|>|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|user|tool)>|<\|?(?:im[_ ]start|im[_ ]end)\|?>",
            re.IGNORECASE,
        ),
    ),
    (
        # A role label that opens a line, a markdown heading, a sentence or an HTML
        # comment ("<!-- SYSTEM: ..."), in any case; or an all-caps one anywhere: chat
        # templates speak so.
        "role_prefix",
        re.compile(
            r"(?im:(?:^|(?<=[.!?;]\s)|(?<=<!--)|\|)[#>* \t]*(?:system|assistant|developer)[ \t]*(?:message|prompt)?[ \t]*:)"
            r"|\b(?:SYSTEM|ASSISTANT|DEVELOPER)[ \t]*:",
        ),
    ),
    (
        # Letter-spaced words closed up in the view glue an override into one word.
        "instruction_override",
        re.compile(
            r"(?:ignore|disregard|forget)(?:all|any|the|your|of)*(?:previous|prior|above|earlier|preceding|"
            r"system)(?:instructions?|prompts?|rules|messages?)?",
            re.IGNORECASE,
        ),
    ),
    (
        # Other languages: an override verb, then (within the clause) instructions and "previous".
        "instruction_override",
        re.compile(
            r"\b(?:ignor\w*|oubli\w*|vergiss\w*|missachte\w*|olvid\w*|dimentic\w*|esquec\w*|negeer\w*)\b"
            r"[^.\n]{0,50}?\b(?:instruc\w*|istruz\w*|anweisung\w*|consigne\w*|befehl\w*|indicaciones|"
            r"instructies|regles|regeln|reglas|regole)\b",
            re.IGNORECASE,
        ),
    ),
    (
        # Paraphrased overrides: set aside / pay no attention to / stop following what came before.
        "instruction_override",
        re.compile(
            r"\b(?:set\s+aside|pay\s+no\s+attention\s+to|no\s+longer\s+(?:follow|obey)|stop\s+(?:following|obeying)|"
            r"do\s+not\s+(?:follow|obey)|don'?t\s+(?:follow|obey)|throw\s+out|abandon)\b[^.\n]{0,40}?\b"
            r"(?:told|instructions?|rules|guidelines|directions|prompts?|orders|before|earlier|previously|so\s+far)\b",
            re.IGNORECASE,
        ),
    ),
    (
        # An order about the output addressed to whoever reads the text: "write only X",
        # "in every section write X", "the assistant must now ...".
        "output_order",
        re.compile(
            r"\b(?:write|output|respond|reply|answer|say|print|return|type)\s+(?:only|just|nothing\s+but|exactly)\b"
            r"[^.\n]{0,60}|\b(?:in|for|into)\s+(?:every|each|all(?:\s+the)?|your)\s+(?:sections?|answers?|responses?|"
            r"replies|outputs?|reports?)\b,?\s+(?:write|say|output|include|insert|put|respond|add)\b[^.\n]{0,60}|"
            r"\b(?:the\s+)?(?:model|assistant|ai|llm|chatbot|language\s+model|agents?|writer)s?\s+"
            r"(?:must|should|shall|has\s+to|needs?\s+to|is\s+to)\s+(?:now\s+)?(?:write|output|respond|reply|say|"
            r"ignore|include|insert|append|stop|obey|follow|only)\b[^.\n]{0,60}",
            re.IGNORECASE,
        ),
    ),
    (
        # A fake teammate or instruction block: "Message from LeadArchitect:", "### Instruction:",
        # a role name that opens a line or a table cell.
        "fake_message",
        re.compile(
            r"(?i:\b(?:message|note|update|memo|instructions?|orders?|directive)\s+from\s+(?:the\s+|your\s+)?"
            r"[A-Za-z][\w-]{2,30}(?:\s+[A-Za-z][\w-]{2,30})?\s*:)"
            r"|(?im:^[ \t|>*]*#{1,6}[ \t]*(?:instruction|instructions|response|system|input|prompt|human|assistant|"
            r"user)\b[^\n]{0,20}:?)"
            r"|(?im:(?:^|\|)[ \t#>*]*(?:lead[ \t]*architect|researcher|data[ \t]*analyst|reviewer|collector|teammate|"
            r"team[ \t]*lead|coordinator|orchestrator|supervisor|user|human)[ \t]*(?:says|said|writes|here)?[ \t]*:)",
        ),
    ),
    # Prompt delimiters (ours and the usual ones): untrusted text must not be able to
    # close its data block and speak outside it.
    ("delimiter", re.compile(r"<{3,}|>{3,}|<\s*/?\s*data\b[^>]*>", re.IGNORECASE)),
]

# A pattern can only match where one of its words occurs (in the lower-cased view):
# checking that first with `in` skips the regex for almost all benign text.
_OVERRIDE_VERBS = ("ignor", "disregard", "forget", "overrid", "bypass", "skip", "drop", "discard")
_PATTERN_WORDS: Tuple[Tuple[str, ...], ...] = (
    _OVERRIDE_VERBS,
    _OVERRIDE_VERBS,
    ("new ", "updated ", "real ", "actual ", "true ", "revised "),
    ("you are now", "from now on", "pretend", "act as"),
    ("system prompt", "hidden instructions", "hidden prompt", "your instructions", "your prompt", "your rules"),
    ("developer mode", "jailbreak", "do anything now", "dan mode"),
    ("<|", "inst]", "<<sys", "<</sys", "system>", "assistant>", "user>", "tool>", "im start", "im end"),
    ("system", "assistant", "developer"),
    _OVERRIDE_VERBS,
    ("ignor", "oubli", "vergiss", "missacht", "olvid", "dimentic", "esquec", "negeer"),
    (
        "set aside",
        "no attention",
        "no longer",
        "stop follow",
        "stop obey",
        "not follow",
        "not obey",
        "n't follow",
        "n't obey",
        "dont follow",
        "dont obey",
        "throw out",
        "abandon",
    ),
    (
        "write",
        "output",
        "respond",
        "reply",
        "answer",
        "say",
        "print",
        "return",
        "type",
        "must",
        "should",
        "shall",
        "has to",
        "need",
        "is to",
    ),
    (
        " from ",
        "#",
        "architect",
        "researcher",
        "analyst",
        "reviewer",
        "collector",
        "teammate",
        "team",
        "coordinator",
        "orchestrator",
        "supervisor",
        "user",
        "human",
    ),
    ("<<<", ">>>", "data"),
)
assert len(_PATTERN_WORDS) == len(_INJECTION_PATTERNS)

# HTML comments are invisible in rendered markdown/HTML, so nothing in one is content a
# reader saw: they are dropped whole.
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
# A word broken by a hyphen at a line end ("instruc-\ntions").
_HYPHENATED_BREAK = re.compile(r"-(?<=[^\W\d_]-)[ \t]*\n[ \t]*(?=[^\W\d_])")
# Three or more single letters separated by blanks ("I g n o r e"): closed up for matching.
_LETTER_SPACED = re.compile(r"(?<!\S)(?:[^\W\d_][ \t]){2,}[^\W\d_](?!\S)")
# Inside an HTML comment any role word followed by a colon is an attempt to speak.
_ROLE_WORD = re.compile(r"\b(?:system|assistant|developer|user|instructions?)\s*:", re.IGNORECASE)
_MARKER = "[neutralised: {kind}]"


@dataclass(frozen=True)
class GuardFinding:
    kind: str
    excerpt: str


@dataclass
class GuardedText:
    text: str
    findings: List[GuardFinding] = field(default_factory=list)
    removed_characters: int = 0
    truncated_from: int | None = None

    @property
    def neutralised(self) -> bool:
        return bool(self.findings)


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
_INVISIBLE = re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in INVISIBLE_RANGES) + "]")
_TAG_TEXT = re.compile("[\U000e0020-\U000e007e]")


def strip_invisible(text: str) -> Tuple[str, int, str]:
    """NFKC, line separators as newlines, invisible characters removed.

    Returns the cleaned text, how many characters were removed, and what the tag
    characters spelled (ASCII smuggled in the tag block), for the record."""
    normalised = unicodedata.normalize("NFKC", text).replace("\r\n", "\n").replace("\r", "\n")
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


def _match_spans(text: str) -> List[Tuple[int, int, str, str]]:
    """(start, end, kind, excerpt) in `text` for every injection pattern found."""
    view, origin = matching_view(text)
    # Within the view a line break only matters for the role-prefix pattern; every
    # other pattern sees it as a plain space, so "ignore all\nprevious instructions"
    # is one phrase.
    flat = view.replace("\n", " ")
    lower = flat.lower()
    spans: List[Tuple[int, int, str, str]] = []
    for (kind, pattern), words in zip(_INJECTION_PATTERNS, _PATTERN_WORDS):
        if not any(word in lower for word in words):
            continue
        haystack = view if kind == "role_prefix" else flat
        for match in pattern.finditer(haystack):
            if match.end() <= match.start():
                continue
            start = origin[match.start()]
            end = origin[match.end() - 1] + 1
            spans.append((start, end, kind, match.group(0)))
    if not spans:
        return []
    # Overlapping findings become one replaced span (the first kind names it).
    spans.sort()
    merged = [spans[0]]
    for start, end, kind, excerpt in spans[1:]:
        first_start, first_end, first_kind, excerpts = merged[-1]
        if start < first_end:
            merged[-1] = (first_start, max(first_end, end), first_kind, excerpts + " | " + excerpt)
        else:
            merged.append((start, end, kind, excerpt))
    return merged


def _drop_html_comments(text: str, findings: List[GuardFinding]) -> Tuple[str, int]:
    removed = 0

    def replace(match: re.Match) -> str:
        nonlocal removed
        body = match.group(0)
        removed += len(body)
        if _match_spans(body) or _ROLE_WORD.search(body):
            findings.append(GuardFinding("hidden_comment", " ".join(body.split())[:80]))
            return _MARKER.format(kind="hidden_comment")
        return ""

    return _HTML_COMMENT.sub(replace, text), removed


def find_injections(text: str) -> List[GuardFinding]:
    """Injection patterns present in text, without changing it (used at ingestion to
    flag documents)."""
    return [finding for finding in guard_untrusted_text(text, max_chars=None).findings if finding.kind != "delimiter"]


def guard_untrusted_text(text: str, max_chars: int | None = 2000) -> GuardedText:
    """Make untrusted text safe(r) to place in a prompt; records what it changed.

    ``max_chars`` caps the guarded text (``None``: no cap). The cap applies after
    neutralisation, whose markers can be longer than what they replace, so a caller
    that clips on its own passes ``None`` rather than the input's length."""
    cleaned, removed, smuggled = strip_invisible(str(text))
    findings: List[GuardFinding] = []
    if smuggled.strip():
        findings.append(GuardFinding("hidden_tag_text", smuggled.strip()[:80]))
    cleaned, comment_chars = _drop_html_comments(cleaned, findings)
    removed += comment_chars

    pieces, cursor = [], 0
    for start, end, kind, excerpt in _match_spans(cleaned):
        findings.append(GuardFinding(kind, " ".join(excerpt.split())[:80]))
        pieces.append(cleaned[cursor:start])
        pieces.append(_MARKER.format(kind=kind))
        cursor = end
    pieces.append(cleaned[cursor:])
    cleaned = "".join(pieces)

    truncated_from = None
    if max_chars is not None and len(cleaned) > max_chars:
        truncated_from = len(cleaned)
        cut = cleaned.rfind(" ", 0, max_chars)
        cleaned = cleaned[: cut if cut > max_chars // 2 else max_chars].rstrip() + " [truncated]"
    return GuardedText(cleaned, findings, removed, truncated_from)
