"""engine.conversation in the report env: each agent's calls form one chat (scripted TEST DOUBLE)."""

from __future__ import annotations

from report_protocol import ActionTable

from .conftest import make_env, scripted

T = ActionTable(4)


def agent_calls(backend, role: str) -> list[tuple[tuple[str, str], ...]]:
    """The messages of `role`'s agent calls, in order (its system prompt names the role)."""
    return [
        c.messages
        for c in backend.calls
        if c.messages[0][0] == "system" and f"the {role}" in c.messages[0][1] and "Task:" in c.messages[-1][1]
    ]


def play(conversation: bool):
    backend = scripted()
    env = make_env(backend=backend, max_rounds=3, engine={"conversation": conversation, "reuse_sources": True})
    env.reset(seed=0)
    solo = {a: T.solo for a in env.possible_agents}
    for actions in ({**solo, "Researcher": T.append}, {**solo, "Reviewer": T.query(0)}, solo):
        env.step(actions)
    return backend, env


def test_each_agents_later_prompt_extends_its_earlier_one():
    backend, env = play(conversation=True)
    calls = agent_calls(backend, "Reviewer")
    assert len(calls) == 3
    for before, after in zip(calls, calls[1:]):
        assert after[: len(before)] == before, "the earlier turn must be a prefix of the later prompt"
        assert after[len(before)][0] == "assistant" and after[-1][0] == "user"
    later = calls[-1][-1][1]
    assert "Report topic" not in later and "Task:" in later
    assert len(calls[-1][-1][1]) < len(calls[0][-1][1]), "a later turn holds only what is new"
    chats = [rnd["agents"]["Reviewer"]["chat"] for rnd in env.trace.rounds]
    assert chats == [{"turn": n, "restarted": False} for n in (1, 2, 3)]


def test_off_every_call_stands_alone():
    backend, env = play(conversation=False)
    calls = agent_calls(backend, "Reviewer")
    assert len(calls) == 3 and all(len(c) == 2 and c[1][1].startswith("Report topic") for c in calls)
    assert all("chat" not in rnd["agents"]["Reviewer"] for rnd in env.trace.rounds)
