"""Proxy v2 (docs/extractive_team.md, "v2"): the roles do what the LLM roles are asked to do,
from what they have; v1 stays runnable by name."""

from __future__ import annotations

import asyncio

import pytest

from agents_llm.text.split import sentences
from agents_llm.report_state import ReportState, SourceRef
from report_protocol import ActionTable, Directive
from report_protocol import vocabulary as v

AGENTS = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(4)
RESEARCHER = AGENTS.index("Researcher")


def joint(**kw):
    return {a: kw.get(a, T.solo) for a in AGENTS}


def outputs_after(env, *rounds):
    env.reset(seed=0)
    infos = {}
    for actions in rounds:
        _, _, _, _, infos = env.step(actions)
    return infos["Researcher"]["round_outputs"]


def test_the_data_analyst_output_holds_the_evidence_it_received(make_env):
    for version in (2, 1):
        out = outputs_after(make_env(extractive={"version": version}), joint(), joint(DataAnalyst=T.query(RESEARCHER)))
        received = out["Researcher"].splitlines()
        assert received and all("[source: " in line for line in received)
        holds = [line in out["DataAnalyst"].splitlines() for line in received]
        if version == 2:
            assert all(holds), (received, out["DataAnalyst"])
        else:  # v1 kept only sentences with a digit or a defining phrase: the rule v2 dropped
            assert not all(holds)


def test_the_data_analyst_writes_from_every_sentence_with_its_source():
    from agents_llm.extractive import rules_v2

    inbox = [
        ("Researcher", "Stack pressure suppresses dendrites in ceramic separators. [source: d.md, p. 2]"),
        (
            "Reviewer",
            "DEFICIENCIES: manufacturing\nMany groups study these cells for phones and cars today. [source: o.md]",
        ),
    ]
    memory = "Roll-to-roll manufacturing of composite layers is what pilot plants follow. [source: m.md]"
    out = rules_v2.data_analyst(inbox, memory, None).splitlines()
    assert out == [
        "Stack pressure suppresses dendrites in ceramic separators. [source: d.md, p. 2]",
        "Many groups study these cells for phones and cars today. [source: o.md]",
        "Roll-to-roll manufacturing of composite layers is what pilot plants follow. [source: m.md]",
    ]
    # Told to write a section, it puts that section's evidence first; told to correct one, it opens with the tag.
    told = rules_v2.data_analyst(inbox, memory, Directive(v.WRITE_SECTION, title="Manufacturing")).splitlines()
    assert told[0].startswith("Roll-to-roll manufacturing") and sorted(told) == sorted(out)
    fix = rules_v2.data_analyst(inbox, memory, Directive(v.APPLY_CORRECTION, section_id="S2", title="Dendrites"))
    assert fix.splitlines()[0] == "[SECTION_ID: S2]" and fix.splitlines()[1].startswith("Stack pressure")
    assert rules_v2.data_analyst([], "", None) == ""  # nothing received, nothing to write


def _collect(version, report, contributions, sources=(), reuse=True):
    from agents_llm.engine import EngineSettings
    from agents_llm.extractive import ExtractiveEngine
    from agents_llm.roles import build_team

    engine = ExtractiveEngine(build_team(AGENTS), settings=EngineSettings(reuse_sources=reuse), version=version)

    async def call(agent, kind, messages, max_tokens):
        return engine.counter.clip(messages.output, max_tokens)

    return asyncio.run(
        engine.collector.run(
            call=call, report=report, contributions=contributions, objective="Dendrite growth", sources=list(sources)
        )
    )


OLD = "A dendrite is a thin metallic filament of lithium that grows through the separator."
LAST = "Sulfide electrolytes are softer and easier to press into dense layers than oxides."
NEW = "Stack pressure above five megapascals suppresses dendrite penetration in ceramic separators."


def _report():
    report = ReportState(topic="Solid-state batteries")
    report.append("Dendrite growth", OLD, [])
    report.append("Electrolytes", LAST, [])
    return report


def test_the_collector_never_appends_a_sentence_the_report_already_has():
    # The repeated sentence is in the first section, not the last one (v1 checked only the last).
    contributions = [("DataAnalyst", f"{OLD} [source: d.md]\n{NEW} [source: d.md]"), ("Researcher", LAST)]
    v2 = _collect(2, _report(), contributions)
    assert v2.status == "appended" and sentences(v2.content) == [NEW]
    v1 = _collect(1, _report(), contributions)
    assert OLD in v1.content  # the bug v2 fixes


def test_with_nothing_new_the_collector_falls_back_to_unreported_source_sentences():
    source = SourceRef(source="d.md", page=None, text=f"{OLD} {NEW} Dendrite growth can short-circuit the cell.")
    result = _collect(2, _report(), [("DataAnalyst", f"{OLD} [source: d.md]")], sources=[source])
    assert result.status == "appended" and result.reused_sources == "nothing new to write"
    assert NEW in result.content and OLD not in result.content
    # An appender that has nothing to say, with sources pending: the same fallback (the LLM Collector's).
    empty = _collect(2, _report(), [("DataAnalyst", "")], sources=[source])
    assert empty.status == "appended" and NEW in empty.content
    # Without engine.reuse_sources (as for the LLM team configured without it) and in v1: skipped.
    assert _collect(2, _report(), [("DataAnalyst", f"{OLD} [source: d.md]")], [source], reuse=False).status == "skipped"
    assert _collect(1, _report(), [("DataAnalyst", "")], sources=[source]).status == "skipped"


DENDRITES = {
    "LeadArchitect": {"kind": v.ASSIGN_SECTION, "title": "Dendrite growth", "position": 1, "total": 2},
    "Researcher": {"kind": v.FIND_EVIDENCE, "title": "Dendrite growth"},
    "DataAnalyst": {"kind": v.WRITE_SECTION, "title": "Dendrite growth"},
}


def _plan_round(env, directives):
    env.reset(seed=0)
    env.step_plan({"acting": AGENTS, "edges": [["Researcher", "DataAnalyst"]], "directives": directives})
    return env.trace.rounds[-1]["agents"]


def test_a_directive_changes_what_the_role_does(make_env):
    plain = _plan_round(make_env(), {})
    told = _plan_round(make_env(), DENDRITES)
    ignored = _plan_round(make_env(extractive={"version": 1}), DENDRITES)
    # LeadArchitect: the assigned section is its objective, then points it must cover.
    assert plain["LeadArchitect"]["response"].startswith("OBJECTIVE: Background")
    assert told["LeadArchitect"]["response"].startswith("OBJECTIVE: Dendrite growth")
    assert ignored["LeadArchitect"]["response"] == plain["LeadArchitect"]["response"]  # v1 ignores directives
    # Researcher: searches for the section first, and its evidence for it leads.
    assert plain["Researcher"]["retrieval"]["queries"] == ["Solid-state batteries"]
    assert told["Researcher"]["retrieval"]["queries"][0].startswith("Dendrite growth")
    assert "dendrite" not in plain["Researcher"]["response"].lower()
    assert "dendrite" in told["Researcher"]["response"].splitlines()[0].lower()
    # DataAnalyst: writes the section it was told to, from what the Researcher sent it.
    assert "dendrite" in told["DataAnalyst"]["response"].splitlines()[0].lower()


def test_closing_and_correction_directives_are_answered_as_the_prompts_ask(make_env):
    closing = _plan_round(make_env(), {"LeadArchitect": {"kind": v.CLOSE_DRAFTING}})
    assert closing["LeadArchitect"]["response"] == v.DRAFTING_COMPLETE
    fix = {"kind": v.ASSIGN_CORRECTION, "section_id": "S1", "title": "Dendrites", "finding": "add stack pressure"}
    corr = _plan_round(make_env(), {"LeadArchitect": fix})
    assert corr["LeadArchitect"]["response"] == "[SECTION_ID: S1] Dendrites: add stack pressure"


@pytest.mark.parametrize("budget", [5, 8, 12])
def test_the_pipeline_completes_all_its_phases_on_the_extractive_team(make_env, budget):
    import algos
    from algos.training.rollout import run_episode

    env = make_env(max_rounds=budget, engine={"reuse_sources": True})
    spec = algos.EnvSpec.from_env(env)
    algo = algos.build("handcrafted", spec, {"name": "handcrafted"}, seed=0)
    _, stats = run_episode(env, algo, spec, explore=False, seed=0)
    ran = list(dict.fromkeys(phase for phase, _ in algo.history))
    assert ran == [p for p in v.PHASE_ORDER if algo.schedule[p]], (ran, algo.schedule)
    assert env.trace.end["reason"] == "terminated" and stats.length <= budget
    assert env.report.sections and stats.infos["report_score"] > 0.0
    # The sections are the outline's, in order, not the generic headings of an empty-handed LeadArchitect.
    assert [s.title for s in env.report.sections] == algo.outline[: len(env.report.sections)]
