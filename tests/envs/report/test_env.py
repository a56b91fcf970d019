"""ReportWritingEnv: PettingZoo API and seeding, spaces and observations, rewards, the
RoundPlan extension, and every bad input the issue lists."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

import envs
from tests.pettingzoo_api import strict_parallel_api_test, strict_parallel_seed_test
from agents_llm import prompts
from agents_llm.backends import RetryPolicy
from agents_llm.judges import JudgeResult
from report_protocol import ActionTable

from .conftest import HASHING_JUDGE, HASHING_RAG, SlowForRole, StubRetriever, make_env, scripted

TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(4)


def joint(**kw):
    out = {a: T.solo for a in TEAM}
    out.update(kw)
    return out


def test_pettingzoo_parallel_api():
    strict_parallel_api_test(make_env(), num_cycles=10)


def test_pettingzoo_parallel_seed():
    strict_parallel_seed_test(lambda: make_env(backend=scripted()), num_cycles=6)


def test_make_through_the_registry_and_spaces():
    env = envs.make(
        "report_writing_v0",
        llm={"backend": "scripted"},
        rag=HASHING_RAG,
        judge=HASHING_JUDGE,
        team=["LeadArchitect", "Researcher", "Researcher", "DataAnalyst", "Reviewer"],
    )
    assert env.possible_agents == ["LeadArchitect", "Researcher", "Researcher_2", "DataAnalyst", "Reviewer"]
    assert env.action_space("Reviewer").n == 10
    obs, infos = env.reset(seed=3)
    layout = dict((n, (a, b)) for n, a, b in env.observation_layout())
    assert layout["summary"][1] == env.obs_dim
    for i, a in enumerate(env.possible_agents):
        o = obs[a]
        assert o["observation"].dtype == np.float32 and o["observation"].shape == (env.obs_dim,)
        assert o["action_mask"].dtype == np.int8 and env.observation_space(a).contains(o)
        s, e = layout["agent"]
        assert np.argmax(o["observation"][s:e]) == i
    s, e = layout["role"]
    assert np.array_equal(obs["Researcher"]["observation"][s:e], obs["Researcher_2"]["observation"][s:e])
    assert env.state().shape == env.state_space.shape
    assert env.comm_graph().shape == (2, 0) and env.comm_graph().dtype == np.int64


def test_observation_and_state_before_the_step_and_the_comm_graph():
    env = make_env(retriever=StubRetriever())
    obs0, _ = env.reset(seed=0)
    state0 = env.state()
    layout = {n: (a, b) for n, a, b in env.observation_layout()}
    obs1, *_ = env.step(joint(LeadArchitect=T.broadcast, Reviewer=T.query(2)))
    state1 = env.state()
    assert not np.array_equal(state0, state1)
    # The state recorded with obs0 is the one before the step: round 0, nothing spent.
    assert state0[0] == 0.0 and state1[0] == pytest.approx(1 / env.max_rounds)
    s, e = layout["own_last_action"]
    assert np.argmax(obs1["LeadArchitect"]["observation"][s:e]) == T.broadcast
    s, e = layout["others_last_actions"]
    others = obs1["LeadArchitect"]["observation"][s:e]
    assert others[T.solo] == pytest.approx(2 / 3) and others[T.query(2)] == pytest.approx(1 / 3)
    s, e = layout["tokens"]
    assert obs1["LeadArchitect"]["observation"][s] > 0
    graph = env.comm_graph()
    assert sorted(map(tuple, graph.T.tolist())) == [(0, 1), (0, 2), (0, 3), (2, 3)]
    assert envs.get_comm_graph(env).shape == graph.shape


class StepJudge:
    """Scores 0.1 per section: the env's reward must equal the configured deltas."""

    async def score(self, report, ledger=None):
        return JudgeResult(score=0.1 * len(report.sections), components={"sections": len(report.sections)})


def test_reward_deltas_reach_the_env_at_the_round_they_are_earned():
    env = make_env(
        retriever=StubRetriever(),
        judge_obj=StepJudge(),
        judge={
            "kind": "reference",
            "w_score": 2.0,
            "w_length": 0.5,
            "embedding": "hashing",
            "length_measure": "chars",  # the Gaussian's arithmetic on raw characters
        },
        max_rounds=5,
    )
    env.reset(seed=1)
    rewards, infos = [], []
    for acts in [joint(), joint(DataAnalyst=T.append), joint(), joint(), joint(Reviewer=T.append)]:
        _, r, _, _, info = env.step(acts)
        rewards.append(r["LeadArchitect"])
        assert len(set(r.values())) == 1  # shared team reward
        infos.append(info["LeadArchitect"])
    chars = [h.chars for h in env.tracker.history]
    assert len(chars) == 2 and chars[0] > 0 and chars[1] > chars[0]
    ls = [env.tracker.length_score(c) for c in (0, chars[0], chars[1])]  # the configured length preset
    assert rewards[0] == rewards[2] == rewards[3] == 0.0
    assert rewards[1] == pytest.approx(2.0 * 0.1 + 0.5 * (ls[1] - ls[0]))
    assert rewards[4] == pytest.approx(2.0 * 0.1 + 0.5 * (ls[2] - ls[1]))
    assert [i["rounds_since_append"] for i in infos] == [0, 2, 0, 0, 3]
    assert infos[4]["report_score"] == pytest.approx(0.2) and infos[4]["length_score"] == pytest.approx(ls[2])
    assert all(i["tokens"] > 0 for i in infos)
    assert infos[4]["end_reason"] == "truncated"


def test_terminate_majority_ends_the_episode_and_stepping_after_the_end_raises():
    env = make_env(retriever=StubRetriever(), min_rounds_before_terminate=1)
    env.reset(seed=0)
    env.step(joint(DataAnalyst=T.append))
    _, _, term, trunc, info = env.step(joint(LeadArchitect=T.terminate, Reviewer=T.terminate))
    assert all(term.values()) and not any(trunc.values())
    assert info["Reviewer"]["end_reason"] == "terminated" and env.agents == []
    with pytest.raises(RuntimeError, match="finished episode"):
        env.step(joint())
    assert env.trace.end["reason"] == "terminated"
    assert env.report.sections  # the report survives the end


def test_masked_terminate_falls_back_to_solo_and_is_recorded():
    env = make_env(retriever=StubRetriever())
    env.reset(seed=0)
    _, _, term, _, info = env.step(joint(LeadArchitect=T.terminate, Reviewer=T.terminate, Researcher=T.query(1)))
    assert not any(term.values())  # the report is empty: terminate is masked
    assert info["LeadArchitect"]["effective_action"] == "solo_process"
    assert "empty" in info["LeadArchitect"]["denied"] and "itself" in info["Researcher"]["denied"]
    denied = env.trace.rounds[-1]["denied"]
    assert {d["agent"] for d in denied} == {"LeadArchitect", "Reviewer", "Researcher"}


def test_out_of_range_and_unknown_agents_are_clear_errors():
    env = make_env(retriever=StubRetriever())
    env.reset(seed=0)
    with pytest.raises(ValueError, match="out of range: Discrete\\(9\\)"):
        env.step(joint(Reviewer=9))
    with pytest.raises(ValueError, match="out of range"):
        env.step(joint(Reviewer=-1))
    with pytest.raises(ValueError, match="must be an integer"):
        env.step(joint(Reviewer="append"))
    with pytest.raises(KeyError, match="unknown agent name"):
        env.step({**joint(), "Writer": 0})
    with pytest.raises(KeyError, match="missing action"):
        env.step({"LeadArchitect": 0})
    env.step(joint())  # the env is still usable after rejected input
    assert env.round == 1


def test_step_before_reset_raises():
    with pytest.raises(RuntimeError, match="before reset"):
        make_env().step(joint())


def test_task_without_a_topic_is_rejected():
    with pytest.raises(ValueError, match="no topic"):
        make_env(tasks=[{"id": "t1", "topic": "  "}])
    with pytest.raises(ValueError, match="no topic"):
        make_env(tasks=[{"id": "t1"}])
    env = make_env(retriever=StubRetriever())
    with pytest.raises(ValueError, match="no topic"):
        env.reset(options={"topic": ""})
    obs, infos = env.reset(options={"topic": "Reward shaping"})
    assert infos["Reviewer"]["topic"] == "Reward shaping"


def test_empty_corpus_runs_with_research_exhausted(tmp_path):
    empty = tmp_path / "empty_corpus"
    empty.mkdir()
    env = make_env(corpus=str(empty), store_path=str(tmp_path / "store"))
    obs, _ = env.reset(seed=0)
    flags = {n: (a, b) for n, a, b in env.observation_layout()}["flags"]
    assert obs["Researcher"]["observation"][flags[0]] == 0.0
    obs, r, *_ = env.step(joint(Researcher=T.append))
    assert obs["Researcher"]["observation"][flags[0]] == 1.0
    last = env.trace.rounds[-1]
    assert last["agents"]["Researcher"]["response"].startswith("[RESEARCH_EXHAUSTED]")
    assert last["collector"]["status"] == "skipped" and r["Researcher"] == 0.0


def test_missing_corpus_path_is_a_clear_error(tmp_path):
    env = make_env(corpus=str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="neither"):
        env.reset(seed=0)


def test_llm_timeout_mid_round_is_recorded_and_the_round_goes_on():
    backend = SlowForRole("Reviewer", hang_s=3.0, timeout_s=0.2, retry=RetryPolicy(max_attempts=1))
    env = make_env(backend=backend, retriever=StubRetriever())
    env.reset(seed=0)
    _, _, _, _, info = env.step(joint(DataAnalyst=T.append, Reviewer=T.query(2)))
    rec = env.trace.rounds[-1]
    assert "LLMTimeoutError" in rec["agents"]["Reviewer"]["error"]
    assert rec["agents"]["DataAnalyst"]["response"]
    assert rec["collector"]["status"] == "appended" and env.report.sections
    assert info["Reviewer"]["appended"] is True


def test_malformed_judge_json_is_a_flagged_fallback_not_a_crash():
    judge_backend = scripted(responder=lambda req: "this is not JSON {", retry=RetryPolicy(max_attempts=1))
    from agents_llm.judges import make_judge

    judge = make_judge({"kind": "llm", "judge_retries": 0}, backend=judge_backend)
    env = make_env(retriever=StubRetriever(), judge_obj=judge, judge={"kind": "llm", "length_measure": "chars"})
    env.reset(seed=0)
    _, r, _, _, info = env.step(joint(DataAnalyst=T.append))
    assert info["DataAnalyst"]["judge_flagged"] is True
    assert info["DataAnalyst"]["report_score"] == 0.0
    # With the score held, the reward is the length term alone.
    assert r["DataAnalyst"] == pytest.approx(env.tracker.length_score(env.report.chars) - env.tracker.length_score(0))
    assert env.trace.rounds[-1]["scores"]["judge_flagged"] is True and env.report.sections


def test_token_budget_truncates_cleanly_with_the_reason():
    env = make_env(retriever=StubRetriever(), llm={"backend": "scripted", "episode_token_budget": 300})
    env.reset(seed=0)
    _, _, term, trunc, info = env.step(joint(DataAnalyst=T.append))
    if not any(trunc.values()):
        _, _, term, trunc, info = env.step(joint(DataAnalyst=T.append))
    assert all(trunc.values()) and not any(term.values())
    assert info["LeadArchitect"]["end_reason"] == "budget_exhausted"
    assert "token budget exhausted" in info["LeadArchitect"]["budget_exhausted"]
    assert env.trace.end["reason"] == "budget_exhausted"


def test_an_unexpected_error_inside_a_round_keeps_report_and_trace(tmp_path):
    class Broken(StubRetriever):
        calls = 0

        def retrieve(self, queries):
            raise RuntimeError("store went away")

    env = make_env(retriever=Broken(), output_dir=str(tmp_path))
    env.reset(seed=0)
    env.step(joint(DataAnalyst=T.append))  # a retrieval error is recorded, not raised
    assert "store went away" in env.trace.rounds[-1]["agents"]["Researcher"]["retrieval"]["error"]

    async def boom(*a, **k):
        raise RuntimeError("bug in a round")

    env.engine.collector.run = boom
    with pytest.raises(RuntimeError, match="bug in a round"):
        env.step(joint(DataAnalyst=T.append))
    assert env.trace.end["reason"] == "error" and "bug in a round" in env.trace.end["detail"]
    paths = env.artifacts()
    doc = json.loads(open(paths["trace"]).read())
    assert doc["end"]["reason"] == "error" and len(doc["rounds"]) == 1
    assert env.report.sections and env.report.sections[0].content in open(paths["report"]).read()
    with pytest.raises(RuntimeError, match="finished episode"):
        env.step(joint())


def test_step_plan_runs_a_fixed_policy_plan_with_phase_prompts_and_a_gate():
    env = make_env(retriever=StubRetriever(), backend=scripted(rules=[(r"Answer YES or NO", "YES, it is.")]))
    env.reset(seed=0)
    plan = {
        "acting": ["LeadArchitect", "DataAnalyst"],
        "phase": "drafting",
        "edges": [["LeadArchitect", "DataAnalyst"], ["DataAnalyst", "Collector"]],
        "instructions": {"DataAnalyst": "Keep it to one paragraph."},
        "gate_check": {"agent": "Reviewer", "question": "Is the first section written?"},
    }
    obs, r, term, trunc, info = env.step_plan(plan)
    rec = env.trace.rounds[-1]
    assert (
        rec["source"] == "plan" and rec["phase"] == "drafting" and rec["order"] == [["LeadArchitect"], ["DataAnalyst"]]
    )
    prompt = rec["agents"]["DataAnalyst"]["prompt"][1]["content"]
    # The phase label picks phase prompts: not the learned-policy task, and the plan's instruction is shown.
    assert prompts.TASK["DataAnalyst"] not in prompt and "drafting" in prompt.lower()
    assert "Keep it to one paragraph." in prompt
    assert info["DataAnalyst"]["gate_passed"] is True and rec["gate"]["passed"] is True
    assert info["DataAnalyst"]["action"] == "append" and info["Researcher"]["action"] == "solo_process"
    assert rec["actions"]["Researcher"]["effective"] == "idle"
    # The append was scored (the scripted double's hash text earns no supported length, so no reward).
    assert env.report.sections and len(env.tracker.history) == 1 and env.tracker.history[0].length_chars == 0.0
    with pytest.raises(ValueError, match="unknown agent"):
        env.step_plan({"acting": ["Writer"]})
    with pytest.raises(ValueError, match="unknown keys"):
        env.step_plan({"acting": ["Reviewer"], "whom": 1})


def test_step_works_inside_a_running_event_loop_and_astep_is_async():
    env = make_env(retriever=StubRetriever())
    env.reset(seed=0)

    async def main():
        env.step(joint())  # a notebook calls the sync API from inside a loop
        return await env.astep(joint(DataAnalyst=T.append))

    _, r, *_ = asyncio.run(main())
    assert env.round == 2 and env.report.sections


def test_two_envs_in_one_process_do_not_share_episode_state():
    a, b = make_env(retriever=StubRetriever()), make_env(retriever=StubRetriever())
    a.reset(seed=0)
    b.reset(seed=0)
    a.step(joint(DataAnalyst=T.append))
    assert a.report.sections and b.report.is_empty
    assert a.ledger is not b.ledger and a.ledger.total.total > 0 and b.ledger.total.total == 0


def test_holdout_split_uses_holdout_topics():
    from envs.report.tasks import load_tasks

    holdout = {t.topic for t in load_tasks(split="holdout")}
    train = {t.topic for t in load_tasks(split="train")}
    assert holdout and train and not holdout & train
    env = make_env(retriever=StubRetriever(), split="holdout")
    for seed in range(4):
        env.reset(seed=seed)
        assert env.task.topic in holdout
