"""Prompt tokens evaluated and reused, per call in the trace and per round and episode in the
infos (a TEST DOUBLE backend that says it reused part of each prompt)."""

from __future__ import annotations

from agents_llm.backends import Completion
from agents_llm.backends.scripted import ScriptedBackend
from report_protocol import ActionTable

from .conftest import make_env

T = ActionTable(4)


class ReusingScripted(ScriptedBackend):
    """Reports the words its prompt shares with the previous prompt of the same system message as reused."""

    def __init__(self) -> None:
        super().__init__()
        self.previous: dict[str, list[str]] = {}

    async def _generate(self, request):
        comp = await super()._generate(request)
        system, words = request.messages[0][1], " ".join(c for _, c in request.messages).split()
        before = self.previous.get(system, [])
        shared = next((i for i, (a, b) in enumerate(zip(before, words)) if a != b), min(len(before), len(words)))
        self.previous[system] = words
        reused = min(shared, comp.prompt_tokens - 1)
        return Completion(comp.text, comp.prompt_tokens, comp.completion_tokens, prompt_tokens_reused=reused)


def test_trace_and_infos_count_evaluated_and_reused_prompt_tokens():
    env = make_env(backend=ReusingScripted(), max_rounds=3)
    env.reset(seed=0)
    solo = {a: T.solo for a in env.possible_agents}
    totals = [0, 0]
    for actions in ({**solo, "Researcher": T.append}, {**solo, "DataAnalyst": T.append}):
        _, _, _, _, infos = env.step(actions)
        calls = env.trace.rounds[-1]["calls"]
        assert calls and all(
            c["prompt_tokens_evaluated"] + c["prompt_tokens_reused"] == c["prompt_tokens"] for c in calls
        )
        info = infos["Researcher"]
        assert info["prompt_tokens_evaluated"] == sum(c["prompt_tokens_evaluated"] for c in calls)
        assert info["prompt_tokens_reused"] == sum(c["prompt_tokens_reused"] for c in calls)
        totals = [totals[0] + info["prompt_tokens_evaluated"], totals[1] + info["prompt_tokens_reused"]]
        assert [info["episode_prompt_tokens_evaluated"], info["episode_prompt_tokens_reused"]] == totals
        assert env.trace.rounds[-1]["tokens"]["episode_prompt_tokens_reused"] == totals[1]
    assert totals[1] > 0, "the second round's prompts repeat the first round's openings"


def test_the_stackable_infos_carry_the_counts_from_reset_on():
    env = make_env(infos="stackable")
    _, infos = env.reset(seed=0)
    assert infos["Reviewer"]["prompt_tokens_evaluated"] == 0 and infos["Reviewer"]["episode_prompt_tokens_reused"] == 0
    _, _, _, _, infos = env.step({a: T.solo for a in env.possible_agents})
    assert infos["Reviewer"]["prompt_tokens_evaluated"] > 0
    assert infos["Reviewer"]["prompt_tokens_reused"] == 0  # the scripted double reuses nothing
