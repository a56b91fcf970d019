"""The roles a team is built from: one module per built-in role, each declaring its `Role`
(prompts, extractive rule, handcrafted-pipeline part; see `agents_llm.roles.base`), and
the registry a team config is resolved against. A role from outside the package is one
module defining a `Role`, named in `env.team` as `"module:attr"` (or registered with
`register_role`)."""

from __future__ import annotations

from . import data_analyst, lead_architect, researcher, reviewer
from .base import (
    AS_TASK,
    DEFAULT_TEAM,
    ROLES,
    ExtractiveRule,
    ExtractiveTurn,
    Role,
    RoleError,
    TeamMember,
    build_team,
    check_recorded_team,
    check_role,
    get_role,
    register_role,
    resolve_role,
    role_views,
    unregister_role,
)

for _module in (lead_architect, researcher, data_analyst, reviewer):  # the one-hot order of the observation
    register_role(_module.ROLE)

__all__ = [
    "AS_TASK",
    "DEFAULT_TEAM",
    "ROLES",
    "ExtractiveRule",
    "ExtractiveTurn",
    "Role",
    "RoleError",
    "TeamMember",
    "build_team",
    "check_recorded_team",
    "check_role",
    "get_role",
    "register_role",
    "resolve_role",
    "role_views",
    "unregister_role",
]
