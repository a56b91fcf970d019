"""The referee: after each round, flags what a judge score must not be trusted for.

A crashed or cheating run never counts as improved. The judge measures a report; the
referee looks for the ways a report can earn score without being better, and says so
with a reason and the evidence, as plain data:

* ``repetition``: a text (appended section or agent output) made mostly of sentences
  that repeat an earlier one (in the same text or, for a section, anywhere in the
  report), or of a looping phrase (few distinct word n-grams).
* ``prompt_echo``: a text (or a section title) made mostly of our own prompt instructions
  coming back, measured against every instruction the prompt builders write with empty
  inputs (agents_llm/prompts.py, agents_llm/phase_prompts.py), three ways, so that a
  rephrased echo is caught too: a sentence that shares most of its word trigrams with the
  instructions (verbatim); one that opens with a label our prompts write ("Task:",
  "Section goal:", "Objective (DRAFTING round 2):"); one whose content words (topic words
  left out) are nearly all instruction words ("The objective is to list the facts that
  serve the objective, one per line.").
* ``markup``: a section (or output) that is mostly code or markup, not prose: HTML/XML
  tags, code fences, code lines of any language (`judges.text.markup_profile`: a rule on
  line shape and symbols, not a list of languages). The reference judge gives such a
  section no content either.
* ``unsupported_citation``: a section that cites sources, most of whose text is below
  the grounding floor against the chunks it cites (the reference judge's grounding).
* ``score_jump``: the judge score moved while the report text did not (or barely) change.
* ``padding``: the report grew and its score stayed flat or fell.
* ``judge_fallback``: the judge flagged its own result (a failed call, a fallback score).

Flags on the report (everything except agent-output flags) can become a reward
penalty (``RefereeConfig.penalize``): a flagged round earns at most 0, minus
``penalty`` per flag. Agent-output flags are diagnostics only (they cost nothing
unless their text reaches the report, where the section flags catch it).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .judges.text import line_kind, markup_profile, sentences, words
from .report_state import ReportState, Section

REPETITION, PROMPT_ECHO, MARKUP, UNSUPPORTED, SCORE_JUMP, PADDING, JUDGE_FALLBACK = (
    "repetition",
    "prompt_echo",
    "markup",
    "unsupported_citation",
    "score_jump",
    "padding",
    "judge_fallback",
)
FLAG_KINDS = (REPETITION, PROMPT_ECHO, MARKUP, UNSUPPORTED, SCORE_JUMP, PADDING, JUDGE_FALLBACK)
REPORT_TARGET = "report"  # a flag about the whole report (score jump, padding, judge fallback)


@dataclass
class RefereeConfig:
    """The referee's thresholds and its reward penalty (env config key `referee`)."""

    enabled: bool = True  # run the checks after every round (flags in infos, trace, logs)
    # Turn report flags into a penalty: a flagged round's reward becomes min(reward, 0) - penalty * flags.
    # On by default for training and evaluation through conf/env/report_writing.yaml (referee.penalize:
    # true); off for an env built in Python without a referee config, whose reward is then the judge's
    # delta alone. report_score stays the judge's measurement either way; the flags are counted beside it.
    penalize: bool = False
    penalty: float = 0.05  # reward taken per report flag when penalize is on
    check_agent_outputs: bool = True  # also check each agent's output for repetition and echo (never penalised)
    repetition_share: float = 0.5  # flag when this share of a text's characters repeats earlier sentences
    repetition_similarity: float = 0.8  # word-set Jaccard at which two sentences count as the same sentence
    loop_ngram: int = 3  # words per n-gram of the looping-phrase check
    loop_share: float = 0.5  # flag when this share of a text's n-grams are repeats (texts of >= 12 n-grams)
    echo_overlap: float = 0.6  # a sentence echoes the prompt when this share of its word trigrams is ours
    echo_share: float = 0.3  # flag when this share of a text's characters (or its title) echoes the prompt
    # A sentence echoes the prompt when this share of its content words (topic words and stopwords left out,
    # at least echo_min_words of them) are words of our instructions: catches rephrased echoes.
    echo_vocabulary_share: float = 0.8
    echo_min_words: int = 4
    markup_share: float = 0.5  # flag when this share of a text's classified characters is code or markup
    unsupported_share: float = 0.5  # flag a citing section when this share of its text is below the floor
    jump_tolerance: float = 0.02  # |score change| allowed without a text change
    small_edit_chars: int = 20  # an edit this small counts as "no text change" for a jump above jump_on_small_edit
    jump_on_small_edit: float = 0.1
    padding_min_chars: int = 80  # growth (characters) from which a flat score counts as padding
    padding_tolerance: float = 0.0  # score change at or below which growth counts as padding


def make_referee_config(raw: Any) -> RefereeConfig:
    """A RefereeConfig from None, a dataclass or a mapping; an unknown key fails naming it."""
    if raw is None:
        return RefereeConfig()
    if isinstance(raw, RefereeConfig):
        return raw
    if not isinstance(raw, Mapping):
        raw = {f.name: getattr(raw, f.name) for f in fields(RefereeConfig) if hasattr(raw, f.name)}
    known = {f.name for f in fields(RefereeConfig)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"env.referee: unknown key(s) {unknown}; known: {sorted(known)}")
    cfg = RefereeConfig(**dict(raw))
    for name in ("penalty", "padding_min_chars", "small_edit_chars"):
        if getattr(cfg, name) < 0:
            raise ValueError(f"env.referee.{name} must be >= 0, got {getattr(cfg, name)!r}")
    for name in (
        "repetition_share",
        "repetition_similarity",
        "loop_share",
        "echo_overlap",
        "echo_share",
        "echo_vocabulary_share",
        "markup_share",
        "unsupported_share",
    ):
        if not 0.0 < getattr(cfg, name) <= 1.0:
            raise ValueError(f"env.referee.{name} must be in (0, 1], got {getattr(cfg, name)!r}")
    if cfg.echo_min_words < 1:
        raise ValueError(f"env.referee.echo_min_words must be >= 1, got {cfg.echo_min_words!r}")
    if cfg.loop_ngram < 2:
        raise ValueError(f"env.referee.loop_ngram must be >= 2, got {cfg.loop_ngram!r}")
    return cfg


@dataclass
class Flag:
    kind: str  # one of FLAG_KINDS
    target: str  # a section id ("S2"), an agent name, or "report"
    reason: str
    evidence: dict = field(default_factory=dict)
    on_report: bool = True  # about the report (a section, the scoring), not one agent's output
    penalised: bool = False  # counted in the reward penalty

    def as_dict(self) -> dict:
        return asdict(self)


# -- grounding (through the reference judge) --------------------------------------------
def sentence_grounding(judge: Any, claims: Sequence[str], section: Section, topic: str = "") -> np.ndarray:
    """Best embedding similarity of each claim against the chunks the section cites.

    The one adapter over the reference judge's public grounding
    (`ReferenceJudge.sentence_grounding`: its embedding cache, evidence and the topic's
    own words left out), so the referee measures support exactly as the judge does. A
    claim with nothing left to compare scores -1 (unsupported).
    """
    grounded = judge.sentence_grounding(list(claims), section.sources, topic)
    return np.array([-1.0 if g.similarity is None else g.similarity for g in grounded])


def evidence_texts(section: Section) -> list[str]:
    """What a section's sentences are grounded against: each cited chunk and its sentences."""
    out: list[str] = []
    for src in section.sources:
        if src.text.strip():
            out.append(src.text.strip())
            out.extend(sentences(src.text))
    return out


def grounder_for(judge: Any, embedding: Any = None) -> Any:
    """The reference judge itself, or (for another judge) a reference judge on `embedding`
    with the grounding band of its kind; None when there is nothing to embed with."""
    from .judges.reference import GROUNDING_BANDS, ReferenceJudge

    if isinstance(judge, ReferenceJudge):
        return judge
    if embedding is None:
        return None
    kind = "hashing" if "hashing" in str(getattr(embedding, "identity", "")).lower() else "minilm"
    floor, ceiling = GROUNDING_BANDS[kind]
    return ReferenceJudge(embedding, grounding_floor=floor, grounding_ceiling=ceiling)


# -- text checks (pure functions) ---------------------------------------------------------
def _norm(sentence: str) -> tuple[str, ...]:
    return tuple(words(sentence))


def _same(a: tuple[str, ...], b: tuple[str, ...], similarity: float) -> bool:
    if a == b:
        return True
    sa, sb = set(a), set(b)
    return bool(sa and sb) and len(sa & sb) / len(sa | sb) >= similarity


def repeated_sentences(text: str, earlier: Iterable[str] = (), similarity: float = 0.8) -> tuple[float, list[str]]:
    """(share of `text`'s characters in sentences repeating an earlier one, those sentences)."""
    seen = [_norm(s) for s in earlier if words(s)]
    sents = [s for s in sentences(text) if words(s)]
    total = sum(len(s) for s in sents)
    repeats: list[str] = []
    for s in sents:
        n = _norm(s)
        if any(_same(n, m, similarity) for m in seen):
            repeats.append(s)
        seen.append(n)
    return (sum(len(s) for s in repeats) / total if total else 0.0), repeats


def loop_share(text: str, n: int = 3) -> tuple[float, int]:
    """(share of the word n-grams of `text` that repeat an earlier n-gram, number of n-grams)."""
    w = words(text)
    grams = [tuple(w[i : i + n]) for i in range(len(w) - n + 1)]
    if not grams:
        return 0.0, 0
    return 1.0 - len(set(grams)) / len(grams), len(grams)


def _trigrams(tokens: Sequence[str]) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2)]


@dataclass(frozen=True)
class Instructions:
    """What our prompt builders write themselves (never the topic, messages or sources an agent is given):
    their word trigrams, their content words (stemmed) and the labels that open their lines."""

    trigrams: frozenset
    vocabulary: frozenset
    labels: frozenset  # lower-cased label words, e.g. ("task",), ("section", "goal"), ("objective",)


_LABEL = re.compile(r"^\W*([A-Za-z][^:\n]{0,40}?)\s*:")  # "Task:", "Objective (DRAFTING round 2):"


def _label_words(label: str) -> tuple[str, ...]:
    return tuple(words(re.sub(r"\([^)]*\)", " ", label)))


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
    texts += [
        m["content"] for m in prompts.collector_messages(topic=x, objective=x, last_section=x, contributions=inbox)
    ]
    texts += [m["content"] for m in prompts.summarizer_messages(previous_summary=x, addition=x)]
    return texts


@lru_cache(maxsize=1)
def instructions() -> Instructions:
    from .judges.terms import STOPWORDS, stem

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
    return Instructions(frozenset(grams), frozenset(vocabulary), frozenset(labels))


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
    from .judges.terms import STOPWORDS, stem

    ours = instructions() if ours is None else ours
    tokens = words(sentence)
    grams = _trigrams(tokens)
    if len(grams) >= 2 and sum(g in ours.trigrams for g in grams) / len(grams) >= overlap:
        return "verbatim"
    m = _LABEL.match(sentence)
    if m and _label_words(m.group(1)) in ours.labels:
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


def changed_chars(before: str, after: str) -> int:
    """Characters of the changed span: the longer text minus the prefix and suffix both share."""
    n = min(len(before), len(after))
    prefix = 0
    while prefix < n and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < n - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    return max(len(before), len(after)) - prefix - suffix


def _clip(items: Sequence[str], n: int = 3, chars: int = 160) -> list[str]:
    return [s if len(s) <= chars else s[: chars - 3] + "..." for s in list(items)[:n]]


# -- the referee ------------------------------------------------------------------------
class Referee:
    """One per episode (``reset``); ``review_round`` after each round, ``adjust`` the reward."""

    def __init__(self, cfg: RefereeConfig | Mapping | None = None, *, grounder: Any = None):
        self.cfg = make_referee_config(cfg)
        self.grounder = grounder
        self.reset()

    def reset(self) -> None:
        self._scored_hash: str | None = None
        self._scored_text = ""
        self._scored: float | None = None
        self._scored_chars = 0

    # -- checks -----------------------------------------------------------------------
    def check_text(
        self, text: str, target: str, *, earlier: Sequence[str] = (), title: str = "", topic: str = ""
    ) -> list[Flag]:
        """Repetition, prompt echo and code/markup of one text (a section with its title, or an agent output)."""
        cfg = self.cfg
        flags: list[Flag] = []
        if not text.strip() and not title.strip():
            return flags
        share, repeats = repeated_sentences(text, earlier, cfg.repetition_similarity)
        loops, n_grams = loop_share(text, cfg.loop_ngram)
        if share >= cfg.repetition_share:
            flags.append(
                Flag(
                    REPETITION,
                    target,
                    f"{share:.0%} of the text repeats earlier sentences",
                    {"share": round(share, 3), "repeated": _clip(repeats)},
                )
            )
        elif n_grams >= 12 and loops >= cfg.loop_share:
            flags.append(
                Flag(
                    REPETITION,
                    target,
                    f"{loops:.0%} of its {cfg.loop_ngram}-word phrases are repeats",
                    {"loop_share": round(loops, 3), "ngrams": n_grams, "excerpt": _clip([text])},
                )
            )
        echo: dict[str, Any] = dict(
            topic=topic,
            overlap=cfg.echo_overlap,
            vocabulary_share=cfg.echo_vocabulary_share,
            min_words=cfg.echo_min_words,
        )
        profile = markup_profile(text)
        # Echoes are looked for in the prose: code shares no instructions, and a tag is not a sentence.
        e_share, echoed = echoed_sentences(profile.prose, **echo)
        title_reason = echo_reason(title, **echo) if title.strip() else None
        if e_share >= cfg.echo_share or title_reason:
            reason = (
                f"the title echoes the prompt ({title_reason})"
                if title_reason and e_share < cfg.echo_share
                else f"{e_share:.0%} of the text echoes the prompt's instructions"
            )
            flags.append(
                Flag(
                    PROMPT_ECHO,
                    target,
                    reason,
                    {
                        "share": round(e_share, 3),
                        "title_echo": title_reason,
                        "echoed": _clip(([title] if title_reason else []) + echoed),
                    },
                )
            )
        title_markup = bool(title.strip()) and line_kind(title) == "code"
        if profile.share >= cfg.markup_share or title_markup:
            reason = (
                f"{profile.share:.0%} of the text is code or markup, not prose"
                if profile.share >= cfg.markup_share
                else "the title is code or markup"
            )
            flags.append(
                Flag(
                    MARKUP,
                    target,
                    reason,
                    {
                        "share": round(profile.share, 3),
                        "code_chars": profile.code_chars,
                        "prose_chars": profile.prose_chars,
                        "lines": _clip(([title] if title_markup else []) + list(profile.code_lines), 4, 120),
                    },
                )
            )
        return flags

    def check_grounding(self, section: Section, topic: str = "") -> list[Flag]:
        """Citations whose chunks do not support the section's sentences (below the grounding floor)."""
        if self.grounder is None or not section.sources:
            return []
        min_words = getattr(self.grounder, "min_sentence_words", 3)
        claims = [s for s in sentences(section.content) if len(words(s)) >= min_words]
        evidence = evidence_texts(section)
        if not claims or not evidence:
            return []
        best = sentence_grounding(self.grounder, claims, section, topic)
        floor = float(self.grounder.grounding_floor)
        lengths = np.array([len(c) for c in claims], dtype=float)
        below = best < floor
        share = float(lengths[below].sum() / lengths.sum())
        if share < self.cfg.unsupported_share:
            return []
        worst = [
            {"sentence": c if len(c) <= 160 else c[:157] + "...", "similarity": round(float(b), 3)}
            for c, b in sorted(zip(claims, best), key=lambda cb: cb[1])[:3]
            if b < floor
        ]
        return [
            Flag(
                UNSUPPORTED,
                section.id,
                f"{share:.0%} of the text is below the grounding floor {floor:.2f} against its "
                f"{len(section.sources)} cited chunk(s)",
                {
                    "share": round(share, 3),
                    "floor": floor,
                    "sources": [s.label() for s in section.sources][:5],
                    "unsupported": worst,
                },
            )
        ]

    def check_scoring(
        self, report_text: str, score: float, chars: int, judge_flagged: bool, judge_reason: str = ""
    ) -> list[Flag]:
        """Score jump without a text change, padding, judge fallback; remembers this scoring."""
        cfg = self.cfg
        flags: list[Flag] = []
        digest = hashlib.sha256(report_text.encode("utf-8")).hexdigest()
        if judge_flagged:
            flags.append(
                Flag(
                    JUDGE_FALLBACK,
                    REPORT_TARGET,
                    judge_reason or "the judge flagged its result",
                    {"score": round(score, 4)},
                )
            )
        if self._scored is not None:
            delta, grown = score - self._scored, chars - self._scored_chars
            edit = changed_chars(self._scored_text, report_text) if digest != self._scored_hash else 0
            if (digest == self._scored_hash and abs(delta) > cfg.jump_tolerance) or (
                digest != self._scored_hash and edit < cfg.small_edit_chars and delta > cfg.jump_on_small_edit
            ):
                flags.append(
                    Flag(
                        SCORE_JUMP,
                        REPORT_TARGET,
                        f"score moved {delta:+.3f} with {'no' if edit == 0 else f'a {edit}-character'} text change",
                        {"previous": round(self._scored, 4), "score": round(score, 4), "changed_chars": edit},
                    )
                )
            elif grown >= cfg.padding_min_chars and delta <= cfg.padding_tolerance and not judge_flagged:
                flags.append(
                    Flag(
                        PADDING,
                        REPORT_TARGET,
                        f"report grew {grown} characters while its score changed {delta:+.3f}",
                        {
                            "chars_before": self._scored_chars,
                            "chars": chars,
                            "previous": round(self._scored, 4),
                            "score": round(score, 4),
                        },
                    )
                )
        self._scored_hash, self._scored_text, self._scored, self._scored_chars = digest, report_text, score, chars
        return flags

    # -- one round --------------------------------------------------------------------
    def review_round(
        self,
        report: ReportState,
        *,
        outputs: Mapping[str, str] | None = None,
        changed_section: str | None = None,
        scored: Mapping[str, Any] | None = None,
    ) -> list[Flag]:
        """Every flag of the round just run.

        `outputs`: each agent's text this round; `changed_section`: the id of the section
        appended or revised; `scored`: the reward step's numbers (``RewardStep.as_dict()``:
        judge_score, judge_flagged, judge_reason) when the judge scored the report.
        """
        if not self.cfg.enabled:
            return []
        flags: list[Flag] = []
        if self.cfg.check_agent_outputs:
            for agent, text in sorted((outputs or {}).items()):
                for f in self.check_text(text or "", agent, topic=report.topic):
                    f.on_report = False
                    flags.append(f)
        if changed_section is not None:
            section = report.get(changed_section)
            earlier = [s for other in report.sections if other.id != section.id for s in sentences(other.content)]
            earlier_titles = [o.title for o in report.sections if o.id != section.id]
            text_flags = self.check_text(
                section.content, section.id, earlier=earlier, title=section.title, topic=report.topic
            )
            if (
                not any(f.kind == REPETITION for f in text_flags)
                and section.title.strip()
                and repeated_sentences(section.title, earlier_titles, self.cfg.repetition_similarity)[0] > 0
                and repeated_sentences(section.content, earlier, self.cfg.repetition_similarity)[0] > 0
            ):
                text_flags.append(
                    Flag(
                        REPETITION, section.id, "the title and text repeat an earlier section", {"title": section.title}
                    )
                )
            flags += text_flags + self.check_grounding(section, report.topic)
        if scored:
            flags += self.check_scoring(
                report.to_markdown(),
                float(scored.get("judge_score", 0.0)),
                report.chars,
                bool(scored.get("judge_flagged", False)),
                str(scored.get("judge_reason", "")),
            )
        for f in flags:
            f.penalised = self.cfg.penalize and f.on_report
        return flags

    def adjust(self, reward: float, flags: Sequence[Flag]) -> float:
        """The reward after the penalty: at most 0 once a penalised flag fired, minus `penalty` each."""
        n = sum(f.penalised for f in flags)
        return float(reward) if n == 0 else min(float(reward), 0.0) - self.cfg.penalty * n


def flag_counts(flags: Sequence[Flag | Mapping]) -> dict[str, int]:
    """Per-round counts for infos and logs: ``referee/<kind>`` (every kind, 0 when silent),
    ``referee/flags`` (all), ``referee/report_flags`` (on the report) and ``referee/agent_flags``."""
    rows = [f.as_dict() if isinstance(f, Flag) else dict(f) for f in flags]
    out = {f"referee/{k}": sum(r["kind"] == k for r in rows) for k in FLAG_KINDS}
    on_report = sum(bool(r.get("on_report", True)) for r in rows)
    out.update(
        {"referee/flags": len(rows), "referee/report_flags": on_report, "referee/agent_flags": len(rows) - on_report}
    )
    return out
