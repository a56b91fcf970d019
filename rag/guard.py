"""Retrieved text is untrusted: neutralise prompt-injection patterns, strip control and
invisible characters, and cap its size before it reaches a prompt.

Pattern matching cannot make injected text harmless in general; it removes the common
instruction-override phrasings and chat-template tokens, and records every neutralised
span so a trace shows what a document tried to do.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import List, Tuple

_INVISIBLE_OR_CONTROL = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)

_INSTRUCTION_NOUNS = r"(?:instructions?|prompts?|rules|directions|guidelines|directives|context|messages?|commands?)"

# (kind, pattern). Order matters little: each match is replaced by a marker that no
# other pattern matches.
_INJECTION_PATTERNS: List[Tuple[str, re.Pattern]] = [
    (
        "instruction_override",
        re.compile(
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,40}?\b"
            r"(?:previous|prior|above|earlier|preceding|all|any|your|system|original)\b[^.\n]{0,40}?\b"
            + _INSTRUCTION_NOUNS + r"\b",
            re.IGNORECASE,
        ),
    ),
    (
        "new_instructions",
        re.compile(r"\b(?:new|updated|real|actual|true)\s+(?:system\s+)?" + _INSTRUCTION_NOUNS + r"\s*:", re.IGNORECASE),
    ),
    (
        "role_override",
        re.compile(
            r"\byou\s+are\s+now\b[^.\n]{0,60}|\bfrom\s+now\s+on,?\s+you\b[^.\n]{0,60}|"
            r"\bpretend\s+(?:to\s+be|you\s+are)\b[^.\n]{0,60}|\bact\s+as\s+(?:an?\s+)?(?:unfiltered|unrestricted|jailbroken)\b[^.\n]{0,40}",
            re.IGNORECASE,
        ),
    ),
    (
        "prompt_exfiltration",
        re.compile(
            r"\b(?:reveal|print|show|repeat|output|leak)\b[^.\n]{0,30}?\b(?:system\s+prompt|hidden\s+instructions|your\s+instructions)\b",
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
            r"<\|[a-z_]{2,30}\|>|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|user|tool)>|<\|?(?:im_start|im_end)\|?>",
            re.IGNORECASE,
        ),
    ),
    (
        "role_prefix",
        re.compile(r"^[ \t]*(?:system|assistant|developer)[ \t]*:", re.IGNORECASE | re.MULTILINE),
    ),
    # Our own prompt delimiters (see rag.retrieval.format_for_prompt): a chunk must not
    # be able to close its block and speak outside it.
    ("delimiter", re.compile(r"<{3,}|>{3,}")),
]


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


def find_injections(text: str) -> List[GuardFinding]:
    """Injection patterns present in text, without changing it (used at ingestion to
    flag documents)."""
    normalised = unicodedata.normalize("NFKC", text)
    findings = []
    for kind, pattern in _INJECTION_PATTERNS:
        if kind == "delimiter":
            continue
        for match in pattern.finditer(normalised):
            findings.append(GuardFinding(kind, match.group(0)[:80]))
    return findings


def guard_untrusted_text(text: str, max_chars: int = 2000) -> GuardedText:
    """Make untrusted text safe(r) to place in a prompt; records what it changed."""
    # NFKC folds full-width and other look-alike forms, so "ｉｇｎｏｒｅ" is caught too.
    normalised = unicodedata.normalize("NFKC", text)
    cleaned = _INVISIBLE_OR_CONTROL.sub("", normalised)
    removed = len(normalised) - len(cleaned)
    findings: List[GuardFinding] = []

    for kind, pattern in _INJECTION_PATTERNS:
        def neutralise(match: re.Match, kind: str = kind) -> str:
            findings.append(GuardFinding(kind, match.group(0)[:80]))
            return f"[neutralised: {kind}]"

        cleaned = pattern.sub(neutralise, cleaned)

    truncated_from = None
    if len(cleaned) > max_chars:
        truncated_from = len(cleaned)
        cut = cleaned.rfind(" ", 0, max_chars)
        cleaned = cleaned[: cut if cut > max_chars // 2 else max_chars].rstrip() + " [truncated]"
    return GuardedText(cleaned, findings, removed, truncated_from)
