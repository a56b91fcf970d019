"""The handcrafted pipeline on the report env with a scripted TEST DOUBLE team.

Every test runs whole episodes through `env.step_plan` and asserts on the trace, the
prompts the agents received and the report the env holds.
"""

from __future__ import annotations

import pytest

from agents_llm import phase_prompts
from report_protocol import vocabulary as voc

from tests.handcrafted_team import TeamScript, make_env, make_policy, run_pipeline

SHORT = {"planning": 2, "research": 2, "drafting": 4, "review": 2, "revision": 2}


def data_of(prompt: str) -> str:
    """What a prompt shows inside its data block (text from the report, teammates, documents)."""
    return prompt.split("<data>", 1)[1].split("</data>", 1)[0] if "<data>" in prompt else ""


def phases_of(rounds):
    return [r["phase"] for r in rounds]


def collapse(seq):
    out = []
    for x in seq:
        if not out or out[-1] != x:
            out.append(x)
    return out


def test_phases_run_in_order_with_their_round_budgets():
    script = TeamScript()
    env = make_env(script)
    rounds, _ = run_pipeline(env, make_policy(env, rounds=SHORT))
    assert collapse(phases_of(rounds)) == ["planning", "research", "drafting", "review", "revision"]
    counts = {p: phases_of(rounds).count(p) for p in SHORT}
    assert counts == SHORT
    assert [r["source"] for r in rounds] == ["plan"] * len(rounds)
    assert env.trace.end["reason"] == "terminated"
    # the classic plan: 2, 6, 10, 2, 4 (drafting stops after the three planned sections)
    env2 = make_env(TeamScript())
    rounds2, _ = run_pipeline(env2, make_policy(env2, schedule="classic"))
    counts2 = {p: phases_of(rounds2).count(p) for p in SHORT}
    assert counts2["planning"] == 2 and counts2["research"] == 6
    assert counts2["drafting"] == 6  # 3 sections x 2 rounds: the outline is done before the budget of 10


def test_round_patterns_cycle_within_a_phase():
    three = [
        {"required": ["LeadArchitect"]},
        {"required": ["LeadArchitect", "Researcher"], "edges": [["LeadArchitect", "Researcher"]]},
        {"required": ["Reviewer", "LeadArchitect"], "edges": ["Reviewer->LeadArchitect"]},
    ]
    env = make_env(TeamScript())
    policy = make_policy(
        env,
        rounds={"planning": 1, "research": 7, "drafting": 0, "review": 0, "revision": 0},
        patterns={"research": three},
    )
    rounds, _ = run_pipeline(env, policy)
    research = [r for r in rounds if r["phase"] == "research"]
    assert len(research) == 7
    expected_acting = [["LeadArchitect"], ["LeadArchitect", "Researcher"], ["LeadArchitect", "Reviewer"]]
    for k, r in enumerate(research):
        assert sorted(r["agents"]) == sorted(expected_acting[k % 3]), f"research round {k + 1}"
        edges = [(e["sender"], e["receiver"]) for e in r["edges"]]
        assert edges == [
            tuple(e) if not isinstance(e, str) else tuple(e.split("->")) for e in three[k % 3].get("edges", [])
        ]


@pytest.mark.parametrize(
    "phase, role, signal",
    [
        ("research", "Researcher", voc.RESEARCH_EXHAUSTED),
        ("drafting", "LeadArchitect", voc.DRAFTING_COMPLETE),
        ("revision", "LeadArchitect", voc.REVISION_COMPLETE),
    ],
)
def test_each_exit_signal_ends_its_phase(phase, role, signal):
    """The signal comes in the phase's round 3; the phase ends there, the next one starts."""
    budgets = {"planning": 1, "research": 6, "drafting": 8, "review": 1, "revision": 8}
    default = TeamScript().answers[(role, phase.upper())]  # what the role says without the signal

    def answer(r, p, rnd, request):
        return f"{signal} done." if rnd == 3 else default

    extra = {}
    if phase == "revision":  # enough corrections that only the signal can end the phase early
        extra[("Reviewer", "REVIEW")] = "\n".join(f"[SECTION_ID: S{i}] fix {i}" for i in (1, 2, 3))
        extra[("DataAnalyst", "REVISION")] = "Sorting networks have a depth."
    if phase == "drafting":  # an outline long enough that drafting would not end by round 3
        extra[("LeadArchitect", "PLANNING")] = "\n".join(f"{i}. Part {i}" for i in range(1, 9))

    env = make_env(TeamScript({(role, phase.upper()): answer, **extra}))
    seq = phases_of(run_pipeline(env, make_policy(env, rounds=budgets))[0])
    assert seq.count(phase) == 3, seq
    after = seq[seq.index(phase) + 3 :]
    following = {"research": "drafting", "drafting": "review", "revision": None}[phase]
    assert (after[0] if after else None) == following
    # Without the signal the phase runs longer.
    env2 = make_env(TeamScript(extra))
    assert phases_of(run_pipeline(env2, make_policy(env2, rounds=budgets))[0]).count(phase) > 3


@pytest.mark.parametrize(
    "phase, echoer, signal",
    [
        ("drafting", "DataAnalyst", voc.DRAFTING_COMPLETE),
        ("research", "LeadArchitect", voc.RESEARCH_EXHAUSTED),
        ("revision", "DataAnalyst", voc.REVISION_COMPLETE),
    ],
)
def test_a_signal_from_a_part_that_does_not_close_the_phase_does_not_end_it(phase, echoer, signal):
    """Every agent reads the phase block that names the signal; a small model echoes it (SmolLM2's
    DataAnalyst wrote [DRAFTING_COMPLETE] in its first drafting round, and the report stayed empty)."""
    budgets = {"planning": 1, "research": 3, "drafting": 8, "review": 1, "revision": 4}
    default = TeamScript().answers.get((echoer, phase.upper()), "Sorting networks have a depth.")
    extra = {(echoer, phase.upper()): lambda r, p, rnd, request: f"{default} {signal}"}
    if phase == "revision":  # more corrections than rounds: only a signal could end the phase early
        extra[("Reviewer", "REVIEW")] = "\n".join(f"[SECTION_ID: S{i}] fix {i}" for i in (1, 2, 3))
    if phase == "drafting":
        extra[("LeadArchitect", "PLANNING")] = "\n".join(f"{i}. Part {i}" for i in range(1, 9))
    env = make_env(TeamScript(extra))
    seq = phases_of(run_pipeline(env, make_policy(env, rounds=budgets))[0])
    assert seq.count(phase) > 1, f"{echoer}'s {signal} ended {phase} after one round: {seq}"
    if phase == "drafting":
        assert len(env.report.sections) > 1


def test_section_sentinels_advance_through_the_outline():
    """After an append the LeadArchitect gets SECTION_COMPLETE and the next title; when
    nothing is appended, SECTION_SKIPPED and the title after it."""

    def analyst(role, phase, rnd, request):
        # The section "Beta results" has only absence markers: the Collector skips it.
        return (
            "[RESEARCH_EXHAUSTED]" if "Beta results" in request.messages[-1][1] else "Sorting networks compare pairs."
        )

    script = TeamScript({("DataAnalyst", "DRAFTING"): analyst})
    env = make_env(script)
    rounds, _ = run_pipeline(env, make_policy(env, rounds={"drafting": 10, "review": 0, "revision": 0}))
    lead = [u for _, u in script.prompts_of("LeadArchitect", "DRAFTING")]
    assert len(lead) == 3
    # the title (the Lead Architect's outline) is data; the notice and the instruction are the plan's
    assert "Section to write now (1 of 3): Alpha methods" in data_of(lead[0])
    assert "Instruction: Assign the section to write now, given above." in lead[0]
    assert voc.NOTICES[voc.SECTION_COMPLETE] not in lead[0]
    assert "Section to write now (2 of 3): Beta results" in data_of(lead[1])
    assert f"Instruction: {voc.NOTICES[voc.SECTION_COMPLETE]} Assign the section to write now" in lead[1]
    assert "Section to write now (3 of 3): Gamma limits" in data_of(lead[2])
    assert f"Instruction: {voc.NOTICES[voc.SECTION_SKIPPED]} Assign the section to write now" in lead[2]
    statuses = [
        r["collector"]["status"] for r in rounds if r["phase"] == "drafting" and r["collector"]["status"] != "idle"
    ]
    assert statuses == ["appended", "skipped", "appended"]
    assert len(env.report.sections) == 2


def test_a_given_outline_is_written_in_its_order_and_the_models_outline_does_not_replace_it():
    """`outline` fixes the section titles before the episode (write_report gives the documents'
    headings): the LeadArchitect still plans, but its outline ("Alpha methods", ...) is not taken."""
    script = TeamScript()
    env = make_env(script)
    policy = make_policy(
        env, rounds={"drafting": 10, "review": 0, "revision": 0}, outline=["Depth bounds", "Comparators"]
    )
    rounds, _ = run_pipeline(env, policy)
    assert script.prompts_of("LeadArchitect", "PLANNING"), "the LeadArchitect still ran in PLANNING"
    lead = [data_of(u) for _, u in script.prompts_of("LeadArchitect", "DRAFTING")]
    assert "Section to write now (1 of 2): Depth bounds" in lead[0]
    assert "Section to write now (2 of 2): Comparators" in lead[1]
    assert [s.title for s in env.report.sections] == ["Depth bounds", "Comparators"]
    assert policy.outline == ["Depth bounds", "Comparators"]
    policy.begin_episode()  # the next episode starts from the given outline again
    assert policy.outline == ["Depth bounds", "Comparators"]


@pytest.mark.parametrize("on", [True, False])
def test_a_sections_title_is_searched_first_on_the_product_route(on):
    """write_report's route (`engine.route=product`): the Researcher's own queries ("sorting
    networks", TeamScript's) do not name the planned section; its title is searched beside them."""
    from tests.handcrafted_team import StubRetriever

    retriever = StubRetriever()
    env = make_env(TeamScript(), retriever=retriever, engine={"route": "product" if on else "research"})
    rounds, _ = run_pipeline(env, make_policy(env, rounds=SHORT, outline=["Depth bounds", "Comparators"]))
    searched = [q for queries in retriever.queries for q in queries]
    assert ("Depth bounds" in searched and "Comparators" in searched) is on
    drafting = [
        r["agents"]["Researcher"]["retrieval"]
        for r in rounds
        if r["phase"] == "drafting" and "Researcher" in r["agents"]
    ]
    assert list(dict.fromkeys(r["section_query"] for r in drafting if r.get("section_query"))) == (
        ["Depth bounds", "Comparators"] if on else []
    )


def test_no_evidence_skips_the_writing_round():
    """A Researcher with nothing for a section: its writing round is not run at all."""

    def researcher(role, phase, rnd, request):
        return voc.RESEARCH_EXHAUSTED if "Beta results" in request.messages[-1][1] else "Facts (doc0.md)."

    script = TeamScript({("Researcher", "DRAFTING"): researcher})
    env = make_env(script)
    rounds, _ = run_pipeline(env, make_policy(env, rounds={"drafting": 10, "review": 0, "revision": 0}))
    drafting = [r for r in rounds if r["phase"] == "drafting"]
    assert len(drafting) == 5  # 2 + 1 (skipped section) + 2
    assert [r["collector"]["status"] for r in drafting] == ["idle", "appended", "idle", "idle", "appended"]
    lead = [u for _, u in script.prompts_of("LeadArchitect", "DRAFTING")]
    assert voc.NOTICES[voc.SECTION_SKIPPED] in lead[2] and "Gamma limits" in lead[2]


ALPHA_CHUNK = "Sorting networks compare and swap pairs of values in a fixed order."
BETA_CHUNK = "Bitonic sorters merge two sorted halves of the input in logarithmic depth."


@pytest.mark.parametrize("claim", [voc.RESEARCH_EXHAUSTED, "RESEARCH_EXHAUSTED", "Objective (DRAFTING round 3 of 4):"])
def test_exhausted_beside_new_evidence_is_not_believed_and_the_section_is_written(claim):
    """Asked for a section's evidence, the Researcher answers that there is none (the signal,
    its bare name, or an echo of its objective) while its search found a fact the report does
    not have yet: the claim is overruled, the writer gets the evidence and the section is written.
    (Measured with qwen2.5-coder-0.5b: it answers so beside the chunks it was given.)"""
    from tests.report_doubles import StubRetriever

    def researcher(role, phase, rnd, request):  # asked for Beta's evidence (sections are headed by outline titles)
        return claim if "Section to find evidence for: Beta results" in request.messages[-1][1] else "Facts (doc0.md)."

    def analyst(role, phase, rnd, request):  # writes what it got about bitonic sorters, else the default
        user = request.messages[-1][1]
        return "Bitonic sorters merge two sorted halves." if "Bitonic" in user else "Sorting networks compare pairs."

    script = TeamScript({("Researcher", "DRAFTING"): researcher, ("DataAnalyst", "DRAFTING"): analyst})
    env = make_env(script, retriever=StubRetriever((ALPHA_CHUNK, BETA_CHUNK)))
    rounds, _ = run_pipeline(env, make_policy(env, rounds={"drafting": 6, "review": 0, "revision": 0}))
    drafting = [r for r in rounds if r["phase"] == "drafting"]
    assert [r["collector"]["status"] for r in drafting] == ["idle", "appended"] * 3  # no round skipped
    beta = drafting[2]["agents"]["Researcher"]
    assert beta["retrieval"]["exhaustion_overruled"] is True and beta["retrieval"]["new_chunks"] >= 1
    assert "Bitonic sorters merge" in beta["output"]  # the writer got the evidence, not the claim
    assert "Bitonic sorters merge" in drafting[2]["agents"]["DataAnalyst"]["prompt"][-1]["content"]
    assert not drafting[2]["rag_exhausted"]
    # Headed by the plan's outline, not by the writer's "## Part N".
    assert [s.title for s in env.report.sections] == ["Alpha methods", "Beta results", "Gamma limits"]
    assert any("Bitonic" in s.content for s in env.report.sections)


def test_exhausted_is_believed_when_the_search_found_only_what_the_report_says():
    """The same answer when every retrieved fact is already in the report: believed, the
    Researcher searched once more for the section before, and the writing round is skipped."""
    from tests.report_doubles import StubRetriever

    def researcher(role, phase, rnd, request):
        return voc.RESEARCH_EXHAUSTED if "Beta results" in request.messages[-1][1] else "Facts (doc0.md)."

    retriever = StubRetriever((ALPHA_CHUNK,))
    env = make_env(TeamScript({("Researcher", "DRAFTING"): researcher}), retriever=retriever)
    rounds, _ = run_pipeline(env, make_policy(env, rounds={"drafting": 10, "review": 0, "revision": 0}))
    drafting = [r for r in rounds if r["phase"] == "drafting"]
    assert [r["collector"]["status"] for r in drafting] == ["idle", "appended", "idle", "idle", "appended"]
    beta = drafting[2]["agents"]["Researcher"]["retrieval"]
    assert beta["new_chunks"] == 0 and "exhaustion_overruled" not in beta
    assert beta["retried"][0] == "Beta results Sorting networks"  # the section's own search
    assert drafting[2]["rag_exhausted"]


def test_no_query_is_no_decision_when_the_plan_asks_for_a_sections_evidence():
    """A Researcher that answers NO_QUERY to its query call in DRAFTING (the report is no longer
    empty) still searches, for the section it was asked about: measured with qwen2.5-coder-0.5b,
    which then echoed its objective and the section went without evidence."""

    query_prompts: list[str] = []

    class NoQueries(TeamScript):
        def __call__(self, request):
            if "write search queries" in request.messages[0][1]:
                query_prompts.append(request.messages[-1][1])
                return voc.NO_QUERY
            return super().__call__(request)

    env = make_env(NoQueries())
    rounds, _ = run_pipeline(env, make_policy(env, rounds={"drafting": 4, "review": 0, "revision": 0}))
    drafting = [r for r in rounds if r["phase"] == "drafting"]
    second = drafting[2]["agents"]["Researcher"]["retrieval"]  # Beta results, after S1 was written
    assert env.report.sections and second["generated"] == [] and second["fallback"] is True
    assert second["queries"][0] == "Beta results Sorting networks"
    assert sum("Section to find evidence for: Beta results" in q for q in query_prompts) == 2  # both its rounds


def test_revision_replaces_the_tagged_section_in_place_and_advances_corrections():
    script = TeamScript(
        {
            ("Reviewer", "REVIEW"): "[SECTION_ID: S2] give the depth\n[SECTION_ID: S3] name a use",
            ("LeadArchitect", "REVIEW"): "ok",
            # the rewrite carries the tag of the section it corrects
            ("DataAnalyst", "REVISION"): lambda r, p, rnd, req: (
                "[SECTION_ID: S2] Depth bounds the time."
                if "[SECTION_ID: S2] (" in req.messages[-1][1]
                else "[SECTION_ID: S3] Networks sort in hardware."
            ),
        }
    )
    script.answers[("LeadArchitect", "REVISION")] = "Apply it."
    env = make_env(script)
    policy = make_policy(env, rounds={"revision": 4})
    rounds, _ = run_pipeline(env, policy)
    revision = [r for r in rounds if r["phase"] == "revision"]
    assert [r["collector"]["status"] for r in revision] == ["idle", "revised", "idle", "revised"]
    assert [r["collector"]["section_id"] for r in revision if r["collector"]["status"] == "revised"] == ["S2", "S3"]
    ids = [s.id for s in env.report.sections]
    assert ids == ["S1", "S2", "S3"]  # replaced in place: same sections, same order
    assert [s.revision for s in env.report.sections] == [0, 1, 1]
    lead = [u for _, u in script.prompts_of("LeadArchitect", "REVISION")]
    assert "Correction for [SECTION_ID: S2] (Beta results): " in data_of(lead[0])
    assert "Instruction: Assign the correction for [SECTION_ID: S2] given above." in lead[0]
    assert voc.NOTICES[voc.CORRECTION_APPLIED] not in lead[0]
    assert "Correction for [SECTION_ID: S3] (Gamma limits): " in data_of(lead[1])
    assert f"Instruction: {voc.NOTICES[voc.CORRECTION_APPLIED]} Assign the correction for [SECTION_ID: S3]" in lead[1]
    # the live section list is in every REVIEW and REVISION prompt
    for phase in ("REVIEW", "REVISION"):
        for role in ("Reviewer", "LeadArchitect", "DataAnalyst"):
            for _, user in script.prompts_of(role, phase):
                assert "[SECTION_ID: S1] Alpha methods" in user and "[SECTION_ID: S3]" in user


def test_revision_follows_the_writers_tag_over_the_assignment():
    script = TeamScript(
        {
            ("Reviewer", "REVIEW"): "[SECTION_ID: S1] too short",
            ("DataAnalyst", "REVISION"): "[SECTION_ID: S3] Networks sort in hardware.",
        }
    )
    env = make_env(script)
    run_pipeline(env, make_policy(env, rounds={"revision": 2}))
    assert [s.revision for s in env.report.sections] == [0, 0, 1]
    assert "hardware" in env.report.get("S3").content


def _planning_researcher_runs(strategy, first_answer, gate="YES"):
    """Whether the optional Researcher of PLANNING round 2 ran, after saying `first_answer` in round 1."""
    script = TeamScript(
        {("Researcher", "PLANNING"): lambda r, p, rnd, req: first_answer if rnd == 1 else "More."}, gate=gate
    )
    env = make_env(script)
    rounds, _ = run_pipeline(
        env, make_policy(env, skip_strategy=strategy, rounds={"planning": 2, "research": 0, "drafting": 0})
    )
    assert [r["phase"] for r in rounds] == ["planning", "planning"]
    return "Researcher" in rounds[1]["agents"], rounds, script


@pytest.mark.parametrize("first_answer", ["Sorting is covered (doc0.md).", "[HOLD]", voc.RESEARCH_EXHAUSTED])
def test_skip_strategies_choose_who_runs(first_answer):
    counts = first_answer not in ("[HOLD]", voc.RESEARCH_EXHAUSTED)
    assert _planning_researcher_runs("always_include", first_answer)[0] is True
    assert _planning_researcher_runs("temporal_heuristic", first_answer)[0] is counts
    ran_yes, rounds, script = _planning_researcher_runs("llm_gatecheck", first_answer, gate="YES, it helps")
    ran_no, _, _ = _planning_researcher_runs("llm_gatecheck", first_answer, gate="NO, nothing to add")
    assert (ran_yes, ran_no) == (True, False)
    # the gate was asked of the Researcher after round 1, and only then
    assert rounds[0]["gate"]["agent"] == "Researcher" and rounds[1]["gate"] is None
    assert [r for r, p, _, _ in script.calls if p == "GATE"] == ["Researcher"]


def test_gatecheck_without_an_answer_falls_back_to_temporal():
    from algos.handcrafted import RoundScheduler
    from algos.handcrafted_phases import RoundPattern

    pattern = RoundPattern(("LeadArchitect",), ("Researcher", "Reviewer"))
    sched = RoundScheduler("llm_gatecheck")
    assert sched.select(pattern, produced={"Reviewer"}, gates={}) == ["LeadArchitect", "Reviewer"]
    assert sched.select(pattern, produced={"Reviewer"}, gates={"Researcher": None}) == ["LeadArchitect", "Reviewer"]
    assert sched.select(pattern, produced=set(), gates={"Researcher": True}) == ["LeadArchitect", "Researcher"]
    assert sched.select(pattern, produced={"Reviewer"}, gates={"Reviewer": False}) == ["LeadArchitect"]


def test_memory_is_wiped_at_phase_boundaries():
    script = TeamScript()
    env = make_env(script)
    rounds, _ = run_pipeline(env, make_policy(env, rounds=SHORT))
    first = {}
    for r in rounds:
        first.setdefault(r["phase"], r["round"])
    for r in rounds:
        starts_phase = first[r["phase"]] == r["round"]
        for agent, rec in r["agents"].items():
            user = rec["prompt"][-1]["content"] if rec["prompt"] else ""
            if starts_phase:
                assert "Your previous output" not in user, (r["round"], agent)
    # ...while inside a phase an agent that ran before sees its previous output
    research = [r for r in rounds if r["phase"] == "research"]
    assert "Your previous output" in research[1]["agents"]["LeadArchitect"]["prompt"][-1]["content"]
    # and the plans asked for the wipe exactly at each phase's first round
    policy = make_policy(env, rounds=SHORT)
    env.reset(seed=0, options={"topic": "Sorting networks"})
    infos, wipes = {}, []
    while env.agents:
        plan = policy.next_plan(infos)
        wipes.append((plan["phase"], plan.get("reset_memory", False)))
        infos = env.step_plan(plan)[4]
    starts = [w for i, w in enumerate(wipes) if i == 0 or wipes[i - 1][0] != w[0]]
    assert all(flag for _, flag in starts)
    assert not any(flag for i, (p, flag) in enumerate(wipes) if i > 0 and wipes[i - 1][0] == p)


def test_planning_deficiencies_reach_the_report_and_the_lead_architect():
    script = TeamScript({("Researcher", "PLANNING"): "Sorting is covered (doc0.md).\nMISSING: quantum sorting"})
    env = make_env(script)
    run_pipeline(env, make_policy(env, rounds=SHORT))
    assert env.report.deficient_topics == ["quantum sorting"]
    later = [u for r, p, _, u in script.calls if r == "LeadArchitect" and p in ("RESEARCH", "DRAFTING")]
    assert later and all("Not covered by the sources" in u and "quantum sorting" in u for u in later)


def test_phase_prompts_carry_phase_block_and_round_number():
    script = TeamScript()
    env = make_env(script)
    rounds, _ = run_pipeline(env, make_policy(env, rounds=SHORT))
    drafting = [r for r in rounds if r["phase"] == "drafting"]
    prompt = drafting[2]["agents"]["LeadArchitect"]["prompt"]
    assert phase_prompts.PHASE_BLOCK["drafting"] in prompt[0]["content"]
    assert "Objective (DRAFTING round 3 of 4):" in prompt[-1]["content"]
