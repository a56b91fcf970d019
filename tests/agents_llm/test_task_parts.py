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
