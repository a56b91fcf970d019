"""The handcrafted five-phase pipeline of the original Q-Mix report writer, as a fixed policy.

PLANNING -> RESEARCH -> DRAFTING -> REVIEW -> REVISION, each a list of round patterns
cycling within the phase (``algos.handcrafted_phases``). Each round the policy hands
the env a plain-dict ``RoundPlan`` (``env.step_plan(plan)``) and reads back the engine's
structured feedback on the round from ``infos`` (``algos.handcrafted_feedback``); it
never calls an LLM and never reads the model's text itself.

What the policy decides (this module is the phase machine):

* who runs: required agents always, optional ones by the ``RoundScheduler``
  (``algos.handcrafted_scheduler``: ``always_include``, ``temporal_heuristic``,
  ``llm_gatecheck``);
* the phase rounds: by default fitted to the env's round budget (``algo.schedule=budget``,
  ``handcrafted_phases.budget_rounds``: at 8 rounds planning 1, research 2, drafting 4,
  review 1), so the pipeline is compared with every other policy at the same budget; the
  original 24-round plan is ``algo.schedule=classic``; ``algo.rounds.<phase>`` overrides one phase;
* phase ends: the phase's round count, or an exit signal (``report_protocol.vocabulary.EXIT_SIGNALS``)
  written by the part that closes the phase (``EXIT_SIGNALLERS``);
* memory: ``reset_memory`` on the first round of every phase (temporal memory is wiped
  at phase boundaries);
* tasks, as directives named by protocol ids (the engine words them,
  ``agents_llm.phase_prompts``): the outline read from the LeadArchitect's PLANNING output
  is drafted one section at a time; after each append round the LeadArchitect's next
  directive carries the ``section_complete`` notice (``section_skipped`` when nothing was
  appended). REVIEW's tagged findings become the corrections REVISION applies one at a
  time, each rewriting its section in place (``revise_section``), followed by the
  ``correction_applied`` notice.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Optional

from report_protocol import COLLECTOR, Directive, RoundFeedback
from report_protocol import vocabulary as v

from .base import AlgoConfig, PlanPolicy
from report_protocol.pipeline_parts import LEAD, RESEARCH, WRITE

from .handcrafted_feedback import (
    Correction,
    WorkLog,
    agent_parts,
    feedback_from_infos,
    no_evidence,
    signalled,
    writers_target,
)
from .handcrafted_phases import (
    PHASE_ORDER,
    Phase,
    PhaseConfigError,
    RoundPattern,
    build_phases,
    fit_rounds,
    schedule_rounds,
)
from .handcrafted_scheduler import RoundScheduler, SkipStrategy

__all__ = ["HandcraftedConfig", "HandcraftedPipeline", "RoundScheduler", "SkipStrategy"]


@dataclass
class HandcraftedConfig(AlgoConfig):
    name: str = "handcrafted"
    # always_include | temporal_heuristic | llm_gatecheck (who of a pattern's optional agents runs)
    skip_strategy: str = "temporal_heuristic"
    # budget: the phase rounds fitted to the env's round budget (handcrafted_phases.budget_rounds), so the
    # pipeline plays at the budget every other policy gets; classic: the original 24-round plan (2, 6, 10, 2, 4).
    schedule: str = "budget"
    # Round count per phase (planning, research, drafting, review, revision) replacing the schedule's; 0 skips
    # a phase; null (or a missing phase) keeps the schedule's count.
    rounds: dict[str, Optional[int]] = field(default_factory=lambda: {p: None for p in PHASE_ORDER})
    # Per phase, a list of {required: [...], optional: [...], edges: [[sender, receiver], ...]}
    # replacing the default round patterns (receiver "Collector" = append); null keeps the default.
    patterns: dict[str, Any] = field(default_factory=lambda: {p: None for p in PHASE_ORDER})
    # Most corrections REVISION takes from REVIEW (each costs two rounds of the budget).
    max_corrections: int = 6
    # Fit the phase rounds into the env's round budget (EnvSpec.extras["max_rounds"]) when their sum
    # exceeds it (the classic plan or explicit rounds at a smaller budget), with a compact schedule
    # (handcrafted_phases.fit_rounds), so the pipeline still plans, writes and finishes. false: as given.
    fit_budget: bool = True
    # Question of the LLM_GATECHECK gate, {agent}, {phase}, {round} filled in; null: the engine's
    # wording (agents_llm.phase_prompts.GATE_QUESTION), asking about the next round of the phase.
    gate_question: Optional[str] = None
    # The report's section titles, in writing order, fixed before the episode (write_report gives the
    # documents' own headings closest to the task: agents_llm.document_outline); null or []: the
    # LeadArchitect's outline from PLANNING.
    outline: Optional[list[str]] = None


class HandcraftedPipeline(PlanPolicy):
    """Fixed policy emitting round plans (a :class:`PlanPolicy`); learns nothing."""

    config_class = HandcraftedConfig
    cfg: HandcraftedConfig

    def __init__(self, spec, cfg: HandcraftedConfig, *, seed: int = 0, device: str = "cpu"):
        super().__init__(spec, cfg, seed=seed, device=device)
        self.scheduler = RoundScheduler(cfg.skip_strategy)
        budget = (spec.extras or {}).get("max_rounds")
        rounds = schedule_rounds(str(cfg.schedule), budget)
        rounds.update({str(k): n for k, n in dict(cfg.rounds or {}).items() if n is not None})
        # Each agent's part (report_protocol.pipeline_parts), which its role declares and the env lists.
        self.parts = agent_parts(spec.agents, (spec.extras or {}).get("pipeline_parts"))
        self.phases: list[Phase] = build_phases(spec.agents, rounds, dict(cfg.patterns or {}), parts=self.parts)
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
        fixed = [t.strip() for t in (self.cfg.outline or []) if t and t.strip()]
        self.log = WorkLog(parts=self.parts, outline=fixed, outline_fixed=bool(fixed))
        self.gates: dict[str, Optional[bool]] = {}
        self.section_cursor = 0
        self.notice: Optional[str] = None  # a vocabulary.NOTICES id for the LeadArchitect's next directive
        self.corrections: list[Correction] = []  # REVISION's work list
        self.correction_cursor = 0
        self.revise_target: Optional[str] = None
        self.last_plan: Optional[dict] = None
        self.last_pattern: Optional[RoundPattern] = None
        self.finished = False
        self.history: list[tuple[str, int]] = []  # (phase, round in phase) of every plan, for inspection
        self._advance_phase()

    @property
    def phase(self) -> Optional[Phase]:
        return self.phases[self.phase_index] if 0 <= self.phase_index < len(self.phases) else None

    @property
    def outline(self) -> list[str]:
        return self.log.outline

    @property
    def sections(self) -> list[tuple[str, str, int]]:
        return self.log.sections

    # --- the PlanPolicy interface -------------------------------------------------
    def next_plan(self, round_info: Optional[Mapping[str, Any]] = None) -> dict:
        """The next round's plan (a ``RoundPlan.from_dict`` dict), given the last round's full infos."""
        if self.last_plan is not None:
            self._absorb(feedback_from_infos(round_info) or RoundFeedback())
        if self.phase is None:
            self.finished = True
            plan: dict[str, Any] = {"acting": [], "terminate": True, "phase": None}
        else:
            plan = self._plan_round()
        self.last_plan = plan
        return plan

    # --- reading a round's results ------------------------------------------------
    def _absorb(self, fb: RoundFeedback) -> None:
        phase, pattern = self.phase, self.last_pattern
        if phase is None or pattern is None:
            return
        self.log.note_round(fb)
        gate = self.last_plan.get("gate_check") if self.last_plan else None
        self.gates = {gate["agent"]: fb.gate_passed} if gate else {}

        name = phase.name
        if name == v.PLANNING:
            self.log.take_outline(fb)
        elif name == v.DRAFTING and pattern.appends:
            self.notice = v.SECTION_COMPLETE if fb.collector_status == "appended" else v.SECTION_SKIPPED
            self.section_cursor += 1
        elif name == v.DRAFTING and no_evidence(fb, self.parts) and phase.pattern(self.round_in_phase + 1).appends:
            # No evidence, no section: skip the writing round rather than let the writer invent one.
            self.round_in_phase += 1
            self.notice = v.SECTION_SKIPPED
            self.section_cursor += 1
        elif name == v.REVIEW:
            self.log.take_findings(fb)
        elif name == v.REVISION:
            if pattern.appends:
                if fb.collector_status == "revised":
                    self.notice = v.CORRECTION_APPLIED
                self.correction_cursor += 1
                self.revise_target = None
            else:
                current = self._current_correction()
                self.revise_target = writers_target(fb, self.parts) or (current.section_id if current else None)

        self.round_in_phase += 1
        exit_early = signalled(fb, v.EXIT_SIGNALS.get(name), self.parts, v.EXIT_SIGNALLERS.get(name))
        if exit_early or self.round_in_phase >= phase.rounds or self._phase_has_no_work():
            self._advance_phase()

    def _phase_has_no_work(self) -> bool:
        assert self.phase is not None
        name = self.phase.name
        if name == v.DRAFTING and self.outline and self.section_cursor >= len(self.outline):
            return True  # every planned section is complete or skipped
        if name == v.REVISION and self.correction_cursor >= len(self.corrections) and self.revise_target is None:
            return True
        return False

    def _advance_phase(self) -> None:
        self.phase_index += 1
        while self.phase is not None and not self._phase_can_start(self.phase):
            self.phase_index += 1
        self.round_in_phase = 0
        self.log.produced = set()  # temporal memory is wiped at phase boundaries
        self.gates = {}
        self.notice = None
        self.revise_target = None
        if self.phase is not None and self.phase.name == v.REVISION:
            self.corrections = self.log.corrections_for_revision(self.cfg.max_corrections)
            self.correction_cursor = 0

    def _phase_can_start(self, phase: Phase) -> bool:
        if phase.rounds == 0:
            return False
        if phase.name in (v.REVIEW, v.REVISION) and not self.sections:
            return False  # nothing written, nothing to review or revise
        return True

    def _current_correction(self) -> Optional[Correction]:
        if self.correction_cursor < len(self.corrections):
            return self.corrections[self.correction_cursor]
        return None

    # --- building a plan ----------------------------------------------------------
    def _plan_round(self) -> dict:
        phase, k = self.phase, self.round_in_phase
        assert phase is not None
        pattern = phase.pattern(k)
        acting = self.scheduler.select(pattern, self.log.produced, self.gates)
        running = set(acting)
        edges = [[s, r] for s, r in pattern.edges if s in running and (r == COLLECTOR or r in running)]
        plan: dict[str, Any] = {
            "acting": acting,
            "edges": edges,
            "directives": {agent: asdict(d) for agent, d in self._directives(phase, acting).items()},
            "phase": phase.name,
            "phase_round": k + 1,
            "phase_rounds": phase.rounds,
            "reset_memory": k == 0,
        }
        if phase.name == v.REVISION and any(r == COLLECTOR for _, r in edges):
            target = self.revise_target or self._fallback_target()
            if target is None:  # nothing to rewrite: appending a new section here would be wrong
                plan["edges"] = [e for e in edges if e[1] != COLLECTOR]
            else:
                plan["revise_section"] = target
        gate_agent = self._next_gate_agent(phase, k)
        if gate_agent is not None:
            question = (
                self.cfg.gate_question.format(agent=gate_agent, phase=phase.name, round=k + 2)
                if self.cfg.gate_question is not None
                else None
            )
            plan["gate_check"] = {"agent": gate_agent, "question": question}
        if self._is_last_round(phase, k):
            plan["terminate"] = True
        self.last_pattern = pattern
        self.history.append((phase.name, k))
        self.notice = None  # delivered
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
        last_correction = (
            phase.name == v.REVISION
            and phase.pattern(k).appends
            and self.correction_cursor + 1 >= len(self.corrections)
        )
        if k + 1 < phase.rounds and not last_correction:
            return False
        later = self.phases[self.phase_index + 1 :]
        drafting_ahead = phase.name == v.DRAFTING or any(p.name == v.DRAFTING and p.rounds for p in later)
        return not any(
            p.rounds and (p.name not in (v.REVIEW, v.REVISION) or self.sections or drafting_ahead) for p in later
        )

    def _directives(self, phase: Phase, acting: list[str]) -> dict[str, Directive]:
        """This round's task per agent, as protocol directives (DRAFTING and REVISION only)."""
        out: dict[str, Directive] = {}
        lead = next((a for a in acting if self.parts.get(a) == LEAD), None)
        writer = next((a for a in acting if self.parts.get(a) == WRITE), None)
        researcher = next((a for a in acting if self.parts.get(a) == RESEARCH), None)
        notice = self.notice
        if phase.name == v.DRAFTING:
            title = self.outline[self.section_cursor] if self.section_cursor < len(self.outline) else None
            if title:
                if lead:
                    out[lead] = Directive(
                        v.ASSIGN_SECTION,
                        title=title,
                        position=self.section_cursor + 1,
                        total=len(self.outline),
                        notice=notice,
                    )
                if writer:
                    out[writer] = Directive(v.WRITE_SECTION, title=title)
                if researcher:
                    out[researcher] = Directive(v.FIND_EVIDENCE, title=title)
            elif self.outline and lead:
                out[lead] = Directive(v.CLOSE_DRAFTING, notice=notice)
            elif lead:
                out[lead] = Directive(v.NAME_NEXT_SECTION, notice=notice)
        elif phase.name == v.REVISION:
            current = self._current_correction()
            if current is None:
                if lead:
                    out[lead] = Directive(v.CLOSE_REVISION, notice=notice)
            else:
                section_id = current.section_id
                title = self.log.title_of(section_id)
                finding = current.finding or None
                if lead:
                    out[lead] = Directive(
                        v.ASSIGN_CORRECTION, section_id=section_id, title=title, finding=finding, notice=notice
                    )
                if writer:
                    out[writer] = Directive(v.APPLY_CORRECTION, section_id=section_id, title=title, finding=finding)
        return out
