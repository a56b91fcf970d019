"""Each agent's conversation over an episode: later turns append only what is new.

With `engine.conversation` off (the default) every call stands alone: the agent's prompt
restates its role, the topic, the report so far, the sources and its own last output, and
the model reads all of it again. On, an agent's calls form one chat: its first turn is the
stand-alone prompt; each later turn appends the agent's last answer and a user message
holding only the parts of the new prompt the agent has not been shown in this chat (the
topic once, a data item once, a source excerpt once, the phase block when the phase
changes); the instruction and the task are stated every turn. Every earlier turn is then a
prefix of the next prompt, which an in-process model keeps evaluated
(`backends.llama_prefix`), so a call evaluates its new turn and the answer before it.

A chat longer than `max_chars` starts again from the stand-alone prompt (the model's
context is finite, and a small model reads a long history poorly).

What an agent sees changes: what it was shown earlier stays in its history instead of
being repeated, and its own earlier answers are its chat's assistant turns. The ledger
charges every call its whole prompt, as a server without a prompt cache would.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from .prompts import MAX_MEMORY_CHARS, AgentPrompt, Message, data_block, memory_item, untrusted

# A source excerpt's number ("[2] ") changes with the search that found it; the excerpt does not.
_EXCERPT_NUMBER = re.compile(r"^\[\d+\]\s*")
# Items whose lines are shown one by one: a search returns many excerpts it returned before.
LINE_ITEMS = ("Retrieved sources:",)


def _line_key(line: str) -> str:
    return _EXCERPT_NUMBER.sub("", line.strip())


@dataclass
class Chat:
    """One agent's chat: its messages (system first) and what its turns have shown."""

    messages: list[Message]
    shown: set[str] = field(default_factory=set)  # data items, and excerpt lines of LINE_ITEMS
    phase: str = ""

    @property
    def chars(self) -> int:
        return sum(len(m["content"]) for m in self.messages)


@dataclass
class PendingTurn:
    """A turn's prompt and the chat it leaves once answered (`Conversations.commit`)."""

    agent: str
    messages: list[Message]
    chat: Chat
    restarted: bool  # the chat began again from the stand-alone prompt


def _new_items(items: Sequence[str], shown: set[str]) -> tuple[list[str], set[str]]:
    """The items (and excerpt lines) not in `shown`, and what showing them adds to it."""
    new, added = [], set()
    for item in items:
        label, _, rest = item.partition("\n")
        if label in LINE_ITEMS and rest:
            fresh = [line for line in rest.split("\n") if _line_key(line) not in shown]
            added |= {_line_key(line) for line in fresh}
            if fresh:
                new.append("\n".join([label, *fresh]))
        elif item not in shown:
            new.append(item)
            added.add(item)
    return new, added


def _all_shown(prompt: AgentPrompt) -> set[str]:
    return _new_items(prompt.data, set())[1]


class Conversations:
    """The chats of one episode's agents, by agent name."""

    def __init__(self, max_chars: int = 8000):
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
            raise ValueError(f"engine.conversation_max_chars must be an integer >= 1, got {max_chars!r}")
        self.max_chars = max_chars
        self.chats: dict[str, Chat] = {}

    def turn(self, agent: str, prompt: AgentPrompt) -> PendingTurn:
        """The messages of `agent`'s next call; nothing changes until `commit`."""
        chat = self.chats.get(agent)
        if chat is not None:
            parts = [prompt.phase] if prompt.phase and prompt.phase != chat.phase else []
            new, added = _new_items(prompt.data, chat.shown)
            parts += [*data_block(new), *prompt.directions]
            user: Message = {"role": "user", "content": "\n\n".join(parts)}
            grown = Chat([*chat.messages, user], chat.shown | added, prompt.phase or chat.phase)
            if grown.chars <= self.max_chars:
                return PendingTurn(agent, list(grown.messages), grown, restarted=False)
        fresh = Chat(prompt.messages(), _all_shown(prompt), prompt.phase)
        return PendingTurn(agent, list(fresh.messages), fresh, restarted=chat is not None)

    def commit(self, pending: PendingTurn, answer: str) -> None:
        """`pending` was answered with `answer`: the agent's chat goes on from it. The answer is
        the turn's assistant message, and the item that would repeat it ("Your previous output")
        counts as shown."""
        chat = pending.chat
        # As "Your previous output" would show it: guarded and clipped.
        chat.messages.append({"role": "assistant", "content": untrusted(answer, MAX_MEMORY_CHARS)})
        chat.shown.add(memory_item(answer))
        self.chats[pending.agent] = chat
