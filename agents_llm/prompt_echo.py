"""Our own prompt instructions coming back in a text: what the prompt builders write
themselves (`instructions`: their word trigrams, content words and line labels, read from
agents_llm/prompts.py and agents_llm/phase_prompts.py with empty inputs), and whether a
sentence says it back (`echo_reason`: verbatim, an instruction label, or rephrased). One
definition, used by the referee's `prompt_echo` flag and by the reference judge, which gives
an echoed sentence no credit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from .text.split import sentences, words
from .report_state import ReportState


def _trigrams(tokens: Sequence[str]) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2)]


@dataclass(frozen=True)
class Instructions:
    """What our prompt builders write themselves (never the topic, messages or sources an agent is given):
    their word trigrams, their content words (stemmed) and the labels that open their lines."""

    trigrams: frozenset
    vocabulary: frozenset
    labels: frozenset  # lower-cased label words, e.g. ("task",), ("section", "goal"), ("objective",)
    names: frozenset = frozenset()  # the agents' names, lower case: inputs of a label, not its words


_LEADING_ARTICLE = re.compile(r"^\W*(?:the|a|an|this|our)\s", re.IGNORECASE)
_LABEL = re.compile(r"^\W*([A-Za-z][^:\n]{0,40}?)\s*:")  # "Task:", "Objective (DRAFTING round 2):"


def _label_words(label: str, without: frozenset = frozenset()) -> tuple[str, ...]:
    """A label's words, no parenthesis; `without`: words left out (the agents' names, which our
    labels carry as inputs: "Message from LeadArchitect:" is the label "Message from")."""
    return tuple(w for w in words(re.sub(r"\([^)]*\)", " ", label)) if w not in without)


# Stands in for every input a prompt carries (topic, objective, messages, sources): words() sees no word in
# it, so what is left is the instructions and the labels around the inputs ("Section goal: ...").
_INPUT = "\u2026"


def instruction_texts() -> list[str]:
    """Every instruction our prompts carry, the inputs left blank (system prompts, tasks, phase objectives
    and blocks, the query, Collector and Summarizer prompts, the labels of every input)."""
    from . import phase_prompts, prompts

    x, inbox = _INPUT, [(_INPUT, _INPUT)]
    texts: list[str] = []
    report = ReportState(topic=x)
    for role in prompts.SYSTEM:
        texts += [
            m["content"]
            for m in prompts.agent_messages(
                role, topic=x, objective=x, outline=[x], summary=x, inbox=inbox, memory=x, evidence=x, instruction=x
            )
        ]
        for phase in list(prompts.PHASE_TASK) + list(phase_prompts.PHASES):
            texts.append(prompts.task_for(role, phase))
            if phase_prompts.handles(phase):
                texts += [
                    m["content"]
                    for m in phase_prompts.agent_messages(
                        role,
                        phase=phase,
                        topic=x,
                        objective_text=x,
                        report=report,
                        inbox=inbox,
                        memory=x,
                        evidence=x,
                        instruction=x,
                    )
                ]
    texts += [m["content"] for m in prompts.query_messages(topic=x, objective=x, inbox=inbox, memory=x)]
    texts += [m["content"] for m in prompts.query_messages(topic=x, objective=x, inbox=inbox, memory=x, section=x)]
    texts += [
        m["content"] for m in prompts.collector_messages(topic=x, objective=x, last_section=x, contributions=inbox)
    ]
    texts += [m["content"] for m in prompts.summarizer_messages(previous_summary=x, addition=x)]
    # The plan's directives and the data lines they label ("Section to write now (1 of 4): ..."):
    # agent_messages above shows none, as an empty report has no plan.
    from report_protocol.round_plan import Directive
    from report_protocol.vocabulary import DIRECTIVE_KINDS

    for kind in DIRECTIVE_KINDS:
        line, data = phase_prompts.directive_parts(
            Directive(kind, title=x, section_id="S1", finding=x, position=1, total=1)
        )
        texts += [line, *data]
    return texts


@lru_cache(maxsize=1)
def instructions() -> Instructions:
    from .text.terms import STOPWORDS, stem

    grams: set = set()
    vocabulary: set = set()
    labels: set = set()
    for t in instruction_texts():
        for line in t.splitlines():
            tokens = words(line)
            grams.update(_trigrams(tokens))
            vocabulary.update(stem(w) for w in tokens if len(w) >= 3 and w not in STOPWORDS)
            m = _LABEL.match(line)
            if m and _label_words(m.group(1)):
                labels.add(_label_words(m.group(1)))
    from .prompts import SYSTEM

    names = frozenset(w for role in [*SYSTEM, "Collector"] for w in words(role))
    return Instructions(frozenset(grams), frozenset(vocabulary), frozenset(labels), names)


def instruction_trigrams() -> frozenset:
    """Every word trigram our prompt builders write with empty inputs."""
    return instructions().trigrams


def echo_reason(
    sentence: str,
    *,
    topic: str = "",
    overlap: float = 0.6,
    vocabulary_share: float = 0.8,
    min_words: int = 4,
    ours: Instructions | None = None,
) -> str | None:
    """Why `sentence` echoes our prompt instructions ('verbatim', 'label', 'rephrased'), or None."""
    from .text.terms import STOPWORDS, stem

    ours = instructions() if ours is None else ours
    tokens = words(sentence)
    grams = _trigrams(tokens)
    if len(grams) >= 2 and sum(g in ours.trigrams for g in grams) / len(grams) >= overlap:
        return "verbatim"
    m = _LABEL.match(sentence)
    if m:
        label = _label_words(m.group(1), without=ours.names)
        if _LEADING_ARTICLE.match(m.group(1)):
            label = label[1:]  # "The report topic: ..." is the label "Report topic:"
        if label in ours.labels:
            return "label"
    topic_stems = {stem(w) for w in words(topic)}
    content = [stem(w) for w in tokens if len(w) >= 3 and w not in STOPWORDS]
    content = [w for w in content if w not in topic_stems]
    if len(content) >= min_words and sum(w in ours.vocabulary for w in content) / len(content) >= vocabulary_share:
        return "rephrased"
    return None


def echoed_sentences(
    text: str,
    overlap: float = 0.6,
    ours: Instructions | None = None,
    *,
    topic: str = "",
    vocabulary_share: float = 0.8,
    min_words: int = 4,
) -> tuple[float, list[str]]:
    """(share of `text`'s characters in sentences that echo our prompt instructions, those sentences)."""
    sents = [s for s in sentences(text) if words(s)]
    total = sum(len(s) for s in sents)
    echoed = [
        s
        for s in sents
        if echo_reason(
            s, topic=topic, overlap=overlap, vocabulary_share=vocabulary_share, min_words=min_words, ours=ours
        )
    ]
    return (sum(len(s) for s in echoed) / total if total else 0.0), echoed
