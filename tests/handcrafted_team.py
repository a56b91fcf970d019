"""For the handcrafted pipeline tests: a scripted TEST DOUBLE team whose answers
depend on the role and phase in the prompt, a stub retriever, and the report env."""

from __future__ import annotations

import re
from typing import Callable


from agents_llm.backends.scripted import ScriptedBackend
from tests.report_doubles import HASHING_JUDGE, HASHING_RAG  # noqa: F401 (re-exported to the tests)
from tests.report_doubles import StubRetriever as _StubRetriever

TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]


class StubRetriever(_StubRetriever):
    def __init__(self, texts=("Sorting networks compare and swap pairs of values in a fixed order.",)):
        super().__init__(texts)


ROLE_OF_SYSTEM = {
    "You are the Lead Architect": "LeadArchitect",
    "You are the Researcher": "Researcher",
    "You are the Data Analyst": "DataAnalyst",
    "You are the Reviewer": "Reviewer",
}
_PHASE_ROUND = re.compile(r"Objective \((\w+) round (\d+)")

DEFAULT_ANSWERS = {
    ("LeadArchitect", "PLANNING"): "1. Alpha methods\n2. Beta results\n3. Gamma limits",
    ("Researcher", "PLANNING"): "Sorting networks are covered (doc0.md).",
    ("LeadArchitect", "RESEARCH"): "OBJECTIVE: find how sorting networks compare values",
    ("Researcher", "RESEARCH"): "Sorting networks compare pairs of values (doc0.md).",
    ("DataAnalyst", "RESEARCH"): "Blueprint: comparison order, then depth.",
    ("LeadArchitect", "DRAFTING"): "OBJECTIVE: write the assigned section",
    ("Researcher", "DRAFTING"): "Sorting networks compare pairs of values in a fixed order (doc0.md).",
    ("DataAnalyst", "DRAFTING"): "Sorting networks compare pairs of values in a fixed order.",
    ("Reviewer", "REVIEW"): "[SECTION_ID: S1] add the depth of the network.",
    ("LeadArchitect", "REVIEW"): "[SECTION_ID: S1] add the depth of the network.",
    ("LeadArchitect", "REVISION"): "[SECTION_ID: S1] add the depth.",
    ("Researcher", "REVISION"): "[HOLD]",
    ("DataAnalyst", "REVISION"): "[SECTION_ID: S1] Sorting networks have a depth that bounds their time.",
}


class TeamScript:
    """TEST DOUBLE responder: answers by (role, phase) of the prompt; `answers` override the
    defaults and may be callables (role, phase, round, request) -> str. Records every agent call."""

    def __init__(self, answers: dict | None = None, gate: str | Callable = "YES"):
        self.answers = dict(DEFAULT_ANSWERS)
        self.answers.update(answers or {})
        self.gate = gate
        self.calls: list[tuple[str, str, int, str]] = []  # (role, phase, round, user prompt)
        self.sections_written = 0

    def __call__(self, request) -> str:
        system = request.messages[0][1]
        user = request.messages[-1][1]
        if "write search queries" in system:
            return "sorting networks"
        if "technical writer" in system:  # the Collector writes up the material it got
            self.sections_written += 1
            material = re.findall(r"Material from \w+: (.*)", user)
            body = re.sub(r"\[SECTION_ID:[^\]]*\]", "", " ".join(material)).strip()
            return f"## Part {self.sections_written}\n{body or 'Sorting networks compare values in a fixed order.'}"
        if "short summary" in system:
            return "The report explains sorting networks."
        role = next((r for key, r in ROLE_OF_SYSTEM.items() if system.startswith(key)), "?")
        if "Answer YES or NO first" in user:
            self.calls.append((role, "GATE", 0, user))
            return self.gate(role, user) if callable(self.gate) else self.gate
        m = _PHASE_ROUND.search(user)
        phase, rnd = (m.group(1), int(m.group(2))) if m else ("NONE", 0)
        self.calls.append((role, phase, rnd, user))
        answer = self.answers.get((role, phase), f"Plain notes from the {role}.")
        return answer(role, phase, rnd, request) if callable(answer) else answer

    def prompts_of(self, role: str, phase: str) -> list[tuple[int, str]]:
        return [(rnd, user) for r, p, rnd, user in self.calls if r == role and p == phase]


def make_env(script: TeamScript, *, retriever=None, team=None, max_rounds: int = 40, **kw):
    from envs.report.writing import ReportWritingEnv

    return ReportWritingEnv(
        team=team or TEAM,
        llm={"backend": "scripted"},
        rag=HASHING_RAG,
        judge=HASHING_JUDGE,
        max_rounds=max_rounds,
        min_rounds_before_terminate=1,
        backend=ScriptedBackend(responder=script),
        retriever=retriever or StubRetriever(),
        **{"infos": "full", **kw},
    )  # these tests read the round's text from step's infos


def make_policy(env, **cfg):
    import algos

    return algos.build("handcrafted", algos.EnvSpec.from_env(env), cfg)


def run_pipeline(env, policy, topic: str = "Sorting networks", max_steps: int = 60):
    """Run one episode of the policy; returns (trace rounds, final infos)."""
    obs, infos = env.reset(seed=0, options={"topic": topic})
    policy.begin_episode()
    for _ in range(max_steps):
        if not env.agents:
            break
        obs, rewards, terms, truncs, infos = env.step_plan(policy.next_plan(infos))
    assert not env.agents, "the episode did not end"
    return env.trace.rounds, infos
