"""A report's opening paragraph: the model answers the task in a few sentences from the sentences
of the report that answer it, and a sentence is kept only when a reader could trust it as they
trust the body.

The model writes from the report, not from the documents: for each part of the task the
sentence of the report that names most of what the part asks (`answer_sentences`), so the
opening says what the body says, shorter. Every sentence it writes then passes the checks a
body sentence passes (`agents_llm.report_checks`): it agrees with its closest source sentence
(numbers, polarity, roles, no content word the source lacks but one), is not a sentence the
report already holds, leans on nothing before it, is no order and restates no sentence a report may not quote (`SourceText.refuses`),
no glued heading and no cut sentence. What fails is dropped with its reason; an opening none of
whose sentences pass is left out, and the report reads as it did without one.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence, Tuple

from .prompts import data_block, untrusted
from .report_checks import (
    AgreementCheck,
    SourceText,
    cut_sentence,
    default_agreement,
    false_sentence,
    glued_heading,
    key,
    leans,
    stems,
)
from .sentence_reuse import content_stems
from .text.split import sentences, words

MAX_SENTENCES = 3  # kept: a reader's opening, not a second report
MAX_EVIDENCE = 6  # report sentences the model reads: one per part, more fill a small model's context with noise
MAX_EVIDENCE_CHARS = 1200
MAX_TOKENS = 160  # about three sentences; a longer answer is cut at its third
MIN_WORDS = 4

OPENING_SYSTEM = (
    "You answer a question in two or three short sentences, using only the facts given. Keep their "
    "numbers and wording, add nothing, and do not mention the report or the facts themselves."
)
# A claim's closest source sentence this many times longer (plus a margin) is a table or a run of
# list lines flattened into one "sentence": its words support anything (measured: a signal table
# "supported" "the signals that terminate a process by default are Ign ... and Term ...").
MAX_SUPPORT_RATIO, SUPPORT_MARGIN = 3, 20
NEAR_COPY = 0.8  # an opening sentence this long against a source sentence the body quotes is that sentence again
_POINTS = re.compile(r"\b(?:below|above|as follows|the following|see)\b", re.IGNORECASE)


# Models measured to write no opening a report can keep: on twelve written reports (nine read while
# the checks were written, three not) none of SmolLM2-135M's 25 sentences and none of
# Qwen2.5-Coder-0.5B's 44 passed; Qwen2.5-Coder-1.5B's 4 of 38 did (experiments/protocol/
# opening_models.py; docs/benchmark/writers/README.md). With `opening: auto` they are not asked:
# a call that never changes the report.
NO_OPENING_MODELS = frozenset({"smollm2-135m", "qwen2.5-coder-0.5b"})


def wants_opening(choice: object, model: str) -> bool:
    """Whether to ask ``model`` for an opening: ``choice`` True or False, or "auto" (every model but
    those measured to write none a report keeps)."""
    if not (choice == "auto" or isinstance(choice, bool)):
        raise ValueError(f"opening must be auto, true or false, got {choice!r}")
    return bool(choice) if choice != "auto" else str(model).lower() not in NO_OPENING_MODELS


@dataclass
class Opening:
    """What the model wrote for the opening and what of it was kept."""

    text: str  # the kept sentences, in the model's order; "" when none passed
    evidence: List[str]  # the report's sentences the model wrote from
    written: List[str] = field(default_factory=list)  # the model's sentences
    dropped: List[Tuple[str, str]] = field(default_factory=list)  # (sentence, why)
    tokens: int = 0
    seconds: float = 0.0

    @property
    def kept(self) -> List[str]:
        return sentences(self.text) if self.text else []

    def summary(self) -> str:
        """One console line: how many of the model's sentences were kept, and why the others went."""
        if not self.evidence:
            return "opening: none written (no sentence of the report answers the task)"
        line = f"opening: kept {len(self.kept)} of the model's {len(self.written)} sentence(s)"
        if self.dropped:
            reasons = "; ".join(f"{why}" for _, why in self.dropped[:3])
            line += f" (dropped: {reasons}{'; ...' if len(self.dropped) > 3 else ''})"
        return line + f", {self.tokens} tokens, {self.seconds:.1f} s"


def answer_sentences(asks: Sequence[Sequence[str]], sections: Sequence[Tuple[str, str]], task: str) -> List[str]:
    """The report's sentences that answer the task: for each part's own words (``asks``, stemmed),
    the sentence of the report naming most of them; with no parts, each section's sentence naming
    most of the task's words. In report order, each once, at most `MAX_EVIDENCE`."""
    said = [(i, s) for i, (_, body) in enumerate(sections) for s in sentences(body) if len(words(s)) >= MIN_WORDS]
    if not said:
        return []
    chosen: list[tuple[int, str]] = []
    if asks:
        for own in asks:
            wanted = set(own)
            best = max(said, key=lambda pair: len(content_stems(pair[1]) & wanted))
            if wanted and content_stems(best[1]) & wanted:
                chosen.append(best)
    else:
        wanted = content_stems(task)
        for i in range(len(sections)):
            mine = [pair for pair in said if pair[0] == i]
            if mine:
                best = max(mine, key=lambda pair: len(content_stems(pair[1]) & wanted))
                chosen.append(best)
    order = {s: n for n, (_, s) in enumerate(said)}
    unique = list(dict.fromkeys(s for _, s in chosen))
    return sorted(unique, key=order.__getitem__)[:MAX_EVIDENCE]


def opening_messages(task: str, evidence: Sequence[str]) -> list[dict[str, str]]:
    """The prompt: the report's answering sentences as data, the task as the question."""
    facts = "\n".join(f"- {untrusted(s, 400)}" for s in evidence)
    facts = facts if len(facts) <= MAX_EVIDENCE_CHARS else facts[:MAX_EVIDENCE_CHARS].rsplit("\n", 1)[0]
    user = "\n\n".join([*data_block([f"Facts:\n{facts}"]), f"Question: {task}", "Answer:"])
    return [{"role": "system", "content": OPENING_SYSTEM}, {"role": "user", "content": user}]


def check_opening(
    written: Sequence[str],
    sources: SourceText,
    body: Sequence[str],
    agreement: Optional[AgreementCheck] = None,
) -> Tuple[List[str], List[Tuple[str, str]]]:
    """(the sentences kept, (sentence, why) for each dropped): a sentence stays when it passes
    every check a body sentence passes and says something the body does not already say word for
    word. At most `MAX_SENTENCES` are kept."""
    agree = agreement or default_agreement()
    seen = {key(s) for s in body}
    # The source sentences the body quotes: an opening sentence that keeps most of one repeats it.
    quoted = {key(sources.sentence(where)) for where in map(sources.locate, body) if where is not None}
    kept: List[str] = []
    dropped: List[Tuple[str, str]] = []

    def why_not(s: str) -> Optional[str]:
        if len(words(s)) < MIN_WORDS or s.rstrip()[-1:] not in ".!?":
            return "not a whole sentence"
        if key(s) in seen:
            return "the report already says it"
        where = sources.locate(s)
        if sources.refuses(s) or (where is not None and key(sources.sentence(where)) in sources.refused):
            return "reads as an order, or restates a sentence no report may quote"
        if leans(s) and not kept:
            return "leans on a sentence before it"
        if glued_heading(s, sources.headings) or cut_sentence(s, sources):
            return "a glued heading or a cut sentence"
        if _POINTS.search(s):
            return "points at text elsewhere"
        closest = sources.closest(s)
        if closest is None:
            return "its source does not say it: no source sentence shares its words"
        source = sources.sentence(closest[0])
        if len(words(source)) > MAX_SUPPORT_RATIO * len(words(s)) + SUPPORT_MARGIN:
            return f"its closest source is a table or list of {len(words(source))} words, not a sentence that says it"
        wrong = false_sentence(s, sources, agree)
        if wrong:
            return f"its source does not say it: {wrong}"
        if key(source) in quoted and len(words(s)) >= NEAR_COPY * len(words(source)):
            return "the report already says it (nearly word for word)"
        # A model's sentence may drop words of its source, never bring its own: one new word is
        # enough to change whom a fact is about ("The backup group is dynamic" from "allocate system
        # users or groups dynamically").
        new = stems(s) - stems(source)
        return f"its source does not say it: words its source lacks: {', '.join(sorted(new))}" if new else None

    for s in written:
        s = s.strip()
        if not s:
            continue
        if len(kept) == MAX_SENTENCES:
            dropped.append((s, "beyond the opening's length"))
            continue
        why = why_not(s)
        if why is None:
            kept.append(s)
            seen.add(key(s))
        else:
            dropped.append((s, why))
    return kept, dropped


async def write_opening(
    backend: Any,
    task: str,
    evidence: Sequence[str],
    sources: SourceText,
    body: Sequence[str],
    *,
    ledger: Any = None,
    agreement: Optional[AgreementCheck] = None,
) -> Opening:
    """Ask ``backend`` for the opening and keep what passes `check_opening`. No model call when
    nothing in the report answers the task."""
    if not evidence:
        return Opening("", [])
    started = time.perf_counter()
    response = await backend.chat(
        opening_messages(task, evidence), max_tokens=MAX_TOKENS, caller="Opening", ledger=ledger
    )
    text = " ".join(str(response.text).split())
    written = sentences(text)
    kept, dropped = check_opening(written, sources, body, agreement)
    return Opening(
        " ".join(kept),
        list(evidence),
        written,
        dropped,
        tokens=int(response.total_tokens),
        seconds=time.perf_counter() - started,
    )
