"""run_episode against a small env that exercises the whole contract: a comm graph,
per-round infos, a round budget (truncation), action masks and artifacts()."""

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

import algos
from algos.training.rollout import evaluate, run_episode


class GraphEnv(ParallelEnv):
    metadata = {"name": "graph_env_test"}

    def __init__(self, rounds=3, terminate_at=None):
        self.possible_agents = ["a", "b", "c"]
        self.rounds, self.terminate_at = rounds, terminate_at
        self.state_space = spaces.Box(0, 10, (2,), np.float32)
        self._obs = spaces.Dict(
            {"observation": spaces.Box(0, 10, (2,), np.float32), "action_mask": spaces.Box(0, 1, (4,), np.int8)}
        )
        self.agents = []

    def observation_space(self, agent):
        return self._obs

    def action_space(self, agent):
        return spaces.Discrete(4)

    def state(self):
        return np.array([self.t, 1.0], np.float32)

    def comm_graph(self):
        return self._graph

    def artifacts(self):
        return {"report": "/tmp/report.md"}

    def _observe(self):
        mask = np.array([1, 1, 0, self.t % 2], np.int8)  # action 2 never, action 3 on odd rounds
        return {
            a: {"observation": np.array([self.t, i], np.float32), "action_mask": mask.copy()}
            for i, a in enumerate(self.possible_agents)
        }

    def reset(self, seed=None, options=None):
        self.agents, self.t = list(self.possible_agents), 0
        self._graph = np.zeros((2, 0), np.int64)
        return self._observe(), {a: {} for a in self.agents}

    def step(self, actions):
        self.t += 1
        self._graph = np.array([[0, 1], [1, 2]]) if self.t % 2 else np.array([[2], [0]])
        done_term = self.terminate_at is not None and self.t >= self.terminate_at
        done_trunc = self.t >= self.rounds
        append = self.t == 2
        info = {
            "report_score": 0.1 * self.t,
            "length_score": 0.5,
            "tokens": 10.0,
            "rounds_since_append": 2 if append else 0,
            "prompt_tokens_evaluated": 7,  # an LLM env's prompt work this round: summed per episode
            "prompt_tokens_reused": self.t,
        }
        rew = 1.0 if append else 0.0
        obs = self._observe()
        out = (
            obs,
            {a: rew for a in self.agents},
            {a: done_term for a in self.agents},
            {a: done_trunc and not done_term for a in self.agents},
            {a: dict(info) for a in self.agents},
        )
        if done_term or done_trunc:
            self.agents = []
        return out


def test_rollout_records_graph_state_masks_and_infos():
    env = GraphEnv(rounds=3)
    spec = algos.EnvSpec.from_env(env)
    policy = algos.build("random", spec, seed=0)
    ep, stats = run_episode(env, policy, spec, explore=True)
    assert len(ep) == 3 and not ep.terminated  # cut by the round budget: bootstrap
    assert ep.obs.shape == (4, 3, 2) and ep.state.shape == (4, 2)
    assert ep.state[:, 0].tolist() == [0, 1, 2, 3]  # state recorded with each observation, before the step
    assert not ep.adj[0].any()  # no graph before the first round
    assert ep.adj[1, 0, 1] and ep.adj[1, 1, 2] and ep.adj[1].sum() == 2  # round 1's graph seen at decision 1
    assert ep.adj[2, 2, 0] and ep.adj[2].sum() == 1
    assert not ep.avail[:, :, 2].any()
    assert ep.rewards.tolist() == [0, 1, 0]
    assert ep.extras["rounds_since_append"].tolist() == [0, 2, 0]
    assert stats.infos == {
        "report_score": 0.30000000000000004,
        "length_score": 0.5,
        "tokens": 30.0,
        "prompt_tokens_evaluated": 21.0,
        "prompt_tokens_reused": 6.0,
    }
    assert stats.action_counts.sum() == 9 and stats.action_counts[:, 2].sum() == 0
    m = stats.as_metrics(spec.agents)
    assert m["tokens"] == 30.0 and abs(sum(m[f"act/a/{i}"] for i in range(4)) - 1) < 1e-9


def test_terminated_episode_and_learner_consume_it():
    env = GraphEnv(rounds=5, terminate_at=2)
    spec = algos.EnvSpec.from_env(env)
    learner = algos.build("qmix", spec, {"batch_size": 2, "learning_starts": 2, "hidden_dim": 8}, seed=0)
    for i in range(3):
        ep, _ = run_episode(env, learner, spec, explore=True, seed=i)
        assert ep.terminated and len(ep) == 2
        learner.observe(ep)
    assert learner.buffer.episodes[-1].rewards.tolist() == [
        0.0,
        1.0,
    ]  # default: the reward stays at the round that earned it
    metrics = learner.update()
    assert np.isfinite(metrics["loss"]) and metrics["grad_norm"] > 0
    ev = evaluate(env, learner, spec, 2)
    assert ev["episodes"] == 2 and "act/c/top" in ev and ev["act/a/2"] == 0.0
