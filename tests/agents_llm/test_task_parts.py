"""A task sentence is split into the parts it asks for."""

from __future__ import annotations

import pytest

from agents_llm.task_parts import task_parts


@pytest.mark.parametrize(
    "task, parts",
    [
        (
            "When is a core dump written, how is it named and how is it sent to a program?",
            ["When is a core dump written", "How is it named", "How is it sent to a program"],
        ),
        (
            "How to keep a starter healthy: feeding routine, signs of health and signs of contamination",
            ["Feeding routine", "Signs of health", "Signs of contamination"],
        ),
        (
            "How dpkg triggers work: declaring interest, activating a trigger, and what postinst is called with",
            ["Declaring interest", "Activating a trigger", "What postinst is called with"],
        ),
        ("What goes in and what stays out?", ["What goes in", "What stays out"]),
        (
            "If a socket is closed, what happens to pending data and how is the peer told?",
            ["If a socket is closed, what happens to pending data", "How is the peer told"],
        ),
        (
            "Which signals terminate a process by default and which stop it, which signals cannot be caught, "
            "blocked or ignored, and what happens to a signal that arrives while it is blocked?",
            [
                "Which signals terminate a process by default",
                "Which stop it",
                "Which signals cannot be caught, blocked or ignored",
                "What happens to a signal that arrives while it is blocked",
            ],
        ),
        (
            "What does a cache hold, in bytes and in entries, and when is it flushed?",
            ["What does a cache hold, in bytes and in entries", "When is it flushed"],
        ),
        ("Users and groups of a Debian system", ["Users and groups of a Debian system"]),
        ("A file's size, in bytes: why it matters", ["A file's size, in bytes: why it matters"]),
    ],
)
def test_task_parts(task, parts):
    assert task_parts(task) == parts


@pytest.mark.parametrize(
    "task, leaning",
    [
        (
            # "them" are the hooks of the part before; "its" follows the part's own "hook".
            "Which hooks run before a commit, which of them can stop it, and how is a hook skipped or its location changed?",
            [[], [0], []],
        ),
        (
            "What is the user environment, how does a program get it, which variables does it hold and what are they for?",
            [[], [0], [1, 0], [2, 1, 0]],
        ),
        ("When is a core dump written, how is it named and how is it sent to a program?", [[], [0], [1, 0]]),
        ("Keeping a starter: feeding routine, signs of contamination and their causes", [[], [], [1]]),
    ],
)
def test_a_part_with_a_pronoun_leans_on_the_part_before_it(task, leaning):
    from agents_llm.task_parts import leans_on

    assert leans_on(task_parts(task)) == leaning


def test_a_pronoun_is_none_of_what_a_part_asks():
    """ "Which of them can stop it" asks "stop", not "them"; "what are they for" asks about what
    "they" stands for, the part before it."""
    from report_app.task_plan import own_words

    parts = task_parts(
        "Which hooks run before a commit, which of them can stop it, which variables are set and what are they for?"
    )
    asks = dict(zip(parts, own_words(parts)))
    assert asks["Which of them can stop it"] == ("stop",)
    assert asks["What are they for"] == ("set", "variabl")
    assert all("them" not in a and "they" not in a for a in asks.values())


def test_a_questions_light_verb_is_none_of_what_it_asks_while_other_words_of_its_own_remain():
    """ "Where does the shell look for commands" is answered by "the shell searches PATH for
    commands": "look" is how the question asks. In "how does a program get it" the light verb is
    all that tells the part from the others ("program" is another part's too), so it stays: the
    words parts share would be named by any sentence on the topic."""
    from report_app.task_plan import PartPlan, mark_covered, own_words

    parts = task_parts(
        "What is the user environment and how does a program get it, where does the shell look for commands, "
        "and how is a variable set for a program?"
    )
    asks = dict(zip(parts, own_words(parts)))
    assert asks["Where does the shell look for commands"] == ("command", "shell")
    assert asks["How does a program get it"] == ("get",)
    plan = PartPlan(parts[2], "PATH", asks=asks[parts[2]])
    mark_covered([plan], [("PATH", "The shell searches the directories listed in PATH for commands.")])
    assert plan.covered
