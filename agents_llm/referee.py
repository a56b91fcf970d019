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
  tags, code fences, code lines of any language (`text.markup.markup_profile`: a rule on
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

Its parts: the settings (`agents_llm.referee_config`), the repetition measures
(`agents_llm.text.repetition`), the prompt-echo rule (`agents_llm.prompt_echo`, shared with the
reference judge); this module holds the flags and the `Referee` that raises them, and
re-exports the names callers import from it.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .prompt_echo import echo_reason, echoed_sentences
from .referee_config import RefereeConfig, make_referee_config  # noqa: F401 (re-exported)
from .text.markup import line_kind, markup_profile
from .text.repetition import changed_chars, loop_share, repeated_sentences
from .text.split import sentences, words
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
    from .judges.reference import ReferenceJudge
    from .text.bands import GROUNDING_BANDS

    if isinstance(judge, ReferenceJudge):
        return judge
    if embedding is None:
        return None
    kind = "hashing" if "hashing" in str(getattr(embedding, "identity", "")).lower() else "minilm"
    floor, ceiling = GROUNDING_BANDS[kind]
    return ReferenceJudge(embedding, grounding_floor=floor, grounding_ceiling=ceiling)


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
