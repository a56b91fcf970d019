"""A role is one object: a new role is one module outside the packages plus its entry in the
team config, and it plays on the extractive and the scripted team, in the learned policy's
rounds and in the handcrafted pipeline; a role lacking a member is refused, naming it."""

from __future__ import annotations

import sys
import textwrap

import pytest

import algos
from agents_llm import phase_prompts, prompts
from agents_llm.roles import DEFAULT_TEAM, ROLES, Role, RoleError, build_team, unregister_role
from algos.training.rollout import run_episode
from report_protocol import ActionTable
from report_protocol.vocabulary import PHASE_ORDER, REVIEW
from tests.handcrafted_team import TeamScript, make_env
from tests.report_doubles import HASHING_JUDGE, HASHING_RAG

MODULE = "summarizer_role_plugin"
ENTRY = f"{MODULE}:ROLE"
# The one file a researcher writes: every member of the role, declared together.
ROLE_FILE = textwrap.dedent(
    """
    from agents_llm.roles import AS_TASK, ExtractiveRule, Role
    from report_protocol import pipeline_parts

    SYSTEM = "You are the Summarizer of a team writing a technical report. You condense what you receive."
    TASK = "Condense the messages you received into two sentences."


    def summarize(engine, turn):
        heard = [line.strip() for _, text in turn.inbox for line in text.splitlines() if line.strip()]
        return "SUMMARY: " + (" ".join(heard[:2]) if heard else "nothing received yet")


    ROLE = Role(
        "Summarizer",
        "Summarizer",
        system=SYSTEM,
        task=TASK,
        objectives={
            "planning": AS_TASK,
            "research": AS_TASK,
            "drafting": AS_TASK,
            "review": "Condense the sections listed below into one line each, with their [SECTION_ID: <id>] tag.",
            "revision": AS_TASK,
        },
        extractive=ExtractiveRule(summarize),
        pipeline_part=pipeline_parts.REVIEW,  # it plays the Reviewer's part in the handcrafted pipeline
    )
    """
)
TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", ENTRY]
DOCS = {
    "overview.md": "# Solid-state batteries\n\nSolid-state batteries replace the liquid electrolyte with a solid one. "
    "Solid-state batteries promise higher energy density and better safety than liquid cells.\n",
    "dendrites.md": "# Dendrite growth\n\nA dendrite is a thin metallic filament of lithium that grows through "
    "the separator during charging. Dendrite growth can short-circuit the cell.\n",
}
TASK = {"id": "ssb", "topic": "Solid-state batteries", "split": "train", "key_terms": ["electrolyte", "dendrite"]}


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The role's module, written outside the packages and importable by its entry."""
    (tmp_path / f"{MODULE}.py").write_text(ROLE_FILE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield sys.modules.get(MODULE)
    unregister_role("Summarizer")  # the registry (and the env's role one-hot) is the process's
    sys.modules.pop(MODULE, None)


def extractive_env(tmp_path, **kw):
    from envs.report.writing import ReportWritingEnv

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in DOCS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    return ReportWritingEnv(
        team=TEAM,
        llm={"backend": "extractive"},
        rag=HASHING_RAG,
        judge=dict(HASHING_JUDGE, key_terms=TASK["key_terms"]),
        tasks=[TASK, dict(TASK, id="ssb-holdout", split="holdout")],
        corpus=str(corpus),
        min_rounds_before_terminate=1,
        infos="full",
        **kw,
    )


def test_a_role_from_outside_the_packages_is_one_file_and_a_team_entry(plugin):
    assert "Summarizer" not in ROLES
    team = build_team(TEAM)
    assert [m.name for m in team] == ["LeadArchitect", "Researcher", "DataAnalyst", "Summarizer"]
    role = team[-1].role
    assert ROLES["Summarizer"] is role and role.pipeline_part == "review"
    # Its prompts are its own in every phase: no other role's (no DataAnalyst fallback).
    chat = prompts.agent_messages("Summarizer", topic="T", objective="", outline=[], summary="", inbox=[])
    assert chat[0]["content"] == role.system and chat[1]["content"].endswith(f"Task: {role.task}")
    for phase in PHASE_ORDER:
        assert phase_prompts.system_prompt("Summarizer", phase).startswith(role.system)
        expected = role.objectives[REVIEW] if phase == REVIEW else role.task
        assert phase_prompts.objective("Summarizer", phase).endswith(f": {expected}")
    assert phase_prompts.OBJECTIVE[REVIEW]["Summarizer"] == role.objectives[REVIEW]


def test_the_new_role_plays_on_the_extractive_team_in_both_policies(plugin, tmp_path):
    env = extractive_env(tmp_path, max_rounds=8)
    spec = algos.EnvSpec.from_env(env)
    assert spec.extras["pipeline_parts"]["Summarizer"] == "review"
    # The handcrafted pipeline: the Summarizer takes the review part its role declares.
    policy = algos.build("handcrafted", spec, {"name": "handcrafted"}, seed=0)
    review = next(p for p in policy.phases if p.name == REVIEW)
    assert review.rounds >= 1 and review.patterns[0].required == ("Summarizer",)
    run_episode(env, policy, spec, explore=False, seed=0)
    turns = [r["agents"]["Summarizer"] for r in env.trace.rounds if "Summarizer" in r["agents"]]
    assert turns and all(t["response"].startswith("SUMMARY: ") for t in turns)
    assert turns[0]["charged_prompt"][0]["content"] == phase_prompts.system_prompt("Summarizer", REVIEW)
    # The learned policy's actions: everyone solo, the Summarizer queries the Researcher.
    table = ActionTable(4)
    env.reset(seed=0)
    _, _, _, _, infos = env.step({**{a: table.solo for a in env.possible_agents}, "Summarizer": table.query(1)})
    out = infos["Summarizer"]["round_outputs"]["Summarizer"]
    assert out.startswith("SUMMARY: ") and out != "SUMMARY: nothing received yet"
    charged = env.trace.rounds[-1]["agents"]["Summarizer"]["charged_prompt"]
    assert charged[0]["content"] == ROLES["Summarizer"].system


def test_the_new_role_plays_on_the_scripted_team(plugin):
    script = TeamScript()
    seen: list = []

    def responder(request):
        seen.append(request.messages)
        return script(request)

    env = make_env(responder, team=TEAM, max_rounds=8)
    spec = algos.EnvSpec.from_env(env)
    policy = algos.build("handcrafted", spec, {"name": "handcrafted"}, seed=0)
    run_episode(env, policy, spec, explore=False, seed=0)
    role = ROLES["Summarizer"]
    review_chats = [m for m in seen if m[0][1] == phase_prompts.system_prompt("Summarizer", REVIEW)]
    assert review_chats, "the Summarizer was never asked in REVIEW"
    assert review_chats[0][-1][1].endswith(role.objectives[REVIEW])
    assert not any(m[0][1].startswith(prompts.SYSTEM["DataAnalyst"]) and role.task in m[-1][1] for m in seen)


@pytest.mark.parametrize(
    "kwargs, lacking",
    [
        ({}, ["system prompt", "round task", "phase objectives", "extractive rule", "handcrafted-pipeline part"]),
        ({"system": "S", "task": "T", "objectives": {"planning": "P"}}, ["'research'", "'revision'", "extractive"]),
        ({"system": "S", "task": "T", "pipeline_part": "editor"}, ["handcrafted-pipeline part", "'lead'"]),
    ],
)
def test_a_role_lacking_a_member_is_refused_naming_the_role_and_what_it_lacks(kwargs, lacking, tmp_path, monkeypatch):
    (tmp_path / "half_role_plugin.py").write_text(
        f"from agents_llm.roles import Role\nROLE = Role('HalfRole', 'Half role', **{kwargs!r})\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(RoleError) as err:
            build_team([*DEFAULT_TEAM, "half_role_plugin:ROLE"])
    finally:
        unregister_role("HalfRole")
        sys.modules.pop("half_role_plugin", None)
    assert "'HalfRole'" in str(err.value)
    for word in lacking:
        assert word in str(err.value), (word, str(err.value))


def test_an_unknown_role_has_no_prompts_of_another_role():
    with pytest.raises(RoleError, match="unknown role 'Editor'"):
        prompts.task_for("Editor", None)
    with pytest.raises(RoleError, match="unknown role 'Editor'"):
        phase_prompts.system_prompt("Editor", REVIEW)


def test_every_built_in_role_is_complete():
    assert list(ROLES)[:4] == list(DEFAULT_TEAM)
    for name in DEFAULT_TEAM:
        assert ROLES[name].missing() == [], name
        assert isinstance(ROLES[name], Role)
