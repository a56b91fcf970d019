"""The handcrafted five-phase pipeline of the original Q-Mix report writer, as a fixed policy.

PLANNING -> RESEARCH -> DRAFTING -> REVIEW -> REVISION, each a list of round patterns
cycling within the phase (``algos.handcrafted_phases``). Each round the policy hands
the env a plain-dict ``RoundPlan`` (``env.step_plan(plan)``) and reads back what the
round produced from ``infos`` (:class:`RoundFeedback`); it never calls an LLM itself.

What the policy decides:

* who runs: required agents always, optional ones by the :class:`RoundScheduler`
  (``always_include``, ``temporal_heuristic``, ``llm_gatecheck``);
* phase ends: the round budget, or an early-exit signal in any output of the phase
  (``[RESEARCH_EXHAUSTED]``, ``[DRAFTING_COMPLETE]``, ``[REVISION_COMPLETE]``);
* memory: ``reset_memory`` on the first round of every phase (temporal memory is wiped
  at phase boundaries);
* tasks: the outline parsed from the LeadArchitect's PLANNING output is drafted one
  section at a time; after each append round the LeadArchitect is told
  ``[SECTION_COMPLETE — ASSIGN NEXT SECTION]`` (or ``[SECTION_SKIPPED — ...]`` when
  nothing was appended). REVIEW's ``[SECTION_ID: Sx]``-tagged findings become the
  corrections REVISION applies one at a time, each rewriting its section in place
  (``revise_section``), followed by ``[CORRECTION_APPLIED — ASSIGN NEXT CORRECTION]``.

The phase prompts (phase block, per-phase-per-role objective with the round number,
the live section list, the PLANNING deficiencies) are picked by the engine from the
plan's ``phase`` label (``agents_llm.phase_prompts``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping, Optional, Sequence

from .base import AlgoConfig, PlanPolicy
from .handcrafted_phases import (COLLECTOR, CORRECTION_APPLIED, DEFAULT_ROUNDS, DRAFTING, DRAFTING_COMPLETE,
                                 EXIT_SIGNALS, NON_OUTPUT_MARKERS, PLANNING, REVIEW, REVISION, REVISION_COMPLETE,
                                 PHASE_ORDER, SECTION_COMPLETE, SECTION_SKIPPED, Phase, PhaseConfigError,
                                 RoundPattern, build_phases, fit_rounds)


class SkipStrategy(str, Enum):
    ALWAYS_INCLUDE = "always_include"  # every optional agent runs
    TEMPORAL_HEURISTIC = "temporal_heuristic"  # runs only if it produced output earlier in the phase
    LLM_GATECHECK = "llm_gatecheck"  # a short EXECUTE/SKIP gate call decides; temporal without an answer

    @classmethod
    def parse(cls, value: Any) -> "SkipStrategy":
        if isinstance(value, cls):
            return value
        text = str(value).strip().lower()
        for s in cls:
            if text in (s.value, s.name.lower()):
                return s
        raise ValueError(f"algo.skip_strategy: unknown strategy {value!r}; expected one of {[s.value for s in cls]}")


def counts_as_output(text: Optional[str]) -> bool:
    """An output counts when it says something: not empty, not [HOLD], not [RESEARCH_EXHAUSTED]."""
    if not text or not text.strip():
        return False
    return not any(marker in text for marker in NON_OUTPUT_MARKERS)


class RoundScheduler:
    """Decides which optional agents of a round pattern run.

    ``produced``: agents whose output counted since the last memory wipe.
    ``gates``: LLM gate answers for this round (agent -> EXECUTE?), absent when no
    gate check ran (then LLM_GATECHECK falls back to the temporal heuristic).
    """

    def __init__(self, strategy: SkipStrategy | str = SkipStrategy.TEMPORAL_HEURISTIC):
        self.strategy = SkipStrategy.parse(strategy)

    def include_optional(self, agent: str, produced: set[str], gates: Mapping[str, Optional[bool]]) -> bool:
        if self.strategy is SkipStrategy.ALWAYS_INCLUDE:
            return True
        if self.strategy is SkipStrategy.LLM_GATECHECK and gates.get(agent) is not None:
            return bool(gates[agent])
        return agent in produced

    def select(self, pattern: RoundPattern, produced: set[str], gates: Mapping[str, Optional[bool]] = {}) -> list[str]:
        acting = list(pattern.required)
        acting += [a for a in pattern.optional if self.include_optional(a, produced, gates)]
        return acting

    def gate_target(self, pattern: RoundPattern) -> Optional[str]:
        """The optional agent of ``pattern`` to gate-check (the engine runs one gate per round)."""
        if self.strategy is not SkipStrategy.LLM_GATECHECK or not pattern.optional:
            return None
        return pattern.optional[0]


@dataclass
class RoundFeedback:
    """What the policy reads back after a round (plain data from the env's ``infos``)."""

    outputs: dict[str, str] = field(default_factory=dict)  # agent -> text it produced this round
    collector_status: str = "idle"  # appended | revised | skipped | failed | idle
    collector_section: Optional[str] = None  # id of the section appended or revised
    sections: list[tuple[str, str, int]] = field(default_factory=list)  # live (id, title, chars)
    gate_passed: Optional[bool] = None  # answer of this round's gate check, if any

    @classmethod
    def from_infos(cls, infos: Optional[Mapping[str, Any]]) -> Optional["RoundFeedback"]:
        """Read the round keys the report env puts in every agent's info dict (None after reset).

        Keys: ``round_outputs`` {agent: text}, ``collector`` (status), ``collector_section``
        (id of the section appended or revised), ``sections`` [[id, title, chars]],
        ``gate_passed`` (bool; absent when no gate check ran).
        """
        if not infos:
            return None
        info = infos
        if "round_outputs" not in info:
            info = next((v for v in infos.values() if isinstance(v, Mapping) and "round_outputs" in v), None)
            if info is None:
                if any(isinstance(v, Mapping) and "round" in v for v in infos.values()):
                    # The env's default infos hold numbers only (for TorchRL): without the
                    # round's text the pipeline would plan blind.
                    raise ValueError("the handcrafted pipeline reads the round's text, which these infos lack: pass "
                                     "env.last_round_info() to next_plan, or build the env with infos='full'")
                return None
        collector = info.get("collector") or "idle"
        return cls(outputs={a: str(t or "") for a, t in (info.get("round_outputs") or {}).items()},
                   collector_status=str(collector),
                   collector_section=info.get("collector_section"),
                   sections=[(str(s[0]), str(s[1]), int(s[2])) for s in info.get("sections") or []],
                   gate_passed=info.get("gate_passed"))


_OUTLINE_LINE = re.compile(r"^\s*(?:#{1,4}\s+|[-*\u2022]\s+|\d+[.)]\s+|section\s+\d+\s*[:.]\s*)(.+?)\s*$", re.IGNORECASE)
_SECTION_TAG = re.compile(r"\[\s*SECTION_ID\s*:\s*([A-Za-z0-9_.-]+)\s*\]", re.IGNORECASE)
_NOT_A_TITLE = re.compile(r"^(objective|deficien|gap|missing|note|task|\[)", re.IGNORECASE)


def parse_outline(text: str, limit: int = 12) -> list[str]:
    """Section titles from a LeadArchitect outline: list items or headings, in order."""
    titles: list[str] = []
    for line in text.splitlines():
        m = _OUTLINE_LINE.match(line)
        if not m:
            continue
        title = m.group(1).strip(" *_:#\"'").strip()
        title = re.sub(r"\s*[\(\[].*?[\)\]]\s*$", "", title).strip()  # trailing "(source)" or "[1]"
        if 3 <= len(title) <= 120 and not _NOT_A_TITLE.match(title) and title.lower() not in {t.lower() for t in titles}:
            titles.append(title)
        if len(titles) == limit:
            break
    return titles


def parse_corrections(text: str, live_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(section id, finding) for every ``[SECTION_ID: Sx]`` tag that names a live section."""
    live = {i.upper(): i for i in live_ids}
    out = []
    for line in text.splitlines():
        for m in _SECTION_TAG.finditer(line):
            sid = live.get(m.group(1).upper())
            if sid is not None:
                finding = _SECTION_TAG.sub("", line).strip(" -*:\t")
                out.append((sid, finding))
    return out


def section_tag(text: str, live_ids: Sequence[str]) -> Optional[str]:
    """The first ``[SECTION_ID: ...]`` tag in ``text`` that names a live section."""
    found = parse_corrections(text, live_ids)
    return found[0][0] if found else None


@dataclass
class HandcraftedConfig(AlgoConfig):
    name: str = "handcrafted"
    # always_include | temporal_heuristic | llm_gatecheck (who of a pattern's optional agents runs)
    skip_strategy: str = "temporal_heuristic"
    # Round budget per phase (planning, research, drafting, review, revision); 0 skips a phase.
    rounds: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_ROUNDS))
    # Per phase, a list of {required: [...], optional: [...], edges: [[sender, receiver], ...]}
    # replacing the default round patterns (receiver "Collector" = append); null keeps the default.
    patterns: dict[str, Any] = field(default_factory=lambda: {p: None for p in PHASE_ORDER})
    # Most corrections REVISION takes from REVIEW (each costs two rounds of the budget).
    max_corrections: int = 6
    # Fit the phase rounds into the env's round budget (EnvSpec.extras["max_rounds"]) when their sum
    # exceeds it, with a compact schedule (handcrafted_phases.fit_rounds), so that compared with the
    # learners at their budget the pipeline still plans, writes and finishes. false: the rounds as given.
    fit_budget: bool = True
    # Question of the LLM_GATECHECK gate ({agent}, {phase}, {round} are filled in).
    gate_question: str = ("Next is {phase} round {round}. Would your contribution add something new to it? "
                          "Answer YES to EXECUTE or NO to SKIP.")


@dataclass
class _Correction:
    section_id: str
    finding: str


class HandcraftedPipeline(PlanPolicy):
    """Fixed policy emitting round plans (a :class:`PlanPolicy`); learns nothing."""

    config_class = HandcraftedConfig

    def __init__(self, spec, cfg: HandcraftedConfig, *, seed: int = 0, device: str = "cpu"):
        super().__init__(spec, cfg, seed=seed, device=device)
        self.scheduler = RoundScheduler(cfg.skip_strategy)
        rounds = {str(k): v for k, v in dict(cfg.rounds).items()}
        self.phases: list[Phase] = build_phases(spec.agents, rounds, dict(cfg.patterns or {}))
        budget = (spec.extras or {}).get("max_rounds")
        if cfg.fit_budget and budget is not None:
            fitted = fit_rounds({p.name: p.rounds for p in self.phases}, int(budget))
            self.phases = [Phase(p.name, fitted[p.name], p.patterns) for p in self.phases]
        self.schedule = {p.name: p.rounds for p in self.phases}  # the phase rounds this policy runs
        if not any(p.rounds for p in self.phases):
            raise PhaseConfigError("algo.rounds: every phase has 0 rounds; nothing would run")
        if cfg.max_corrections < 0:
            raise PhaseConfigError(f"algo.max_corrections: expected >= 0, got {cfg.max_corrections}")
        self.begin_episode()

    # --- episode state ------------------------------------------------------------
    def begin_episode(self) -> None:
        self.phase_index = -1
        self.round_in_phase = 0
        self.produced: set[str] = set()
        self.gates: dict[str, Optional[bool]] = {}
        self.outline: list[str] = []
        self.section_cursor = 0
        self.sentinel: Optional[str] = None
        self.corrections: list[_Correction] = []
        self.review_notes: list[str] = []
        self.correction_cursor = 0
        self.revise_target: Optional[str] = None
        self.sections: list[tuple[str, str, int]] = []
        self.last_plan: Optional[dict] = None
        self.last_pattern: Optional[RoundPattern] = None
        self.finished = False
        self.history: list[tuple[str, int]] = []  # (phase, round in phase) of every plan, for inspection
        self._advance_phase()

    @property
    def phase(self) -> Optional[Phase]:
        return self.phases[self.phase_index] if 0 <= self.phase_index < len(self.phases) else None

    # --- the PlanPolicy interface -------------------------------------------------
    def next_plan(self, round_info: Optional[Mapping[str, Any]] = None) -> dict:
        """The next round's plan (a ``RoundPlan.from_dict`` dict), given the last round's full infos."""
        if self.last_plan is not None:
            feedback = RoundFeedback.from_infos(round_info) or RoundFeedback()
            self._absorb(feedback)
        if self.phase is None:
            self.finished = True
            plan = {"acting": [], "terminate": True, "phase": None}
        else:
            plan = self._plan_round()
        self.last_plan = plan
        return plan

    # --- reading a round's results ------------------------------------------------
    def _absorb(self, fb: RoundFeedback) -> None:
        phase, pattern = self.phase, self.last_pattern
        if phase is None or pattern is None:
            return
        if fb.sections or fb.collector_status in ("appended", "revised"):
            self.sections = list(fb.sections)
        for agent, text in fb.outputs.items():
            if counts_as_output(text):
                self.produced.add(agent)
        gate = self.last_plan.get("gate_check") if self.last_plan else None
        self.gates = {gate["agent"]: fb.gate_passed} if gate else {}

        name = phase.name
        if name == PLANNING:
            for agent, text in fb.outputs.items():
                if agent.startswith("LeadArchitect"):
                    titles = parse_outline(text)
                    if titles:  # the latest usable outline wins
                        self.outline = titles
        elif name == DRAFTING and pattern.appends:
            appended = fb.collector_status == "appended"
            self.sentinel = SECTION_COMPLETE if appended else SECTION_SKIPPED
            self.section_cursor += 1
        elif name == DRAFTING and self._no_evidence(fb) and phase.pattern(self.round_in_phase + 1).appends:
            # No evidence, no section: skip the writing round rather than let the writer invent one.
            self.round_in_phase += 1
            self.sentinel = SECTION_SKIPPED
            self.section_cursor += 1
        elif name == REVIEW:
            live = [s[0] for s in self.sections]
            for agent in sorted(fb.outputs):
                text = fb.outputs[agent]
                for sid, finding in parse_corrections(text, live):
                    if not any(c.section_id == sid and c.finding == finding for c in self.corrections):
                        self.corrections.append(_Correction(sid, finding))
                if counts_as_output(text) and agent.startswith("Reviewer"):
                    self.review_notes.append(text.strip())
        elif name == REVISION:
            if pattern.appends:
                if fb.collector_status == "revised":
                    self.sentinel = CORRECTION_APPLIED
                self.correction_cursor += 1
                self.revise_target = None
            else:
                live = [s[0] for s in self.sections]
                current = self._current_correction()
                target = None
                for agent in sorted(fb.outputs, key=lambda a: not a.startswith("DataAnalyst")):
                    target = section_tag(fb.outputs[agent], live)
                    if target:
                        break
                self.revise_target = target or (current.section_id if current else None)

        self.round_in_phase += 1
        signal = EXIT_SIGNALS.get(name)
        exit_early = signal is not None and any(signal in t for t in fb.outputs.values())
        if exit_early or self.round_in_phase >= phase.rounds or self._phase_has_no_work():
            self._advance_phase()

    @staticmethod
    def _no_evidence(fb: RoundFeedback) -> bool:
        """A Researcher ran this round and brought nothing ([RESEARCH_EXHAUSTED], [HOLD] or empty)."""
        researchers = [a for a in fb.outputs if a.startswith("Researcher")]
        return bool(researchers) and not any(counts_as_output(fb.outputs[a]) for a in researchers)

    def _phase_has_no_work(self) -> bool:
        name = self.phase.name
        if name == DRAFTING and self.outline and self.section_cursor >= len(self.outline):
            return True  # every planned section is complete or skipped
        if name == REVISION and self.correction_cursor >= len(self.corrections) and self.revise_target is None:
            return True
        return False

    def _advance_phase(self) -> None:
        self.phase_index += 1
        while self.phase is not None and not self._phase_can_start(self.phase):
            self.phase_index += 1
        self.round_in_phase = 0
        self.produced = set()  # temporal memory is wiped at phase boundaries
        self.gates = {}
        self.sentinel = None
        self.revise_target = None
        if self.phase is not None and self.phase.name == REVISION:
            self._prepare_corrections()

    def _phase_can_start(self, phase: Phase) -> bool:
        if phase.rounds == 0:
            return False
        if phase.name in (REVIEW, REVISION) and not self.sections:
            return False  # nothing written, nothing to review or revise
        return True

    def _prepare_corrections(self) -> None:
        """REVISION works through REVIEW's tagged findings; untagged reviews fall back to every section in order."""
        if not self.corrections:
            note = " ".join(self.review_notes)[-400:]
            self.corrections = [_Correction(sid, note) for sid, _, _ in self.sections]
        self.corrections = self.corrections[: self.cfg.max_corrections]
        self.correction_cursor = 0

    def _current_correction(self) -> Optional[_Correction]:
        if self.correction_cursor < len(self.corrections):
            return self.corrections[self.correction_cursor]
        return None

    # --- building a plan ----------------------------------------------------------
    def _plan_round(self) -> dict:
        phase, k = self.phase, self.round_in_phase
        pattern = phase.pattern(k)
        acting = self.scheduler.select(pattern, self.produced, self.gates)
        running = set(acting)
        edges = [[s, r] for s, r in pattern.edges if s in running and (r == COLLECTOR or r in running)]
        plan: dict[str, Any] = {
            "acting": acting,
            "edges": edges,
            "instructions": self._instructions(phase, pattern, acting),
            "phase": phase.name,
            "phase_round": k + 1,
            "phase_rounds": phase.rounds,
            "reset_memory": k == 0,
        }
        if phase.name == REVISION and any(r == COLLECTOR for _, r in edges):
            target = self.revise_target or self._fallback_target()
            if target is None:  # nothing to rewrite: appending a new section here would be wrong
                plan["edges"] = [e for e in edges if e[1] != COLLECTOR]
            else:
                plan["revise_section"] = target
        gate_agent = self._next_gate_agent(phase, k)
        if gate_agent is not None:
            plan["gate_check"] = {"agent": gate_agent,
                                  "question": self.cfg.gate_question.format(agent=gate_agent, phase=phase.name,
                                                                            round=k + 2)}
        if self._is_last_round(phase, k):
            plan["terminate"] = True
        self.last_pattern = pattern
        self.history.append((phase.name, k))
        self.sentinel = None  # delivered
        return plan

    def _fallback_target(self) -> Optional[str]:
        current = self._current_correction()
        return current.section_id if current else None

    def _next_gate_agent(self, phase: Phase, k: int) -> Optional[str]:
        if k + 1 >= phase.rounds:
            return None  # the next round starts a new phase: memory is wiped, no gate carries over
        return self.scheduler.gate_target(phase.pattern(k + 1))

    def _is_last_round(self, phase: Phase, k: int) -> bool:
        """True when no round can follow this one, so the plan itself ends the episode."""
        last_correction = (phase.name == REVISION and phase.pattern(k).appends
                           and self.correction_cursor + 1 >= len(self.corrections))
        if k + 1 < phase.rounds and not last_correction:
            return False
        later = self.phases[self.phase_index + 1:]
        drafting_ahead = phase.name == DRAFTING or any(p.name == DRAFTING and p.rounds for p in later)
        return not any(p.rounds and (p.name not in (REVIEW, REVISION) or self.sections or drafting_ahead)
                       for p in later)

    def _instructions(self, phase: Phase, pattern: RoundPattern, acting: list[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        lead = next((a for a in acting if a.startswith("LeadArchitect")), None)
        writer = next((a for a in acting if a.startswith("DataAnalyst")), None)
        researcher = next((a for a in acting if a.startswith("Researcher")), None)
        sentinel = f"{self.sentinel} " if self.sentinel else ""
        if phase.name == DRAFTING:
            title = self.outline[self.section_cursor] if self.section_cursor < len(self.outline) else None
            if title:
                n = len(self.outline)
                if lead:
                    out[lead] = f"{sentinel}Section to write now ({self.section_cursor + 1} of {n}): {title}"
                if writer:
                    out[writer] = f"Write the section: {title}"
                if researcher:
                    out[researcher] = f"Find evidence for the section: {title}"
            elif self.outline and lead:
                out[lead] = f"{sentinel}Every planned section is written: answer {DRAFTING_COMPLETE}."
            elif lead:
                out[lead] = f"{sentinel}Name the next section the report needs.".strip()
        elif phase.name == REVISION:
            current = self._current_correction()
            if current is None:
                if lead:
                    out[lead] = f"{sentinel}Every correction is applied: answer {REVISION_COMPLETE}."
            else:
                title = next((t for sid, t, _ in self.sections if sid == current.section_id), "")
                finding = current.finding or "apply the review notes"
                tag = f"[SECTION_ID: {current.section_id}]"
                if lead:
                    out[lead] = f"{sentinel}Correction to assign: {tag} {title}: {finding}"
                if writer:
                    out[writer] = (f"Rewrite section {tag} ({title}) applying: {finding}. "
                                   f"Start your answer with {tag}.")
        return out
