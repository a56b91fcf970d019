"""The validity suite's checks: a judge's scores on every good report, its degradations, its
prefixes and its appends (`score_suite`), and the orderings those scores break (`violations`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from ...report_state import ReportState
from .degradations import DEGRADATIONS, JUNK
from .reports import GoodReport, GoodSection, load_good_reports

JUNK_CEILING = 0.1  # junk must score below this

# What each degradation is for a judge that cannot see it (said in bench_judge's output).
BLIND_SPOTS = {
    "reference": {
        "shuffled_headings": "seen only through heading fit (a title's similarity to its own text), a small part "
        "of structure: the margin is small",
        "reversed claims (not generated)": "grounding measures topical anchoring, not truth: a sentence with its "
        "claim reversed stays grounded",
        "echo_headings": "a title made of our instructions over good text costs only heading fit; the referee's "
        "prompt_echo flag (and its penalty) is what makes it pay",
    },
    "referee": {
        "echoes in new words": "prompt_echo needs most of a sentence's trigrams, a label, or 80 % of its content "
        "words to be our instructions' words: an echo paraphrased in other vocabulary passes",
        "code in prose clothing": "a line of at least three natural words with few code symbols counts as prose "
        "(e.g. 'SELECT name FROM users'); a section is flagged only when most of it is code",
    },
}


def other_report(reports: list[GoodReport], index: int) -> GoodReport:
    """The report whose text and sources stand in as 'another topic' for report `index`."""
    return reports[(index + 1) % len(reports)]


@dataclass
class TopicScores:
    task_id: str
    good: float
    degraded: dict[str, float]
    appended_good: float  # good + its extra section
    appended_duplicate: float  # good + a copy of its first section
    # The good report cut after each of its paragraphs but the last ("1 paragraph", "2 paragraphs", ...):
    # more good text must never score less.
    prefixes: dict[str, float] = field(default_factory=dict)
    # good + a true section in other words than the topic's (None: the report has none): must rise.
    appended_synonym: float | None = None


def prefixes_of(good: GoodReport) -> dict[str, ReportState]:
    """The good report cut after each of its paragraphs but the last (sections cut inside, too)."""
    out: dict[str, ReportState] = {}
    kept: list[GoodSection] = []
    for sec in good.sections:
        paras = [p.strip() for p in re.split(r"\n\s*\n", sec.content) if p.strip()]
        for k in range(1, len(paras) + 1):
            state = kept + [GoodSection(sec.title, "\n\n".join(paras[:k]), sec.sources)]
            out[f"{len(out) + 1} paragraph{'s' if out else ''}"] = good.state(state)
        kept.append(sec)
    out.popitem()  # the whole report is no prefix of itself
    return out


def score_suite(
    score: Callable[[ReportState], float], reports: list[GoodReport] | None = None, kinds: list[str] | None = None
) -> list[TopicScores]:
    """`score` (a report -> float in [0, 1]) on every good report, its degradations and its appends."""
    reports = load_good_reports() if reports is None else reports
    kinds = list(DEGRADATIONS) if kinds is None else kinds
    out = []
    for i, good in enumerate(reports):
        other = other_report(reports, i)
        degraded = {k: score(DEGRADATIONS[k](good, other)) for k in kinds}
        out.append(
            TopicScores(
                task_id=good.task_id,
                good=score(good.state()),
                degraded=degraded,
                appended_good=score(good.state(list(good.sections) + [good.extra_section])),
                appended_duplicate=score(good.state(list(good.sections) + [good.sections[0]])),
                prefixes={name: score(state) for name, state in prefixes_of(good).items()},
                appended_synonym=None
                if good.synonym_section is None
                else score(good.state(list(good.sections) + [good.synonym_section])),
            )
        )
    return out


def violations(results: list[TopicScores]) -> list[str]:
    """Every ordering the suite requires that `results` break, in words (empty: the judge passes)."""
    problems = []
    for r in results:
        for kind, value in r.degraded.items():
            if not value < r.good:
                problems.append(f"{r.task_id}: {kind} scores {value:.3f}, not below the good report's {r.good:.3f}")
            if kind in JUNK and not value < JUNK_CEILING:
                problems.append(f"{r.task_id}: junk {kind} scores {value:.3f}, not below {JUNK_CEILING}")
        if not r.appended_good > r.good:
            problems.append(f"{r.task_id}: appending a good section moves {r.good:.3f} to {r.appended_good:.3f}")
        if r.appended_synonym is not None and not r.appended_synonym > r.good:
            problems.append(
                f"{r.task_id}: appending a good section in other words moves {r.good:.3f} to {r.appended_synonym:.3f}"
            )
        for name, value in r.prefixes.items():
            if value > r.good:
                problems.append(
                    f"{r.task_id}: its first {name} score {value:.3f}, above the whole report's {r.good:.3f}"
                )
        if not r.appended_duplicate < r.good:
            problems.append(
                f"{r.task_id}: appending a duplicate section moves {r.good:.3f} to {r.appended_duplicate:.3f}"
            )
    return problems
