"""The handcrafted pipeline's phases as plain data: round patterns and budgets.

The original Q-Mix report writer ran a fixed five-phase pipeline. Each phase is a list
of round patterns that cycle within the phase (pattern ``k % len(patterns)`` in the
phase's round ``k``); a pattern names the agents that must run, the agents that may run
(the :class:`~algos.handcrafted_scheduler.RoundScheduler` decides), and the directed
message edges of the round (receiver ``"Collector"`` = append to the report).

The default patterns name pipeline parts (``report_protocol.pipeline_parts``: lead,
research, write, review), which each role declares; :func:`build_phases` puts in the
first agent playing each part. Patterns from the config name the team's agent names
(``possible_agents``). Phase names and signals are the report protocol's
(``report_protocol.vocabulary``), which the phase prompts in ``agents_llm.phase_prompts`` share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

from report_protocol import COLLECTOR
from report_protocol import pipeline_parts as part
from report_protocol.vocabulary import DRAFTING, PHASE_ORDER, PLANNING, RESEARCH, REVIEW, REVISION

from .handcrafted_feedback import CONVENTIONAL_AGENTS, agent_parts

# The original pipeline's plan ("classic", 24 rounds: the env needs 25 for it to finish).
DEFAULT_ROUNDS = {PLANNING: 2, RESEARCH: 6, DRAFTING: 10, REVIEW: 2, REVISION: 4}
CLASSIC_ROUNDS = DEFAULT_ROUNDS
SCHEDULES = ("budget", "classic")  # algo.schedule: phases fitted to the env's round budget, or the classic plan


@dataclass(frozen=True)
class RoundPattern:
    """One round's shape: who must run, who may run, which messages flow."""

    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    edges: tuple[tuple[str, str], ...] = ()

    @property
    def appends(self) -> bool:
        return any(r == COLLECTOR for _, r in self.edges)

    def to_dict(self) -> dict:
        return {
            "required": list(self.required),
            "optional": list(self.optional),
            "edges": [list(e) for e in self.edges],
        }


@dataclass(frozen=True)
class Phase:
    name: str
    rounds: int  # round budget; an exit signal may end the phase earlier
    patterns: tuple[RoundPattern, ...]

    def pattern(self, round_in_phase: int) -> RoundPattern:
        return self.patterns[round_in_phase % len(self.patterns)]


def _p(required: Iterable[str], optional: Iterable[str] = (), edges: Iterable[tuple[str, str]] = ()) -> RoundPattern:
    return RoundPattern(tuple(required), tuple(optional), tuple((str(e[0]), str(e[1])) for e in edges))


LA, RS, DA, RV = part.LEAD, part.RESEARCH, part.WRITE, part.REVIEW  # the parts the default patterns name

# Optional agents appear only after a round of the same phase where they were required,
# so the temporal heuristic (memory is wiped at phase boundaries) has something to go on.
DEFAULT_PATTERNS: dict[str, tuple[RoundPattern, ...]] = {
    # Evidence first: the Researcher scans what the corpus covers before the outline.
    PLANNING: (
        _p([RS, LA], edges=[(RS, LA)]),
        _p([LA], [RS], edges=[(RS, LA)]),
    ),
    # The Lead Architect directs the search; the Data Analyst turns evidence into blueprints.
    RESEARCH: (
        _p([LA, RS], edges=[(LA, RS)]),
        _p([LA, RS, DA], edges=[(RS, LA), (LA, DA), (RS, DA)]),
    ),
    # Two rounds per section: assign and gather, then write and append.
    DRAFTING: (
        _p([LA, RS, DA], edges=[(LA, RS), (LA, DA), (RS, DA)]),
        _p([DA], [RS], edges=[(RS, DA), (DA, COLLECTOR)]),
    ),
    # The Reviewer audits the live section list; the Lead Architect ranks the corrections.
    REVIEW: (
        _p([RV]),
        _p([LA], [RV], edges=[(RV, LA)]),
    ),
    # Two rounds per correction: assign (Researcher may [HOLD]), then rewrite in place.
    REVISION: (
        _p([LA, RS, DA], edges=[(LA, RS), (LA, DA), (RS, DA)]),
        _p([DA], [RS], edges=[(RS, DA), (DA, COLLECTOR)]),
    ),
}


# The order in which a compact schedule hands out rounds when the phase budgets do not fit the
# env's round budget: a written section first (two drafting rounds: assign, then write and append),
# then the outline, the evidence, one review-and-revise cycle, and further sections.
COMPACT_STEPS: tuple[tuple[tuple[str, int], ...], ...] = (
    ((DRAFTING, 2),),
    ((PLANNING, 1),),
    ((RESEARCH, 1),),
    ((REVIEW, 1), (REVISION, 2)),
    ((DRAFTING, 2),),
)


def fit_rounds(rounds: Mapping[str, int], budget: Optional[int]) -> dict[str, int]:
    """Phase rounds that fit ``budget`` rounds in all (the schedule compared policies share).

    Unchanged when they already fit (or ``budget`` is None). Otherwise rounds are handed
    out in :data:`COMPACT_STEPS` order, each phase up to its configured count, repeating
    the steps until nothing more fits; e.g. 4 rounds give planning 1, research 1,
    drafting 2: an outline, evidence and one written section, finished in budget.
    """
    rounds = {p: int(rounds.get(p, DEFAULT_ROUNDS[p])) for p in PHASE_ORDER}
    if budget is None or sum(rounds.values()) <= budget:
        return rounds
    if budget < 1:
        raise PhaseConfigError(f"round budget must be >= 1, got {budget}")
    out = {p: 0 for p in PHASE_ORDER}
    left, progress = int(budget), True
    while progress:
        progress = False
        for step in COMPACT_STEPS:
            need = sum(n for _, n in step)
            if need <= left and all(out[p] + n <= rounds[p] for p, n in step):
                for p, n in step:
                    out[p] += n
                left -= need
                progress = True
    if not any(out.values()):  # a 1-round budget: one round of the first phase that has any
        first = next(p for p in PHASE_ORDER if rounds[p])
        out[first] = 1
    return out


def budget_rounds(budget: int) -> dict[str, int]:
    """The phase rounds of the ``budget`` schedule: every phase fitted to ``budget`` rounds in all.

    The proportions come from the phases' round patterns (``DEFAULT_PATTERNS``), chosen once:

    * planning: an eighth of the budget, at least 1 and at most 2 (its two patterns, scan
      then outline: a third round repeats them);
    * research: a quarter, at least 1 from 4 rounds on (each round gathers more evidence);
    * review: an eighth, at least 1 from 5 rounds on, at most 2 (audit, then rank);
    * revision: 2 rounds (one correction) per 12 rounds of budget;
    * drafting: the rest, in pairs (assign and gather, then write and append: one section
      per pair); an odd round left over goes to research.

    8 rounds: planning 1, research 2, drafting 4, review 1. 24 rounds give the classic plan
    (2, 6, 10, 2, 4). Small budgets keep what writes first: 2 rounds draft one section, 3
    add the outline, 4 the evidence, 5 the review. The sum is always ``budget``.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise PhaseConfigError(f"round budget must be an integer >= 1, got {budget!r}")
    if budget < 3:
        return {p: (budget if p == (DRAFTING if budget == 2 else PLANNING) else 0) for p in PHASE_ORDER}
    out = {
        PLANNING: min(2, max(1, budget // 8)),
        RESEARCH: max(1, budget // 4) if budget >= 4 else 0,
        REVIEW: min(2, max(1, budget // 8)) if budget >= 5 else 0,
        REVISION: 2 * (budget // 12),
    }
    drafting = budget - sum(out.values())
    out[RESEARCH] += drafting % 2
    out[DRAFTING] = drafting - drafting % 2
    return {p: out[p] for p in PHASE_ORDER}


def schedule_rounds(schedule: str, budget: Optional[int]) -> dict[str, int]:
    """The phase rounds of a named schedule: ``budget`` (fitted to the env's round budget;
    the classic plan when the budget is unknown) or ``classic`` (the original 24-round plan)."""
    if schedule not in SCHEDULES:
        raise PhaseConfigError(f"algo.schedule: unknown schedule {schedule!r}; expected one of {list(SCHEDULES)}")
    if schedule == "classic" or budget is None:
        return dict(CLASSIC_ROUNDS)
    return budget_rounds(int(budget))


class PhaseConfigError(ValueError):
    """A phase config that cannot run: the message names the phase, pattern and field."""


def _names(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise PhaseConfigError(f"{where}: expected a list of agent names, got {value!r}")
    return tuple(str(v) for v in value)


def _edges(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    out = []
    for e in value or ():
        if isinstance(e, str) and "->" in e:
            e = [x.strip() for x in e.split("->", 1)]
        if isinstance(e, str) or not isinstance(e, Sequence) or len(e) != 2:
            raise PhaseConfigError(f"{where}: an edge is [sender, receiver] or 'sender->receiver', got {e!r}")
        out.append((str(e[0]), str(e[1])))
    return tuple(out)


def pattern_from_dict(data: Mapping[str, Any], where: str) -> RoundPattern:
    if not isinstance(data, Mapping):
        raise PhaseConfigError(f"{where}: a round pattern is a mapping with required/optional/edges, got {data!r}")
    unknown = set(data) - {"required", "optional", "edges"}
    if unknown:
        raise PhaseConfigError(f"{where}: unknown keys {sorted(unknown)} (allowed: required, optional, edges)")
    return RoundPattern(
        _names(data.get("required"), f"{where}.required"),
        _names(data.get("optional"), f"{where}.optional"),
        _edges(data.get("edges"), f"{where}.edges"),
    )


def part_agents(team: Sequence[str], parts: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The agent of each part in the default patterns: the first of ``team`` whose part it is
    (``parts``: agent -> part; None: by the built-in roles' names), else the part's built-in role
    name, which validation then reports as an unknown agent."""
    parts = agent_parts(team) if parts is None else parts
    return {p: next((a for a in team if parts.get(a) == p), name) for p, name in CONVENTIONAL_AGENTS.items()}


def with_agents(pattern: RoundPattern, agents: Mapping[str, str]) -> RoundPattern:
    """``pattern`` (of parts) with each part replaced by its agent (``agents``: part -> agent)."""
    return RoundPattern(
        tuple(agents[a] for a in pattern.required),
        tuple(agents[a] for a in pattern.optional),
        tuple((agents[s], r if r == COLLECTOR else agents[r]) for s, r in pattern.edges),
    )


def build_phases(
    team: Sequence[str],
    rounds: Optional[Mapping[str, int]] = None,
    patterns: Optional[Mapping[str, Any]] = None,
    parts: Optional[Mapping[str, str]] = None,
) -> list[Phase]:
    """The pipeline for ``team``: default patterns, overridden per phase, validated.

    ``rounds``: round budget per phase label (missing labels keep the default; 0 skips
    the phase). ``patterns``: per phase label, a list of ``{required, optional, edges}``
    that replaces the default patterns. ``parts``: each agent's pipeline part, which fills the
    default patterns' parts with agents (:func:`part_agents`). Raises :class:`PhaseConfigError` naming the
    phase, pattern and agent for anything the team cannot run.
    """
    rounds = dict(rounds or {})
    patterns = {k: v for k, v in dict(patterns or {}).items() if v is not None}  # None: the default patterns
    for label in list(rounds) + list(patterns):
        if label not in PHASE_ORDER:
            src = "rounds" if label in rounds else "patterns"
            raise PhaseConfigError(f"algo.{src}: unknown phase {label!r}; phases: {list(PHASE_ORDER)}")
    agents = part_agents(team, parts)
    phases = []
    for label in PHASE_ORDER:
        n = rounds.get(label, DEFAULT_ROUNDS[label])
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise PhaseConfigError(f"algo.rounds.{label}: expected a round count >= 0, got {n!r}")
        if label in patterns:
            raw = patterns[label]
            if isinstance(raw, (str, Mapping)) or not isinstance(raw, Sequence) or not raw:
                raise PhaseConfigError(f"algo.patterns.{label}: expected a non-empty list of round patterns")
            pats = tuple(pattern_from_dict(p, f"algo.patterns.{label}[{i}]") for i, p in enumerate(raw))
        else:
            pats = tuple(with_agents(p, agents) for p in DEFAULT_PATTERNS[label])
        for i, p in enumerate(pats):
            validate_pattern(p, team, f"phase {label}, round pattern {i}")
        phases.append(Phase(label, n, pats))
    return phases


def validate_pattern(pattern: RoundPattern, team: Sequence[str], where: str) -> None:
    known = set(team)
    hint = f"team: {list(team)} (the append node is {COLLECTOR!r}, only as an edge receiver)"
    if not pattern.required and not pattern.optional:
        raise PhaseConfigError(f"{where}: no agent runs (required and optional are both empty)")
    for field_name in ("required", "optional"):
        for a in getattr(pattern, field_name):
            if a not in known:
                raise PhaseConfigError(f"{where}: {field_name} names unknown agent {a!r}; {hint}")
    both = set(pattern.required) & set(pattern.optional)
    if both:
        raise PhaseConfigError(f"{where}: {sorted(both)} listed as both required and optional")
    runs = set(pattern.required) | set(pattern.optional)
    for s, r in pattern.edges:
        if s not in known:
            raise PhaseConfigError(f"{where}: edge {s}->{r} names unknown sender {s!r}; {hint}")
        if r != COLLECTOR and r not in known:
            raise PhaseConfigError(f"{where}: edge {s}->{r} names unknown receiver {r!r}; {hint}")
        if s not in runs:
            raise PhaseConfigError(f"{where}: edge {s}->{r}: sender {s!r} does not run in this pattern")
        if r != COLLECTOR and r not in runs:
            raise PhaseConfigError(f"{where}: edge {s}->{r}: receiver {r!r} does not run in this pattern")
