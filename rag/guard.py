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

The patterns are `rag.injection_patterns`; the normalised view and the invisible
characters are `rag.text_view`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Tuple

from rag.injection_patterns import INJECTION_PATTERNS, LINE_ANCHORED_KINDS, PATTERN_WORDS
from rag.text_view import INVISIBLE_CLASS, matching_view, strip_invisible

# HTML comments are invisible in rendered markdown/HTML, so nothing in one is content a
# reader saw: they are dropped whole.
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
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


def _match_spans(text: str) -> List[Tuple[int, int, str, str]]:
    """(start, end, kind, excerpt) in `text` for every injection pattern found."""
    view, origin = matching_view(text)
    # Patterns anchored on a line start (role lines, "### Instruction:") read the view
    # with its line breaks, so they work on every line; every other pattern sees a break
    # as a plain space, so "ignore all\nprevious instructions" is one phrase.
    flat = view.replace("\n", " ")
    breaks = [index for index, char in enumerate(view) if char == "\n"]
    lower = flat.lower()
    spans: List[Tuple[int, int, str, str]] = []
    for (kind, pattern), words in zip(INJECTION_PATTERNS, PATTERN_WORDS):
        if not any(word in lower for word in words):
            continue
        haystack = view if kind in LINE_ANCHORED_KINDS else flat
        for match in pattern.finditer(haystack):
            if match.end() <= match.start():
                continue
            match = _within_first_line(pattern, haystack, match, breaks)
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


def _within_first_line(pattern: re.Pattern, haystack: str, match: re.Match, breaks: List[int]) -> re.Match:
    """The shortest match from the same start that ends before a line break the match
    runs over, if the pattern completes there: a pattern's open-ended tail ("write only
    ...") is the rest of its own line, never the start of the next one."""
    for cut in breaks:
        if cut <= match.start():
            continue
        if cut >= match.end():
            break
        shorter = pattern.match(haystack, match.start(), cut)
        if shorter is not None and shorter.end() > shorter.start():
            return shorter
    return match


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


# Text with an invisible character after each of its letters ("T\u200be\u200bl\u200bl ...") was
# written to pass a reader's eye and a filter's words: what it spells is neutralised whole, not
# cleaned into readable text. Six letters in a row, so that an emoji sequence (at most three joiners)
# or a Persian word's non-joiner is untouched.
_INTERLEAVED_INVISIBLE = re.compile(
    "(?:[^" + INVISIBLE_CLASS + "][" + INVISIBLE_CLASS + "]+){6,}[^" + INVISIBLE_CLASS + r"\s]?"
)


def _neutralise_interleaved(text: str, findings: List[GuardFinding]) -> str:
    def replace(match: re.Match) -> str:
        spelled, _, _ = strip_invisible(match.group(0))
        findings.append(GuardFinding("interleaved_invisible", " ".join(spelled.split())[:80]))
        return _MARKER.format(kind="interleaved_invisible")

    return _INTERLEAVED_INVISIBLE.sub(replace, text)


def guard_untrusted_text(text: str, max_chars: int | None = 2000) -> GuardedText:
    """Make untrusted text safe(r) to place in a prompt; records what it changed.

    ``max_chars`` caps the guarded text (``None``: no cap). The cap applies after
    neutralisation, whose markers can be longer than what they replace, so a caller
    that clips on its own passes ``None`` rather than the input's length."""
    findings: List[GuardFinding] = []
    cleaned, removed, smuggled = strip_invisible(_neutralise_interleaved(str(text), findings))
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
