"""Sampled decoding: with temperature > 0 each episode's calls sample with a seed drawn from the
engine's seed and the episode's reset seed, so repeated episodes of a panel cell are replicates."""

from __future__ import annotations

import asyncio

from agents_llm.backends import TokenLedger
from agents_llm.engine import EngineSettings, EpisodeContext, RoundEngine, plan_from_actions
from agents_llm.report_state import ReportState
from agents_llm.roles import build_team
from report_protocol import ActionTable

from tests.report_doubles import StubRetriever, scripted

TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(4)


def _call_seeds(temperature: float, episode_seeds: list[int | None]) -> list[set]:
    seeds = []
    for episode_seed in episode_seeds:
        engine = RoundEngine(
            build_team(TEAM),
            scripted(),
            retriever=StubRetriever(),
            settings=EngineSettings(temperature=temperature, seed=7),
        )
        ctx = EpisodeContext(ReportState("PettingZoo"), TokenLedger(), episode_seed=episode_seed)
        asyncio.run(engine.run(plan_from_actions(TEAM, {a: T.solo for a in TEAM}), ctx))
        seeds.append({r.seed for r in engine.backend.calls})  # type: ignore[union-attr]
    return seeds


def test_sampled_decoding_draws_each_episodes_seed_and_greedy_keeps_the_engines():
    a, b, a_again, none = _call_seeds(0.7, [1, 2, 1, None])
    assert len(a) == 1 and a != b and a == a_again  # replicates differ; one episode seed replays
    assert none == {7}
    assert _call_seeds(0.0, [1, 2]) == [{7}, {7}]
