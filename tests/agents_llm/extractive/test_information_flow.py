"""The extractive team: who talks to whom changes the report and its cost."""

from __future__ import annotations

import pytest

from report_protocol import ActionTable

AGENTS = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(4)
SOLO, BROADCAST, APPEND = T.solo, T.broadcast, T.append


def joint(**kw):
    return {a: kw.get(a, SOLO) for a in AGENTS}


def play(env, rounds):
    env.reset(seed=0)
    infos = {}
    for actions in rounds:
        _, _, _, _, infos = env.step(actions)
    return infos["Researcher"]


def test_v1_a_researcher_that_never_reaches_the_collector_scores_lower(make_env):
    # Same rounds, same appender count; only whether the Researcher's output gets to the Collector.
    # (v1: its Collector has no fallback to source sentences; v2's does, as the LLM Collector: test_rules_v2.)
    cut_off = [joint(Reviewer=APPEND)] * 4  # the Researcher works alone; the Reviewer has only deficiencies
    direct = [joint(Researcher=APPEND)] * 4
    relayed = [joint(Reviewer=T.query(1)), joint(Reviewer=APPEND)] * 2  # Researcher -> Reviewer -> Collector
    scores = {
        name: play(make_env(extractive={"version": 1}), rounds)["report_score"]
        for name, rounds in [("cut_off", cut_off), ("direct", direct), ("relayed", relayed)]
    }
    assert scores["cut_off"] == 0.0
    assert scores["direct"] > scores["cut_off"]
    assert scores["relayed"] > scores["cut_off"]


def test_reviewer_deficiencies_sent_to_the_researcher_raise_coverage_next_round(make_env):
    def coverage_after(second_round):
        env = make_env()
        play(env, [joint(Researcher=APPEND), second_round])
        return env.resources.judge().coverage(env.report), env

    told, env_told = coverage_after(joint(Researcher=APPEND, Reviewer=BROADCAST))
    untold, env_untold = coverage_after(joint(Researcher=APPEND))
    assert told > untold
    # The queries show why: the told Researcher searched for what the Reviewer listed as missing.
    queries = env_told.trace.rounds[-1]["agents"]["Researcher"]["retrieval"]["queries"]
    deficiencies = env_told.trace.rounds[-1]["agents"]["Reviewer"]["response"].splitlines()[0]
    assert deficiencies.startswith("DEFICIENCIES:")
    assert any(term.strip() in " ".join(queries) for term in deficiencies.split(":", 1)[1].split(";"))


def test_broadcast_costs_more_tokens_than_a_query(make_env):
    def tokens_of(second_round):
        env = make_env()
        env.reset(seed=0)
        env.step(joint())  # everyone has an output to send
        _, _, _, _, infos = env.step(second_round)
        return infos["Researcher"]["tokens"]

    broadcast = tokens_of(joint(Researcher=BROADCAST))
    one_query = tokens_of(joint(LeadArchitect=T.query(1)))
    alone = tokens_of(joint())
    assert broadcast > one_query > alone


def test_tokens_are_the_prompts_the_llm_team_would_be_sent(make_env):
    from agents_llm import prompts

    env = make_env()
    env.reset(seed=0)
    env.step(joint(Researcher=APPEND))
    rnd = env.trace.rounds[-1]
    agent_calls = [c for c in rnd["calls"] if c["kind"] == "agent"]
    assert {c["agent"] for c in agent_calls} == set(AGENTS)
    lead = rnd["agents"]["LeadArchitect"]
    counter = env.engine.counter
    call = next(c for c in agent_calls if c["agent"] == "LeadArchitect")
    assert lead["prompt"] == []  # nothing was sent; the prompt it is charged for is kept apart
    assert call["prompt_tokens"] == counter.prompt_tokens(lead["charged_prompt"])
    assert call["completion_tokens"] == counter.count(lead["response"])
    assert lead["charged_prompt"][0]["content"] == prompts.SYSTEM["LeadArchitect"]
    # The Researcher pays two calls (query, answer) and the Collector two (prose, summary), as the LLM team does.
    kinds = sorted(c["kind"] for c in rnd["calls"])
    assert kinds.count("query") == 1 and kinds.count("collector") == 1 and kinds.count("summarizer") == 1
    assert env.ledger.total.total == sum(c["prompt_tokens"] + c["completion_tokens"] for c in rnd["calls"])


def test_v1_roles_follow_their_rules(make_env):
    env = make_env(extractive={"version": 1})
    env.reset(seed=0)
    _, _, _, _, infos = env.step(joint())
    out = infos["Researcher"]["round_outputs"]
    # Nothing received: a generic outline; the Researcher searched for the topic alone.
    assert out["LeadArchitect"].startswith("OBJECTIVE: Background")
    assert env.trace.rounds[-1]["agents"]["Researcher"]["retrieval"]["queries"] == ["Solid-state batteries"]
    assert all(line.endswith("]") and "[source: " in line for line in out["Researcher"].splitlines())
    assert out["DataAnalyst"] == ""  # nothing received, no previous output
    assert out["Reviewer"].startswith("DEFICIENCIES:")
    # Heard from the Researcher, the LeadArchitect's outline comes from the retrieved text, not the generic one.
    _, _, _, _, infos = env.step(joint(LeadArchitect=T.query(1), DataAnalyst=T.query(1)))
    out = infos["Researcher"]["round_outputs"]
    assert not out["LeadArchitect"].startswith("OBJECTIVE: Background")
    assert all(
        any(ch.isdigit() for ch in line) or " is " in line or " are " in line or "provide" in line
        for line in out["DataAnalyst"].splitlines()
    )


def test_a_section_without_the_objective_gets_no_heading_from_it(make_env):
    """The objective reaches the Collector only through the appender (proxy v3's information rules)."""
    env = make_env()
    env.reset(seed=0)
    env.step(joint(Researcher=APPEND))  # it never heard the LeadArchitect
    assert env.report.sections and env.report.sections[0].title != "Background"


def test_sections_carry_their_heading_and_references(make_env):
    env = make_env()
    env.reset(seed=0)
    env.step(joint(Researcher=T.query(0)))  # it hears the LeadArchitect's objective
    env.step(joint(Researcher=APPEND))
    section = env.report.sections[0]
    assert section.title == "Background"  # the objective it received from the LeadArchitect
    assert section.sources and "[source:" not in section.content
    assert "## References" in env.report.to_markdown()


def test_judge_llm_is_refused_with_the_extractive_team(make_env):
    with pytest.raises(ValueError, match="judge=reference"):
        make_env(judge={"kind": "llm"})


def test_pettingzoo_parallel_api(make_env):
    from tests.pettingzoo_api import strict_parallel_api_test

    strict_parallel_api_test(make_env(), num_cycles=6)


@pytest.mark.slow
def test_handcrafted_pipeline_completes_on_the_extractive_team(make_env):
    import algos
    from algos.training.rollout import run_episode

    env = make_env(max_rounds=25)
    spec = algos.EnvSpec.from_env(env)
    algo = algos.build("handcrafted", spec, {"name": "handcrafted"}, seed=0)
    _, stats = run_episode(env, algo, spec, explore=False, seed=0)
    assert env.trace.end["reason"] == "terminated", "the pipeline ran out of rounds"  # its own last plan ended it
    assert stats.infos["report_score"] > 0.0 and env.report.sections
