"""Proxy v2's rules for the LeadArchitect, the DataAnalyst and the Collector's input: what the
LLM roles are asked to do (``agents_llm.phase_prompts``: the directives' wording and the
roles' objectives), from what the role has. The rules are ``docs/extractive_team.md``, "v2".
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from report_protocol import Directive
from report_protocol import vocabulary as v

from ..text.split import words
from ..directive_words import DEFAULT_FINDING, section_tag
from ..report_state import ReportState
from .text import (
    MAX_CANDIDATE_LINES,
    OBJECTIVE_PREFIX,
    OUTLINE_ITEM,
    dedup,
    fact_line,
    facts,
    salient_terms,
    stems,
)

POINTS_PER_SECTION = 2  # DRAFTING: "the title of the section to write now, then two points it must cover"
# A section tag or a completion signal in an output ("[SECTION_ID: S2]", "[DRAFTING_COMPLETE]"): never
# report text. (Absence markers stay: they make a line say "nothing", which the Collector drops.)
PROTOCOL_MARKER = re.compile(
    rf"\[\s*{v.SECTION_ID_TAG}\s*:[^\]]*\]|"
    + "|".join(re.escape(s) for s in (v.DRAFTING_COMPLETE, v.REVISION_COMPLETE))
)


def focus_of(directive: Optional[Directive]) -> str:
    """What a directive tells the role to work on: the section's title (and the correction's finding)."""
    if directive is None:
        return ""
    if directive.kind in (v.FIND_EVIDENCE, v.WRITE_SECTION, v.ASSIGN_SECTION):
        return directive.title or ""
    if directive.kind in (v.APPLY_CORRECTION, v.ASSIGN_CORRECTION):
        return " ".join(x for x in (directive.title, directive.finding) if x)
    return ""


def by_focus(items: Sequence[tuple[str, str]], focus: str) -> list[tuple[str, str]]:
    """`items` (sentence, source) with those sharing more of the focus's words first (stable)."""
    wanted = stems(focus)
    if not wanted:
        return list(items)
    return sorted(items, key=lambda item: -len(wanted & stems(item[0])))


def lead_architect(
    report: ReportState, inbox: Sequence[tuple[str, str]], directive: Optional[Directive], otherwise: str
) -> str:
    """The LeadArchitect's output under a directive, as the LLM prompts word it; `otherwise`
    (the rule without a directive) when it has none or one that names nothing to do."""
    kind = directive.kind if directive is not None else None
    if kind == v.CLOSE_DRAFTING:
        return v.DRAFTING_COMPLETE
    if kind == v.CLOSE_REVISION:
        return v.REVISION_COMPLETE
    if kind == v.ASSIGN_CORRECTION and directive is not None and directive.section_id:
        title = f" {directive.title}:" if directive.title else ""
        return f"{section_tag(directive.section_id)}{title} {directive.finding or DEFAULT_FINDING}"
    if kind == v.ASSIGN_SECTION and directive is not None and directive.title:
        title = directive.title
        used = stems(title) | stems(report.topic)
        for _, t, _ in report.list_sections():
            used |= stems(t)
        prose = [s for _, text in inbox for s, _ in facts(text)]
        if prose:
            prose.append(report.progress_summary)
        points = salient_terms(prose, used, POINTS_PER_SECTION)
        return "\n".join([f"{OBJECTIVE_PREFIX} {title}"] + [f"{OUTLINE_ITEM}{p[:1].upper() + p[1:]}" for p in points])
    return otherwise


def data_analyst(inbox: Sequence[tuple[str, str]], memory: str, directive: Optional[Directive]) -> str:
    """Every sentence of its messages, then of its previous output, sources kept, near-duplicates
    removed; the section it is told to write (or correct) first; a correction opens with the tag."""
    items = dedup([f for _, t in inbox for f in facts(strip_markers(t))] + facts(strip_markers(memory)))
    items = by_focus(items, focus_of(directive))
    lines = [fact_line(s, label) for s, label in items[:MAX_CANDIDATE_LINES]]
    if directive is not None and directive.kind == v.APPLY_CORRECTION and directive.section_id and lines:
        lines.insert(0, section_tag(directive.section_id))
    return "\n".join(lines)


def strip_markers(text: str) -> str:
    """`text` without protocol markers; lines left empty by that are dropped."""
    out = []
    for line in text.splitlines():
        cleaned = PROTOCOL_MARKER.sub("", line).strip() if PROTOCOL_MARKER.search(line) else line
        if cleaned.strip() and words(cleaned):
            out.append(cleaned)
    return "\n".join(out)
