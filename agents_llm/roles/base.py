"""A role as one object, the registry of roles, and how a team config becomes named agents.

A `Role` declares everything the team does differently for it: how prompts address it
(`title`), its prompts (`system`, the learned policy's round `task`, the `phase_tasks`
hints, the handcrafted pipeline's `objectives`, one per phase), its extractive rule
(`extractive`: what the extractive team's agent of this role says, `agents_llm.extractive`)
and its part in the handcrafted pipeline (`pipeline_part`, a `report_protocol.pipeline_parts`
name), plus the flags the engine reads (`uses_rag`, `sets_objective`, `sees_gaps`,
`reports_gaps`). The built-in roles are one module each (`agents_llm/roles/<role>.py`).

A team is an ordered list of role names; the order is the priority order (index 0
highest), which decides mutual pairs and which edge loses when edges would close a cycle.
Duplicates are allowed: `["LeadArchitect", "Researcher", "Researcher"]` gives agents
`LeadArchitect`, `Researcher`, `Researcher_2`. An entry `"module:attr"` names a `Role`
defined outside the package: `build_team` imports it and registers it, so a new role is
one file plus its entry in `env.team`. A role that lacks any member is refused when a
team is built, with its name and what it lacks (`RoleError`); nothing falls back to
another role's prompts.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Mapping, Optional, Sequence

from report_protocol.pipeline_parts import PIPELINE_PARTS
from report_protocol.vocabulary import PHASE_ORDER


class _AsTask:
    """The marker of a phase objective that is the role's own round task."""

    def __repr__(self) -> str:
        return "AS_TASK"


AS_TASK = _AsTask()  # objectives[phase] = AS_TASK: in that phase the role is given its `task`


@dataclass(frozen=True)
class ExtractiveTurn:
    """What an extractive role's rule has in one turn (`agents_llm.extractive.engine.ExtractiveEngine.run_turn`)."""

    report: Any  # ReportState
    inbox: Sequence[tuple[str, str]]
    memory: str
    queries: Sequence[str]
    chunks: Sequence[Any]
    directive: Any  # the plan's Directive to the agent (v2), or None
    focus: str


@dataclass(frozen=True)
class ExtractiveRule:
    """A role's rule on the extractive team: `compose(engine, turn)` is what its agent says;
    `reads_key_terms`: the rule works from the task's key terms (recorded in the trace)."""

    compose: Callable[[Any, ExtractiveTurn], str]
    reads_key_terms: bool = False


class RoleError(ValueError):
    """A role that cannot be used: unknown, or lacking members (the message names them)."""


@dataclass(frozen=True)
class Role:
    name: str
    title: str = ""  # how prompts address it
    system: Optional[str] = None  # system prompt
    task: Optional[str] = None  # what it produces in a round of the learned policy (no phase)
    # The handcrafted pipeline's objective per phase (every name in report_protocol.vocabulary.PHASE_ORDER;
    # AS_TASK: its `task`).
    objectives: Optional[Mapping[str, Any]] = field(default=None, hash=False)
    # Hints that replace `task` when a plan names another phase label (RoundPlan.phase); optional.
    phase_tasks: Mapping[str, str] = field(default_factory=dict, hash=False)
    extractive: Optional[ExtractiveRule] = None  # its rule on the extractive team
    pipeline_part: Optional[str] = None  # report_protocol.pipeline_parts: its part in the handcrafted pipeline
    uses_rag: bool = False  # it queries the store (the Researcher)
    sets_objective: bool = False  # its output sets the Current Team Objective
    sees_gaps: bool = False  # it is shown the subtopics PLANNING found the sources do not cover
    reports_gaps: bool = False  # its PLANNING deficiencies become the report's deficient topics

    def missing(self) -> list[str]:
        """What this role lacks to be used in a team ([] when complete)."""
        out = []
        if not self.title:
            out.append("title")
        if not self.system:
            out.append("system prompt (system)")
        if not self.task:
            out.append("round task (task)")
        lacking = [p for p in PHASE_ORDER if p not in (self.objectives or {}) or not (self.objectives or {})[p]]
        if lacking:
            out.append(f"phase objectives (objectives) for {lacking}")
        if not isinstance(self.extractive, ExtractiveRule):
            out.append("extractive rule (extractive)")
        if self.pipeline_part not in PIPELINE_PARTS:
            out.append(f"handcrafted-pipeline part (pipeline_part, one of {list(PIPELINE_PARTS)})")
        return out

    def task_for(self, phase: Optional[str]) -> str:
        """Its round task, or the hint for `phase` where it declares one."""
        if phase is not None:
            hint = self.phase_tasks.get(phase)
            if hint:
                return hint
        assert self.task is not None, f"role {self.name!r} has no task (build_team refuses it)"
        return self.task

    def objective(self, phase: str) -> str:
        """Its objective in a handcrafted phase (its task where it declares AS_TASK)."""
        text = (self.objectives or {}).get(phase, AS_TASK)
        return self.task_for(None) if text is AS_TASK else str(text)


ROLES: dict[str, Role] = {}  # every registered role, by name, in registration order (the built-ins first)

DEFAULT_TEAM = ("LeadArchitect", "Researcher", "DataAnalyst", "Reviewer")


def register_role(role: Role, *, replace: bool = False) -> Role:
    """Add `role` to the registry (its name must be new unless `replace`); returns it."""
    if not isinstance(role, Role):
        raise RoleError(f"register_role takes an agents_llm.roles.Role, got {type(role).__name__}")
    if not role.name or not role.name.isidentifier():
        raise RoleError(f"a role's name is an identifier (it names agents), got {role.name!r}")
    if role.name == "Collector":
        raise RoleError("'Collector' is reserved for the node that appends; it cannot be a role")
    if role.name in ROLES and ROLES[role.name] is not role and not replace:
        raise RoleError(f"role {role.name!r} is already registered")
    ROLES[role.name] = role
    return role


def unregister_role(name: str) -> None:
    """Remove a registered role (a plugin's, e.g. after a test)."""
    ROLES.pop(name, None)


def get_role(name: str) -> Role:
    """The registered role `name`; `RoleError` naming the known ones otherwise."""
    try:
        return ROLES[name]
    except KeyError:
        raise RoleError(f"unknown role {name!r}; known roles: {sorted(ROLES)}") from None


def check_role(role: Role) -> Role:
    """`role` when it is complete; `RoleError` naming it and every member it lacks otherwise."""
    lacking = role.missing()
    if lacking:
        raise RoleError(
            f"role {role.name!r} lacks: {'; '.join(lacking)} (a Role declares them together, see agents_llm/roles)"
        )
    return role


def resolve_role(entry: str) -> Role:
    """A team entry: a registered role's name, or `"module:attr"` naming a `Role` to register."""
    if ":" not in entry:
        return get_role(entry)
    module, _, attr = entry.partition(":")
    try:
        role = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise RoleError(f"team entry {entry!r}: cannot load {attr!r} from module {module!r} ({e})") from None
    if not isinstance(role, Role):
        raise RoleError(f"team entry {entry!r} is a {type(role).__name__}, not an agents_llm.roles.Role")
    return register_role(role)


def check_recorded_team(team: Any, plugin_modules: Collection[str], *, source: str) -> None:
    """Refuse, with one line, a team read from a file anyone may have written (a checkpoint):
    each entry must be a registered role's name, or ``"module:attr"`` whose module is one of
    ``plugin_modules`` (those the command line's ``plugins=[...]`` imported). Nothing is
    imported: ``build_team`` would import any module such an entry names."""
    entries = [team] if isinstance(team, str) else list(team or [])
    for entry in entries:
        name = str(entry)
        if name in ROLES:
            continue
        module = name.partition(":")[0] if ":" in name else None
        if module is not None and module in plugin_modules:
            continue
        shown = " ".join(name.split())[:120]
        if module is None:
            raise RoleError(
                f"{source} records role {shown!r}, which is not registered (known roles: {sorted(ROLES)}); "
                "a plugin that registers it goes in plugins=[...]"
            )
        raise RoleError(
            f"{source} records role {shown!r} from module {module[:80]!r}, which is not among plugins=[...]: "
            "a checkpoint never imports the code it names; pass the module as plugins=[...] to use it"
        )


@dataclass(frozen=True)
class TeamMember:
    name: str  # unique agent name, used as the PettingZoo agent id
    role: Role
    index: int  # priority: 0 is highest


def build_team(roles: Sequence[str] = DEFAULT_TEAM) -> list[TeamMember]:
    """Named, prioritised members for a list of role names (duplicates get `_2`, `_3`)."""
    if isinstance(roles, str):
        raise TypeError(f"team must be a list of role names, got the string {roles!r}")
    roles = list(roles)
    if not roles:
        raise ValueError("team is empty: give at least one role, e.g. ['LeadArchitect', 'Researcher']")
    counts: dict[str, int] = {}
    members = []
    for i, entry in enumerate(roles):
        if ":" not in str(entry) and entry not in ROLES:
            raise RoleError(f"unknown role {entry!r} in team {roles}; known roles: {sorted(ROLES)}")
        role = check_role(resolve_role(str(entry)))
        counts[role.name] = counts.get(role.name, 0) + 1
        name = role.name if counts[role.name] == 1 else f"{role.name}_{counts[role.name]}"
        members.append(TeamMember(name=name, role=role, index=i))
    if "Collector" in {m.name for m in members}:
        raise ValueError("'Collector' is reserved for the node that appends; it cannot be a team member")
    return members


def role_views(member: Callable[[Role], Any]) -> dict[str, Any]:
    """`{name: member(role)}` over the registered roles, in registration order."""
    return {name: member(role) for name, role in ROLES.items()}
