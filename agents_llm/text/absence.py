"""Whether a text only says "there is nothing": every line an absence marker (the protocol's
"[RESEARCH_EXHAUSTED]", "not found", "no data", ...). Meta-talk about missing evidence must never
become report text; the Collector, the extractive team and the engine's output check ask this."""

from __future__ import annotations

import re

from report_protocol.vocabulary import ABSENCE_LEADERS

# The protocol's absence markers (report_protocol.vocabulary), as the model may write them.
_MARKERS = "|".join(
    (r"\b" if m[0].isalnum() else "") + re.escape(m) + (r"\b" if m[-1].isalnum() else "") for m in ABSENCE_LEADERS
)
# A line made only of these says "there is nothing", not "here is something".
_ABSENCE = re.compile(
    _MARKERS + r"|\bstate deficiency\b|\bnot found\b|\bno data\b|"
    r"\bno (?:relevant )?(?:information|evidence|sources?)\b|\bunavailable\b|\babsent\b|\bnothing relevant\b",
    re.IGNORECASE,
)

# A line that opens with a marker declares absence, whatever detail follows (the queries tried).
_MARKER_FIRST = re.compile(r"^\W*(?:" + _MARKERS + ")")


def is_absence_only(text: str) -> bool:
    """True when every non-empty line is an absence marker (or the text is empty)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return True
    return all(
        _MARKER_FIRST.match(ln) or (_ABSENCE.search(ln) and len(_ABSENCE.sub("", ln).strip(" .:-*[]()")) < 40)
        for ln in lines
    )
