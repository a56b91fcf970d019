"""The validity suite's degradations: named, documented, deterministic transformations that
turn a good report (and another topic's, where one is needed) into a worse one
(`DEGRADATIONS`; `JUNK`, those that must score near zero). See the package docstring for
what each family stands for."""

from __future__ import annotations

import random
import re
from typing import Callable

from ...report_state import ReportState
from ...text.split import sentences
from .reports import GoodReport, GoodSection

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


# -- truth, synthesis and outline (what held-out topics showed the judge could not see) --------
def contradicted_facts(good: GoodReport, other: GoodReport) -> ReportState:
    """The good report, citations kept, with three key facts contradicted by hand (a number changed, a
    relation reversed, a role swapped: the report's `contradicted` table): it reads as well and is false."""
    if not good.contradicted:
        raise ValueError(f"validity report {good.task_id}: no 'contradicted' facts to degrade")
    contents = [s.content for s in good.sections]
    for index, old, new in good.contradicted:
        contents[index] = contents[index].replace(old, new)
    return good.state([GoodSection(s.title, c, s.sources) for s, c in zip(good.sections, contents)])


def shuffled_copy(good: GoodReport, other: GoodReport) -> ReportState:
    """The cited passages' own sentences pasted in a fixed random order under one heading (the topic),
    citing every source: a copy of the sources, no organisation, no synthesis."""
    pasted = [t for src in good.sources.values() for t in sentences(" ".join(src.text.split()))]
    random.Random(good.task_id).shuffle(pasted)
    return good.state([GoodSection(good.topic, " ".join(pasted), tuple(good.sources.values()))])


def outline_only(good: GoodReport, other: GoodReport) -> ReportState:
    """One section holding the report's outline: every heading (and the extra section's) as a Markdown
    heading or bullet, no body under any, citing every source."""
    titles = [s.title for s in good.sections] + [good.extra_section.title]
    outline = "\n".join([f"# {good.topic}"] + [f"## {t}\n- {t.lower()}" for t in titles])
    return good.state([GoodSection(f"Outline: {good.topic}", outline, tuple(good.sources.values()))])


def filler_appended(good: GoodReport, other: GoodReport) -> ReportState:
    """The good report followed by a section of generic filler under a plausible title, citing the first
    section's sources."""
    return good.state(list(good.sections) + [GoodSection("Further considerations", FILLER, good.sections[0].sources)])


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
    "contradicted_facts": contradicted_facts,
    "shuffled_copy": shuffled_copy,
    "outline_only": outline_only,
    "filler_appended": filler_appended,
}
JUNK = ("empty", "stock_sentence", "prompt_echo", "headings_only", "code_markup", "echo_rephrased", "outline_only")
