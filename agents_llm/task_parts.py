"""The parts a task sentence asks for: its questions and its listed items.

"When is a dump written, how is it named and how is it sent to a program?" asks three things;
"How dpkg triggers work: declaring interest, activating a trigger, and what postinst gets" asks
for the three items after its colon. A report that answers one of them and not the others does
not answer the task, so the plan gives every part a section, or says the documents do not
cover it. Rules, no model: a task is cut at its colon (the items after it are the parts), at
commas and semicolons, and at "and"/"or" before a question word ("how X and how Y"); a piece
that is no question where the others are joins the next one when it sets it up ("If the pipe is
full, what ...") and the one before it otherwise ("which cannot be caught, blocked or ignored").

A part may lean on the one before it ("Which hooks run before a commit, and which of them can
stop it?"): `leans_on` says which earlier parts its pronouns stand for.
"""

from __future__ import annotations

import re
from typing import List

from agents_llm.text.split import words
from agents_llm.text.terms import STOPWORDS

QUESTION_WORDS = (
    "how",
    "what",
    "when",
    "why",
    "which",
    "where",
    "who",
    "whom",
    "whose",
    "whether",
    "does",
    "do",
    "is",
    "are",
    "can",
)
MAX_PARTS = 6

_QUESTION = re.compile(rf"^(?:{'|'.join(QUESTION_WORDS)})\b", re.IGNORECASE)
_LEADING_JOIN = re.compile(r"^(?:and|or|as well as|also|plus)\s+", re.IGNORECASE)
_JOIN_BEFORE_QUESTION = re.compile(rf"\s+(?:and|or)\s+(?=(?:{'|'.join(QUESTION_WORDS[:10])})\b)", re.IGNORECASE)
_LAST_ITEM = re.compile(r",?\s+(?:and|or)\s+(?=\S)")
# A clause that sets up the question after it ("If the pipe is full, what ..."), where any other
# piece that is no question goes on the part before it ("cannot be caught, blocked or ignored").
_CONDITION = re.compile(
    r"^(?:if|unless|once|after|before|while|because|since|although|though|given|in case|for|with|without)\b",
    re.IGNORECASE,
)


def _top_level_split(text: str, separators: str) -> List[str]:
    """``text`` cut at each of ``separators`` outside brackets and quotes."""
    out: List[str] = []
    current: List[str] = []
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if ch in separators and depth == 0:
            out.append("".join(current))
            current = []
        else:
            current.append(ch)
    out.append("".join(current))
    return [p.strip() for p in out if p.strip()]


def _tidy(part: str) -> str:
    part = _LEADING_JOIN.sub("", part.strip().rstrip("?.!;,").strip())
    return part[:1].upper() + part[1:] if part else part


def task_parts(task: str) -> List[str]:
    """The parts ``task`` asks for, in its order; the task itself when it asks one thing."""
    text = " ".join(task.split()).strip().rstrip("?.!").strip()
    if not text:
        return []
    head, colon, tail = text.partition(":")
    if colon and tail.strip() and head.strip():
        items = _top_level_split(tail, ",;")
        if len(items) == 1:  # "a, b and c" may have no comma: "types and closures"
            items = _LAST_ITEM.split(items[0])
        elif not _LEADING_JOIN.match(items[-1]):  # "a, b and c": the last "and" parts two items
            *first, last = _LAST_ITEM.split(items[-1])
            items[-1:] = [" and ".join(first), last] if first else [last]
        parts = [_tidy(p) for p in items if _tidy(p)]
        return parts[:MAX_PARTS] if len(parts) > 1 else [_tidy(text)]
    pieces: List[str] = []
    for chunk in _top_level_split(text, ",;"):
        pieces.extend(_JOIN_BEFORE_QUESTION.split(_LEADING_JOIN.sub("", chunk)))
    pieces = [p for p in (_tidy(p) for p in pieces) if p]
    if len(pieces) < 2:
        return [_tidy(text)]
    questions = [bool(_QUESTION.match(p)) for p in pieces]
    if any(questions):
        merged: List[str] = []
        carry = ""
        for piece, is_question in zip(pieces, questions):
            if not is_question and merged and not carry and not _CONDITION.match(piece):
                # the rest of the part before it: "which cannot be caught, blocked or ignored"
                merged[-1] = f"{merged[-1]}, {piece[:1].lower()}{piece[1:]}"
            elif not is_question:
                carry = f"{carry}, {piece}" if carry else piece  # "If the pipe is full, what ..."
            else:
                merged.append(_tidy(f"{carry}, {piece[:1].lower()}{piece[1:]}") if carry else piece)
                carry = ""
        if carry:
            merged.append(carry)
        pieces = merged
    return pieces[:MAX_PARTS] if len(pieces) > 1 else [_tidy(text)]


# Pronouns that stand for something an earlier part named ("which of them can stop it", "what are
# they for"): they name nothing the part asks. A possessive after a word of the part's own ("how is
# a hook skipped or its location changed") stands for that word instead.
BACK_PRONOUNS = frozenset({"it", "they", "them"})
BACK_POSSESSIVES = frozenset({"its", "their", "theirs"})
REFERRING_WORDS = BACK_PRONOUNS | BACK_POSSESSIVES


def refers_back(part: str) -> bool:
    """Whether ``part`` has a pronoun that stands for something an earlier part named."""
    seen_own_word = False
    for word in (w.lower() for w in words(part)):
        if word in BACK_PRONOUNS or (word in BACK_POSSESSIVES and not seen_own_word):
            return True
        seen_own_word = seen_own_word or (len(word) >= 3 and word not in STOPWORDS and word not in REFERRING_WORDS)
    return False


def leans_on(parts: List[str]) -> List[List[int]]:
    """For each part, the indexes of the earlier parts its pronouns stand for, nearest first:
    the part before it, and what that one leans on in turn ("how does a program get it" after
    "what is the user environment"; "what are they for" after "which variables does it hold")."""
    out: List[List[int]] = []
    for i, part in enumerate(parts):
        out.append([i - 1, *out[i - 1]] if i and refers_back(part) else [])
    return out
