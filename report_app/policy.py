"""Who writes the report: a trained checkpoint (checked against the report env and the plugins
the caller names) or the handcrafted pipeline, validated against the team before anything
expensive runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .inputs import ReportInputError

REPORT_ENV = "report_writing_v0"  # the env a write_report checkpoint must have been trained on


@dataclass
class ChosenPolicy:
    name: str
    config: dict[str, Any]
    state: Optional[dict[str, Any]]  # the checkpoint's state; None for the handcrafted pipeline
    team: Sequence[str]  # the checkpoint's team when it names one, else the caller's
    max_rounds: int
    message: str


def team_names(team: Sequence[str]) -> list[str]:
    from agents_llm.roles import build_team

    return [m.name for m in build_team(list(team))]


def _policy_config(policy: str, algo: Optional[Mapping[str, Any]], team: Sequence[str]):
    """Validate the policy's config against the team (its role entries) before anything expensive runs."""
    import algos
    from agents_llm.roles import build_team

    members = build_team(list(team))
    parts = {m.name: str(m.role.pipeline_part) for m in members}  # as the env lists them (EnvSpec.from_env)
    spec = algos.EnvSpec(
        agents=list(parts), obs_dim=1, n_actions=len(team) + 5, state_dim=0, extras={"pipeline_parts": parts}
    )
    cfg = dict(algo or {})
    cfg.pop("name", None)
    return algos.build(policy, spec, cfg)  # raises PhaseConfigError naming phase, pattern and agent


def _max_rounds(policy_obj: Any, default: int) -> int:
    phases = getattr(policy_obj, "phases", None)
    return sum(p.rounds for p in phases) + 1 if phases else default


def choose_policy(
    checkpoint: str | Path | None,
    plugins: Sequence[str],
    algo: Optional[Mapping[str, Any]],
    team: Sequence[str],
    max_rounds: Optional[int],
) -> ChosenPolicy:
    """The checkpoint's policy (its file, plugins, env and team checked) or the handcrafted one
    (its config checked against ``team``); ReportInputError naming what is wrong."""
    if checkpoint is None:
        config = dict(algo or {})
        # A report of its own (no round budget given) runs the pipeline's own plan; a budget fits the phases to it.
        config.setdefault("schedule", "classic" if max_rounds is None else "budget")
        probe = _policy_config("handcrafted", config, team)
        rounds = max_rounds or _max_rounds(probe, 24)
        return ChosenPolicy("handcrafted", config, None, team, rounds, "policy: handcrafted pipeline")

    from algos.plugins import PluginError, check_checkpoint_plugins, load_plugins
    from algos.training import checkpoint as ckpt

    path = ckpt.resolve_checkpoint(checkpoint)
    try:
        state = ckpt.load(path)
    except ckpt.CheckpointError as e:  # empty, truncated, corrupted or foreign: one line naming the file
        raise ReportInputError(str(e)) from None
    try:  # the plugins the caller names are imported; the checkpoint's are only compared with them
        load_plugins(plugins)
        check_checkpoint_plugins(state, plugins, source=f"checkpoint {path}")
    except PluginError as e:
        raise ReportInputError(str(e)) from None
    trained = state["config"]
    trained_env = (trained.get("env") or {}).get("name")
    if trained_env != REPORT_ENV:  # its networks are sized for another env's spaces
        raise ReportInputError(
            f"checkpoint {path} was trained on env {trained_env!r}; write_report plays {REPORT_ENV}: "
            "give a checkpoint of a report_writing run"
        )
    team = (trained.get("env") or {}).get("team") or team
    team_names(team)  # the trained team's roles are checked now, before anything expensive
    rounds = max_rounds or int((trained.get("env") or {}).get("max_rounds") or 12)
    name = trained["algo"]["name"]
    return ChosenPolicy(name, trained["algo"], state, team, rounds, f"policy: {name} checkpoint {path}")
