"""The report env's default infos are what TorchRL can stack; the text stays reachable."""

from __future__ import annotations

import numpy as np
import pytest

from envs.report.infos import STACKABLE_AGENT, STACKABLE_TEAM
from tests.envs.interop.conftest import report_env

SHORT = {"rounds": {"planning": 1, "research": 1, "drafting": 2, "review": 1, "revision": 1}}
KEYS = set(STACKABLE_TEAM) | set(STACKABLE_AGENT) | {"comm_adjacency"}


def _is_stackable(value) -> bool:
    return isinstance(value, (bool, int, float, np.integer, np.floating)) or (
        isinstance(value, np.ndarray) and value.dtype.kind in "biuf"
    )


def test_default_infos_have_the_same_numeric_keys_at_reset_and_every_step_and_the_text_is_in_last_round_info():
    env = report_env()
    n = len(env.possible_agents)
    obs, infos = env.reset(seed=0)
    seen = [infos]
    while env.agents:
        actions = {a: int(np.flatnonzero(obs[a]["action_mask"])[-1]) for a in env.agents}  # a legal action each
        obs, _, _, _, infos = env.step(actions)
        seen.append(infos)
        full = env.last_round_info()
        edges = env.comm_graph()
        for agent, info in infos.items():
            assert set(info) == KEYS, set(info) ^ KEYS
            assert all(_is_stackable(v) for v in info.values()), {k: type(v) for k, v in info.items()}
            assert info["comm_adjacency"].shape == (n, n)
            # the adjacency is the comm graph: [j, i] = 1 for an edge j -> i
            assert sorted(zip(*np.nonzero(info["comm_adjacency"]))) == sorted(zip(edges[0], edges[1]))
            assert env.action_names()[info["action_index"]] == full[agent]["action"]
            assert isinstance(full[agent]["round_outputs"], dict) and isinstance(full[agent]["sections"], list)
            assert full[agent]["report_score"] == info["report_score"]
            # every number of the full record is stackable too (a new one must be listed in report_infos)
            numbers = {k for k, v in full[agent].items() if isinstance(v, (bool, int, float))}
            assert numbers <= KEYS, numbers - KEYS
    assert set(seen[0][env.possible_agents[0]]) == KEYS
    assert not seen[0][env.possible_agents[0]]["comm_adjacency"].any()  # nothing sent before the first round
    assert seen[-1][env.possible_agents[0]]["round"] == len(seen) - 1


def test_full_infos_carry_the_text_and_a_wrong_mode_is_named():
    env = report_env(infos="full")
    _, infos = env.reset(seed=0)
    assert {"task_id", "topic"} <= set(next(iter(infos.values())))
    _, _, _, _, infos = env.step({a: 0 for a in env.agents})
    info = infos[env.possible_agents[0]]
    assert KEYS <= set(info) and isinstance(info["action"], str) and "round_outputs" in info
    with pytest.raises(ValueError, match="infos must be one of stackable, full"):
        report_env(infos="text")


def test_handcrafted_pipeline_refuses_numeric_infos_and_runs_through_rollout_on_the_default_env():
    import algos
    from algos.training.rollout import run_episode

    env = report_env(max_rounds=40)
    spec = algos.EnvSpec.from_env(env)
    policy = algos.build("handcrafted", spec, SHORT)
    env.reset(seed=0, options={"topic": "Sorting networks"})
    policy.begin_episode()
    _, _, _, _, infos = env.step_plan(policy.next_plan({}))
    with pytest.raises(ValueError, match="last_round_info"):
        policy.next_plan(infos)
    # run_episode hands plan-emitting policies env.last_round_info(): the pipeline reaches its end
    policy = algos.build("handcrafted", spec, SHORT)
    _, stats = run_episode(env, policy, spec, explore=False, seed=0)
    assert not env.agents and stats.length >= 5  # every phase ran its round(s)
    phases = [r.get("phase") for r in env.trace.rounds]
    assert {"planning", "research", "drafting"} <= set(phases), phases
    assert stats.infos["tokens"] > 0
