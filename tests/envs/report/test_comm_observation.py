"""observe_comm_adjacency: the last round's communication graph as the observation's last
block, equal to the infos' comm_adjacency; off by default, leaving every other block as it was."""

from __future__ import annotations

import numpy as np
import pytest

from report_protocol import ActionTable
from tests.pettingzoo_api import strict_parallel_api_test

from .conftest import StubRetriever, make_env

TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(len(TEAM))


def _joint(**kw):
    out = {a: T.solo for a in TEAM}
    out.update(kw)
    return out


def test_pettingzoo_parallel_api_with_the_adjacency_observed():
    strict_parallel_api_test(make_env(observe_comm_adjacency=True), num_cycles=10)


def test_observed_adjacency_equals_the_infos_after_a_broadcast_and_a_query_and_the_default_is_unchanged():
    on = make_env(retriever=StubRetriever(), observe_comm_adjacency=True, infos="stackable")
    off = make_env(retriever=StubRetriever(), infos="stackable")
    n = on.n
    assert on.obs_dim == off.obs_dim + n * n
    layout_on, layout_off = on.observation_layout(), off.observation_layout()
    assert layout_on[:-1] == layout_off and "comm_adjacency" not in {b for b, _, _ in layout_off}
    name, start, stop = layout_on[-1]
    assert (name, start, stop) == ("comm_adjacency", off.obs_dim, on.obs_dim)

    obs_on, info_on = on.reset(seed=0)
    obs_off, _ = off.reset(seed=0)
    for a in TEAM:
        assert on.observation_space(a).contains(obs_on[a])
        assert not obs_on[a]["observation"][start:stop].any()  # no round yet: no edges
        assert np.array_equal(obs_on[a]["observation"][:start], obs_off[a]["observation"])

    rounds = [
        _joint(LeadArchitect=T.broadcast, Reviewer=T.query(TEAM.index("DataAnalyst"))),
        _joint(Researcher=T.query(TEAM.index("LeadArchitect"))),
        _joint(),
    ]  # everyone works alone: the matrix empties again
    expected = [{(0, 1), (0, 2), (0, 3), (2, 3)}, {(0, 1)}, set()]  # (sender, receiver)
    for joint, edges in zip(rounds, expected):
        obs_on, _, _, _, info_on = on.step(joint)
        obs_off, _, _, _, _ = off.step(joint)
        for a in TEAM:
            seen = obs_on[a]["observation"][start:stop].reshape(n, n)
            assert np.array_equal(seen, info_on[a]["comm_adjacency"]), a
            assert {tuple(e) for e in np.argwhere(seen)} == edges
            assert on.observation_space(a).contains(obs_on[a])
            assert np.array_equal(obs_on[a]["observation"][:start], obs_off[a]["observation"])  # nothing else moved
        assert {tuple(e) for e in on.comm_graph().T.tolist()} == edges


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_a_non_boolean_setting_is_a_clear_error(bad):
    with pytest.raises(ValueError, match=r"observe_comm_adjacency must be true or false, got"):
        make_env(observe_comm_adjacency=bad)


def test_a_learner_trains_on_the_wider_observation():
    """QMIX's agent network reads the whole vector: an episode with the adjacency observed
    is stored at the env's width and learned from."""
    import algos
    from algos.training.rollout import run_episode

    env = make_env(retriever=StubRetriever(), observe_comm_adjacency=True, infos="stackable", max_rounds=2)
    spec = algos.EnvSpec.from_env(env)
    assert spec.obs_dim == env.obs_dim
    algo = algos.build("qmix", spec, {"hidden_dim": 16, "batch_size": 1, "learning_starts": 1}, seed=0)
    episode, _ = run_episode(env, algo, spec, explore=True, seed=0)
    assert episode.obs.shape[-1] == env.obs_dim
    algo.observe(episode)
    assert "loss" in algo.update()
