"""Reading a round's model output into structured feedback (`report_protocol.feedback`).

The only place the protocol's signals are looked for in model text: an outline's section
titles, findings tagged `[SECTION_ID: Sx]` with a live section, the signals of
`report_protocol.vocabulary`, and the subtopics the sources do not cover. Text that
matches none of these reads as empty lists, never as an error: a model's output is
whatever it wrote.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from report_protocol.feedback import (
    AgentFeedback,
    Finding,
    GateVerdict,
    RoundFeedback,
    SectionInfo,
    exhaustion_believed,
    signals_believed,
)
from report_protocol.vocabulary import (
    MISSING,
    NON_OUTPUT_MARKERS,
    NOTHING_FOUND_FOR,
    RESEARCH_EXHAUSTED,
    SECTION_ID_TAG,
    SIGNALS,
)

MAX_OUTLINE_TITLES = 12

_OUTLINE_LINE = re.compile(
    r"^\s*(?:#{1,4}\s+|[-*\u2022]\s+|\d+[.)]\s+|section\s+\d+\s*[:.]\s*)(.+?)\s*$", re.IGNORECASE
)
_TRAILING_REFERENCE = re.compile(r"\s*[\(\[].*?[\)\]]\s*$")  # "(source)" or "[1]" after a title
_NOT_A_TITLE = re.compile(r"^(objective|deficien|gap|missing|note|task|\[)", re.IGNORECASE)
_SECTION_TAG = re.compile(r"\[\s*" + SECTION_ID_TAG + r"\s*:\s*([A-Za-z0-9_.-]+)\s*\]", re.IGNORECASE)
_MISSING_LINE = re.compile(r"^\W*" + re.escape(MISSING.rstrip(":")) + r"\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_EXHAUSTED_FOR = re.compile(
    re.escape(RESEARCH_EXHAUSTED) + r"\s*" + re.escape(NOTHING_FOUND_FOR) + r"\s*(.+)", re.IGNORECASE
)


def _signal_pattern(signal: str) -> re.Pattern[str]:
    """`signal` as written, or its bare name ("RESEARCH_EXHAUSTED": models drop the brackets)."""
    bare = signal.strip("[]")
    return re.compile(re.escape(signal) + r"|(?<![\w\[])" + re.escape(bare) + r"(?![\w\]])")


def names_signal(text: str, signal: str) -> bool:
    """Does `text` write `signal`, with or without its brackets? For the underscore-named signals
    only ([HOLD] without brackets is the English word)."""
    if signal in text:
        return True
    return "_" in signal and bool(_signal_pattern(signal).search(text))


def without_signal(text: str, signal: str) -> str:
    """`text` with every writing of `signal` (bracketed or bare) removed, spaces tidied."""
    pattern = _signal_pattern(signal) if "_" in signal else re.compile(re.escape(signal))
    return re.sub(r"[ \t]{2,}", " ", pattern.sub("", text)).strip()


def said_something(text: str | None) -> bool:
    """Not empty, and no absence marker ([HOLD], [RESEARCH_EXHAUSTED])."""
    if not text or not text.strip():
        return False
    return not any(marker in text for marker in NON_OUTPUT_MARKERS)


def signals_in(text: str) -> list[str]:
    return [s for s in SIGNALS if s in text]


def outline_titles(text: str, limit: int = MAX_OUTLINE_TITLES) -> list[str]:
    """Section titles from an outline: list items or headings, in order, without duplicates."""
    titles: list[str] = []
    for line in text.splitlines():
        m = _OUTLINE_LINE.match(line)
        if not m:
            continue
        title = m.group(1).strip(" *_:#\"'").strip()
        title = _TRAILING_REFERENCE.sub("", title).strip()
        if (
            3 <= len(title) <= 120
            and not _NOT_A_TITLE.match(title)
            and title.lower() not in {t.lower() for t in titles}
        ):
            titles.append(title)
        if len(titles) == limit:
            break
    return titles


def tagged_findings(text: str, live_ids: Sequence[str]) -> list[Finding]:
    """A finding for every `[SECTION_ID: Sx]` tag that names a live section (the tag's case need not match)."""
    live = {i.upper(): i for i in live_ids}
    out = []
    for line in text.splitlines():
        for m in _SECTION_TAG.finditer(line):
            sid = live.get(m.group(1).upper())
            if sid is not None:
                out.append(Finding(sid, _SECTION_TAG.sub("", line).strip(" -*:\t")))
    return out


def deficiencies(text: str) -> list[str]:
    """Subtopics an output says the sources do not cover ('MISSING: x' lines, or the
    engine's '[RESEARCH_EXHAUSTED] nothing relevant found for: q1; q2')."""
    found = [m.group(1).strip(" .;") for m in _MISSING_LINE.finditer(text)]
    m = _EXHAUSTED_FOR.search(text)
    if m:
        found += [q.strip(" .") for q in m.group(1).split(";")]
    return [clip_words(f, MAX_DEFICIENCY_CHARS) for f in found if len(f) >= 3 and not _FILE_NAME.search(f)]


# "MISSING: spec.pdf" names a document, not a subtopic the documents lack: the report would list
# its own source as "not found".
_FILE_NAME = re.compile(r"^\S+\.(?:pdf|docx?|md|markdown|txt|rst|html?)$|^\S*/\S*$", re.IGNORECASE)
MAX_DEFICIENCY_CHARS = 120  # a deficiency is a subtopic's name; the report lists them under "not found"


def clip_words(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, an ellipsis marking the cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:.")
    return f"{cut}\u2026"


def read_agent(
    text: str, live_ids: Sequence[str], *, new_evidence: int = 0, directive: str | None = None
) -> AgentFeedback:
    """One output read. `new_evidence`: chunks of the agent's search this turn holding facts the
    report lacks; `directive`: the kind of the plan's directive to it. A RESEARCH_EXHAUSTED the
    protocol does not believe there (`report_protocol.feedback.exhaustion_believed`) is no signal,
    and the turn counts as having said something: it brought evidence."""
    believed = exhaustion_believed(directive, new_evidence)
    return AgentFeedback(
        text=text,
        said_something=said_something(text) or not believed,
        signals=signals_believed(signals_in(text), directive, new_evidence),
        outline=outline_titles(text),
        findings=tagged_findings(text, live_ids),
        deficiencies=deficiencies(text) if believed else [],
        new_evidence=new_evidence,
    )


def read_round(
    outputs: Mapping[str, str],
    *,
    collector_status: str,
    collector_section: str | None,
    sections: Sequence[tuple[str, str, int]],
    gate_agent: str | None = None,
    gate_passed: bool | None = None,
    new_evidence: Mapping[str, int] | None = None,
    directives: Mapping[str, str] | None = None,
) -> RoundFeedback:
    """The round's feedback: every output read against the live sections after the round.
    `new_evidence` and `directives` (per agent: see `read_agent`) default to none."""
    live = [sid for sid, _, _ in sections]
    new_evidence, directives = new_evidence or {}, directives or {}
    return RoundFeedback(
        agents={
            a: read_agent(t or "", live, new_evidence=new_evidence.get(a, 0), directive=directives.get(a))
            for a, t in outputs.items()
        },
        collector_status=collector_status,
        collector_section=collector_section,
        sections=[SectionInfo(str(i), str(t), int(c)) for i, t, c in sections],
        gate=GateVerdict(gate_agent, gate_passed) if gate_agent is not None else None,
    )
