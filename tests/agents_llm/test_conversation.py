"""An agent's conversation (engine.conversation): later turns append only what is new."""

from __future__ import annotations

import pytest

from agents_llm.conversation import Conversations
from agents_llm.prompts import AgentPrompt, memory_item

SOURCES_1 = "Retrieved sources:\n[1] (a.md) Tasks run one at a time.\n[2] (b.md) A task yields at await."
# The same search again: one excerpt repeated under another number, one new.
SOURCES_2 = "Retrieved sources:\n[1] (b.md) A task yields at await.\n[2] (c.md) gather() keeps the order."


def prompt(*data: str, phase: str = "", task: str = "Task: list facts.") -> AgentPrompt:
    return AgentPrompt("You are the Researcher.", "asyncio tasks", data, ("Instruction: go.", task), phase)


def user_turns(messages):
    return [m["content"] for m in messages if m["role"] == "user"]


def test_the_first_turn_is_the_stand_alone_prompt_and_later_turns_extend_it():
    chats = Conversations()
    first = prompt("Sections written so far: Intro", SOURCES_1)
    turn = chats.turn("Researcher", first)
    assert turn.messages == first.messages()
    chats.commit(turn, "Tasks run one at a time.")

    second = prompt("Sections written so far: Intro", SOURCES_2, memory_item("Tasks run one at a time."))
    turn2 = chats.turn("Researcher", second)
    assert turn2.messages[:2] == first.messages(), "an earlier turn must stay a prefix of the next prompt"
    assert turn2.messages[2] == {"role": "assistant", "content": "Tasks run one at a time."}
    new = turn2.messages[3]["content"]
    assert "Report topic" not in new and "Sections written so far" not in new  # shown in turn one
    assert "Your previous output" not in new  # it is the chat's assistant turn
    assert "gather() keeps the order." in new and "A task yields at await." not in new
    assert new.endswith("Instruction: go.\n\nTask: list facts.")  # ours, every turn


def test_a_changed_part_and_a_new_phase_are_shown_again():
    chats = Conversations()
    turn = chats.turn("Reviewer", prompt("Sections written so far: Intro", phase="Phase: RESEARCH."))
    chats.commit(turn, "ok")
    turn = chats.turn("Reviewer", prompt("Sections written so far: Intro; Usage", phase="Phase: DRAFTING."))
    new = user_turns(turn.messages)[-1]
    assert new.startswith("Phase: DRAFTING.")
    assert "Sections written so far: Intro; Usage" in new
    assert turn.messages[0]["content"].endswith("Phase: RESEARCH."), "the system message stays the first turn's"


def test_an_answer_that_is_not_the_agents_memory_is_still_shown():
    chats = Conversations()
    chats.commit(chats.turn("Researcher", prompt()), "RESEARCH_EXHAUSTED")
    overruled = memory_item("The sources say tasks run one at a time.")  # the runner kept the evidence instead
    turn = chats.turn("Researcher", prompt(overruled))
    assert overruled in user_turns(turn.messages)[-1]


def test_nothing_changes_until_the_turn_is_answered():
    chats = Conversations()
    chats.commit(chats.turn("Researcher", prompt(SOURCES_1)), "first answer")
    chats.turn("Researcher", prompt(SOURCES_2))  # the call failed: never committed
    turn = chats.turn("Researcher", prompt(SOURCES_2))
    assert len(turn.messages) == 4 and "gather()" in turn.messages[3]["content"]


def test_a_chat_past_its_limit_starts_again_from_the_stand_alone_prompt():
    chats = Conversations(max_chars=400)
    chats.commit(chats.turn("Researcher", prompt(SOURCES_1)), "x" * 100)
    long = prompt(SOURCES_2, "Message from Reviewer: " + "y" * 200)
    turn = chats.turn("Researcher", long)
    assert turn.restarted and turn.messages == long.messages()
    assert chats.turn("DataAnalyst", prompt()).restarted is False  # each agent has its own chat


def test_the_limit_is_checked():
    with pytest.raises(ValueError, match="conversation_max_chars"):
        Conversations(max_chars=0)
