"""The roles a team is built from, and how a team config becomes named agents.

A role says what an agent is for; its prompts live in `agents_llm.prompts`. A team is
an ordered list of role names; the order is the priority order (index 0 highest),
which decides mutual pairs and which edge loses when edges would close a cycle.
Duplicates are allowed: `["LeadArchitect", "Researcher", "Researcher"]` gives agents
`LeadArchitect`, `Researcher`, `Researcher_2`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Role:
    name: str
    title: str  # how prompts address it
    uses_rag: bool = False  # only the Researcher queries the store
    sets_objective: bool = False  # its output sets the Current Team Objective


ROLES: dict[str, Role] = {
    "LeadArchitect": Role("LeadArchitect", "Lead Architect", sets_objective=True),
    "Researcher": Role("Researcher", "Researcher", uses_rag=True),
    "DataAnalyst": Role("DataAnalyst", "Data Analyst"),
    "Reviewer": Role("Reviewer", "Reviewer"),
}

DEFAULT_TEAM = ("LeadArchitect", "Researcher", "DataAnalyst", "Reviewer")


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
    for i, role_name in enumerate(roles):
        if role_name not in ROLES:
            raise ValueError(f"unknown role {role_name!r} in team {roles}; known roles: {sorted(ROLES)}")
        counts[role_name] = counts.get(role_name, 0) + 1
        name = role_name if counts[role_name] == 1 else f"{role_name}_{counts[role_name]}"
        members.append(TeamMember(name=name, role=ROLES[role_name], index=i))
    if "Collector" in {m.name for m in members}:
        raise ValueError("'Collector' is reserved for the node that appends; it cannot be a team member")
    return members
