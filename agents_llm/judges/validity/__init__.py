"""The judge validity suite: good reports and named degradations of them.

A score is worth learning from only if it orders reports as a reader would. This
package holds, per topic of the default corpus (`reports/<task_id>.json`), a good,
sourced, multi-section report written by hand: every claim is taken from the passage
it cites, and each passage is verbatim text of the `python_stdlib` corpus (a test
checks that it occurs there). Each file also holds one more good section
(`extra_section`) for the "a good append raises the score" check.

Twelve topics: six whose reports use the topic's own words, and six (archives,
context-managers, csv, hashing-secrets, serialization, url-parsing) whose topics name
things in a form the report does not use ("Parsing and quoting URLs" / parse, parser,
quoted; "Reading and writing CSV files" / readers, writers; "Compressing and archiving" /
compression, archive), as a writer would: a judge that counts spellings instead of
words fails them.

`DEGRADATIONS` turns a good report into worse ones; each is a named, documented,
deterministic transformation. Besides the twelve of issue 11 it holds what real small-model
runs wrote: `code_markup` (code and HTML/XML/JSON/shell in six styles, quoting the cited
chunk), `echo_headings` (good text under our own instructions as titles) and
`echo_rephrased` (our instructions restated as the team's plan); the echoes are read from
the prompt modules, so a rewording of the prompts carries over. And what the default
training run's final report did: `off_topic_appended` (grounded sections about another
topic after the good ones), `inside_other_report` (the good sections interleaved with
another topic's), `junk_headings` (good text under titles that say nothing), plus
`first_sentence` (a prefix shorter than the first paragraph). A valid judge scores the
good report above every degradation on every topic, scores junk (`JUNK`) near zero,
never scores a prefix of the good report (`prefixes_of`: cut after each paragraph) above
the whole, and moves up when a good section is appended and down when a section is
duplicated. `score_suite` and `violations` run those checks and return the figures
(tests/agents_llm/judges/test_validity.py asserts them, experiments/bench_judge.py prints
them per judge).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Callable

from rag.sources import SourceRef

from ...report_state import ReportState
from ..text import sentences

REPORTS_PACKAGE = "agents_llm.judges.validity"


@dataclass(frozen=True)
class GoodSection:
    title: str
    content: str
    sources: tuple[SourceRef, ...]


@dataclass(frozen=True)
class GoodReport:
    """A hand-written good report on one task of the default corpus."""

    task_id: str
    topic: str
    key_terms: tuple[str, ...]
    sections: tuple[GoodSection, ...]
    extra_section: GoodSection
    sources: dict[str, SourceRef] = field(default_factory=dict)

    def state(
        self, sections: list[GoodSection] | tuple[GoodSection, ...] | None = None, topic: str | None = None
    ) -> ReportState:
        """A ReportState with these sections (default: the good ones), as the env would hold it."""
        report = ReportState(topic=topic or self.topic, key_terms=list(self.key_terms))
        for sec in self.sections if sections is None else sections:
            report.append(sec.title, sec.content, list(sec.sources))
        return report


def _section(raw: dict, sources: dict[str, SourceRef], where: str) -> GoodSection:
    missing = [sid for sid in raw["sources"] if sid not in sources]
    if missing:
        raise ValueError(f"{where}: section {raw['title']!r} cites unknown sources {missing}")
    return GoodSection(raw["title"], raw["content"], tuple(sources[sid] for sid in raw["sources"]))


def load_good_reports() -> list[GoodReport]:
    """Every good report shipped in `reports/`, sorted by task id."""
    folder = resources.files(REPORTS_PACKAGE) / "reports"
    out = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".json"):
            continue
        raw = json.loads(entry.read_text(encoding="utf-8"))
        where = f"validity report {entry.name}"
        sources = {
            sid: SourceRef(source=s["source"], chunk_id=f"{raw['task_id']}:{sid}", text=s["text"])
            for sid, s in raw["sources"].items()
        }
        out.append(
            GoodReport(
                task_id=raw["task_id"],
                topic=raw["topic"],
                key_terms=tuple(raw["key_terms"]),
                sections=tuple(_section(s, sources, where) for s in raw["sections"]),
                extra_section=_section(raw["extra_section"], sources, where),
                sources=sources,
            )
        )
    if not out:
        raise FileNotFoundError(f"no validity reports under {folder}")
    return out


# -- degradations ------------------------------------------------------------------
STOCK_SENTENCE = "The sky is blue."
# What the Collector is told (agents_llm/prompts.py in spirit); a model that has nothing to say returns it.
ECHO_TEMPLATE = (
    "Task: Write the next section of the report on {topic}. Use only the evidence below and "
    "cite it. Then list two points the section must cover."
)
FILLER = (
    "This is an important aspect that deserves careful attention. There are many factors to consider "
    "here. In general, the details depend on the specific situation and requirements. It is worth noting "
    "that best practices continue to evolve over time. Overall, this area plays a key role in many "
    "applications."
)

Degradation = Callable[[GoodReport, GoodReport], ReportState]


def empty(good: GoodReport, other: GoodReport) -> ReportState:
    """No sections at all."""
    return good.state([])


def stock_sentence(good: GoodReport, other: GoodReport) -> ReportState:
    """As many sections as the good report, each titled and filled with one stock sentence repeated, citing
    the good report's sources (the degenerate loop a small model falls into)."""
    return good.state([GoodSection(STOCK_SENTENCE, " ".join([STOCK_SENTENCE] * 3), s.sources) for s in good.sections])


def prompt_echo(good: GoodReport, other: GoodReport) -> ReportState:
    """Each section is the Collector's instructions echoed back (topic included), under a title made of the
    prompt's own words, citing the good sources."""
    echo = ECHO_TEMPLATE.format(topic=good.topic)
    return good.state([GoodSection("Task: Write the next section", echo, s.sources) for s in good.sections])


def headings_only(good: GoodReport, other: GoodReport) -> ReportState:
    """The good report's headings with no text under them: each section holds only its title as a heading."""
    return good.state([GoodSection(s.title, f"## {s.title}", s.sources) for s in good.sections])


def off_topic(good: GoodReport, other: GoodReport) -> ReportState:
    """Another topic's good report (text and its real, matching citations) handed in for this topic."""
    return good.state(other.sections)


def wrong_citations(good: GoodReport, other: GoodReport) -> ReportState:
    """The good text, each section citing another topic's chunks instead of its own."""
    return good.state(
        [
            GoodSection(s.title, s.content, o.sources)
            for s, o in zip(good.sections, _cycle(other.sections, len(good.sections)))
        ]
    )


def citations_removed(good: GoodReport, other: GoodReport) -> ReportState:
    """The good text with no sources at all."""
    return good.state([GoodSection(s.title, s.content, ()) for s in good.sections])


def sentences_repeated(good: GoodReport, other: GoodReport) -> ReportState:
    """Every sentence of the good report written twice in a row."""
    return good.state(
        [GoodSection(s.title, " ".join(f"{t} {t}" for t in sentences(s.content)), s.sources) for s in good.sections]
    )


def sections_duplicated(good: GoodReport, other: GoodReport) -> ReportState:
    """The good sections, then all of them again."""
    return good.state(list(good.sections) * 2)


def first_paragraph(good: GoodReport, other: GoodReport) -> ReportState:
    """The report cut to its first section (its first paragraph)."""
    return good.state(good.sections[:1])


def padded(good: GoodReport, other: GoodReport) -> ReportState:
    """Each section padded with generic filler until it is twice its length."""
    out = []
    for s in good.sections:
        pad = ""
        while len(pad) < len(s.content):
            pad = f"{pad} {FILLER}".strip()
        out.append(GoodSection(s.title, f"{s.content} {pad[: len(s.content)].rsplit('.', 1)[0]}.", s.sources))
    return good.state(out)


def shuffled_headings(good: GoodReport, other: GoodReport) -> ReportState:
    """Section texts (with their sources) moved under the wrong headings: titles rotated by one."""
    titles = [s.title for s in good.sections]
    rotated = titles[1:] + titles[:1]
    return good.state([GoodSection(t, s.content, s.sources) for t, s in zip(rotated, good.sections)])


# -- code/markup junk and rephrased echoes -----------------------------------------------
# Code and markup in several languages and markups, built from the words of the section's own cited chunk (so
# that it shares the chunk's vocabulary: the hardest case for grounding). {0}..{5}: those words; {6}: the
# chunk's first sentence, quoted in a string literal as the default run's junk quoted its chunk.
CODE_STYLES = {
    "html_python": (
        '<pre><code>\nimport {0}\ndef {1}_{2}():\n    {3} = []\n    for {4} in {0}.{5}("{2}"):\n'
        "        {3}.append({4})\n    raise ValueError('{6}')\n</code></pre>\n"
        '<table><tr class="row"><td>{1}</td><td>{2}</td></tr></table>'
    ),
    "fenced_javascript": (
        "```javascript\nconst {0} = require('{1}');\nfunction {2}({3}) {{\n"
        "  return {0}.{4}({3}, '{5}');\n}}\nconsole.log(\"{6}\");\nmodule.exports = {{ {2} }};\n```"
    ),
    "json": '{{\n  "{0}": ["{1}", "{2}"],\n  "{3}": {{"{4}": true, "{5}": null}}\n}}',
    "shell": "$ pip install {0}\n$ python -m {1} --{2}={3}\n$ export {4}_{5}=1\n$ {1} --{4} | grep {5} > {3}.log",
    "xml": (
        '<section id="{0}">\n  <item name="{1}">{2}</item>\n  <item name="{3}">{4}</item>\n'
        '  <note ref="{5}"/>\n</section>'
    ),
    "c": "#include <{0}.h>\nint {1}_{2}(int {3}) {{\n    {4}[{3}] = {5};\n    return {3} + 1;\n}}",
}
# How an echo comes back rephrased: our instruction restated as the team's plan.
ECHO_FRAMES = ("The objective is to {}", "This section will {}", "Here the team must {}", "In this part we {}")


def _chunk_words(sources) -> list[str]:
    from ..reference import STOPWORDS

    seen: list[str] = []
    for src in sources:
        for w in re.findall(r"[A-Za-z][A-Za-z_]{3,}", src.text):
            w = w.lower()
            if w not in STOPWORDS and w not in seen:
                seen.append(w)
    return (seen + ["value", "items", "result", "config", "index", "name"])[:6]


def code_block(style: str, sources) -> str:
    """Code or markup of `style` (a CODE_STYLES key) made of the words of `sources`."""
    first = next((s for src in sources for s in sentences(src.text) if len(s.split()) >= 5), "value")
    quoted = first.replace("'", "").replace('"', "")[:120]
    return CODE_STYLES[style].format(*_chunk_words(sources), quoted)


def instruction_sentences() -> list[str]:
    """The instruction sentences our prompts give the agents (agents_llm/prompts.py TASK and PHASE_TASK,
    agents_llm/phase_prompts.py OBJECTIVE), read from the prompt modules so a rewording follows."""
    from ... import phase_prompts, prompts

    texts = list(prompts.TASK.values()) + [t for phase in prompts.PHASE_TASK.values() for t in phase.values()]
    texts += [t for phase in phase_prompts.OBJECTIVE.values() for t in phase.values()]
    out = [s for t in texts for s in sentences(t) if len(s.split()) >= 5]
    return sorted(dict.fromkeys(out))


def _restated(instruction: str, frame: str) -> str:
    body = instruction.rstrip(".")
    return frame.format(body[0].lower() + body[1:]) + "."


def code_markup(good: GoodReport, other: GoodReport) -> ReportState:
    """Each section's text replaced by code or markup made of its own chunk's words, one style per section in
    turn (HTML with Python, fenced JavaScript, JSON, shell, XML, C: see CODE_STYLES), the first section titled
    with a tag as the default run's junk was; the good sources stay cited."""
    styles = list(CODE_STYLES)
    offset = sum(map(ord, good.task_id)) % len(styles)
    out = []
    for i, s in enumerate(good.sections):
        style = styles[(offset + i) % len(styles)]
        out.append(GoodSection("<pre><code>" if i == 0 else s.title, code_block(style, s.sources), s.sources))
    return good.state(out)


def echo_headings(good: GoodReport, other: GoodReport) -> ReportState:
    """The good text and sources under titles that are our own instructions to the agents (a different one per
    section, from the prompt modules), as a small model titles its sections with the prompt's words."""
    instructions = instruction_sentences()
    offset = sum(map(ord, good.task_id)) % len(instructions)
    return good.state(
        [
            GoodSection(instructions[(offset + i) % len(instructions)], s.content, s.sources)
            for i, s in enumerate(good.sections)
        ]
    )


def echo_rephrased(good: GoodReport, other: GoodReport) -> ReportState:
    """Each section is our instructions restated as the team's plan ("The objective is to list the facts that
    serve the objective, one per line."), under a restated title, citing the good sources."""
    instructions = instruction_sentences()
    offset = sum(map(ord, good.task_id)) % len(instructions)
    out = []
    for i, s in enumerate(good.sections):
        pick = [instructions[(offset + 3 * i + k) % len(instructions)] for k in range(3)]
        body = " ".join(_restated(t, ECHO_FRAMES[(i + k) % len(ECHO_FRAMES)]) for k, t in enumerate(pick))
        out.append(GoodSection(_restated(pick[0], ECHO_FRAMES[i % len(ECHO_FRAMES)]).rstrip("."), body, s.sources))
    return good.state(out)


# Titles that say nothing about the text under them, as a small model writes them (the first is a
# title of the default training run's final report).
JUNK_TITLES = (
    "This is a new task that requires additional information.",
    "Further details",
    "Additional information",
    "More on this",
    "Next steps",
)


def junk_headings(good: GoodReport, other: GoodReport) -> ReportState:
    """The good text and sources under titles that say nothing about it (JUNK_TITLES, one per section)."""
    return good.state(
        [GoodSection(JUNK_TITLES[i % len(JUNK_TITLES)], s.content, s.sources) for i, s in enumerate(good.sections)]
    )


def off_topic_appended(good: GoodReport, other: GoodReport) -> ReportState:
    """The good report followed by another topic's good sections, with their real, matching citations: grounded
    text about something else (what the default training run appended to an on-topic first section)."""
    return good.state(list(good.sections) + list(other.sections))


def inside_other_report(good: GoodReport, other: GoodReport) -> ReportState:
    """The good sections interleaved with another topic's good sections (each with its own citations), handed in
    for this topic: half of the report is about something else."""
    mixed: list[GoodSection] = []
    for i in range(max(len(good.sections), len(other.sections))):
        mixed += [s[i] for s in (other.sections, good.sections) if i < len(s)]
    return good.state(mixed)


def first_sentence(good: GoodReport, other: GoodReport) -> ReportState:
    """The report cut to its first sentence: a prefix shorter than the first paragraph."""
    head = good.sections[0]
    return good.state([GoodSection(head.title, sentences(head.content)[0], head.sources)])


def _cycle(items, n):
    return [items[i % len(items)] for i in range(n)]


DEGRADATIONS: dict[str, Degradation] = {
    "empty": empty,
    "stock_sentence": stock_sentence,
    "prompt_echo": prompt_echo,
    "headings_only": headings_only,
    "off_topic": off_topic,
    "wrong_citations": wrong_citations,
    "citations_removed": citations_removed,
    "sentences_repeated": sentences_repeated,
    "sections_duplicated": sections_duplicated,
    "first_paragraph": first_paragraph,
    "padded": padded,
    "shuffled_headings": shuffled_headings,
    "code_markup": code_markup,
    "echo_headings": echo_headings,
    "echo_rephrased": echo_rephrased,
    "junk_headings": junk_headings,
    "off_topic_appended": off_topic_appended,
    "inside_other_report": inside_other_report,
    "first_sentence": first_sentence,
}
JUNK = ("empty", "stock_sentence", "prompt_echo", "headings_only", "code_markup", "echo_rephrased")
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
