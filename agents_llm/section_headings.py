"""A report section's heading: what the plan, the writer or the documents give, and what is
never a heading (markup, talk about the report, orders to the writer, the topic restated)."""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from .text.split import sentences, words
from .prompt_echo import echoed_sentences
from .report_state import SourceRef
from .sentence_reuse import content_stems, title_from


# Wrappers a small model puts around a heading ("<<Report: ...>>", "**...**", quotes), and
# labels it writes before one: neither belongs in the report's heading.
_TITLE_WRAPPERS = (("<<", ">>"), ("\u00ab", "\u00bb"), ("<", ">"), ("[", "]"), ("(", ")"), ("{", "}"),
                   ("**", "**"), ("__", "__"), ("*", "*"), ("_", "_"), ('"', '"'), ("'", "'"), ("`", "`"),
                   ("\u201c", "\u201d"))  # fmt: skip
_TITLE_LABEL = re.compile(
    r"^(?:report(?:\s+topic)?|title|heading|topic|section(?:\s+\d+)?)\s*[:\-\u2013\u2014]\s*", re.I
)

# An outline's numbering ("1 What is libffi?", "2.3. Magic rules", "4) Closures"): the report
# numbers nothing, so a number before the words is the outline's, not the heading's.
_OUTLINE_NUMBER = re.compile(r"^\d{1,2}(?:\.\d{1,2})*[.)]?\s+(?=[A-Za-z])")  # a year is no outline number


def clean_title(title: str, topic: str) -> str:
    """``title`` without wrappers and a leading label; "" when what is left is empty or the
    report's topic itself (the report's own heading says that already)."""
    t, before = title, None
    while t != before:
        before = t
        t = t.strip().lstrip("#").strip()
        t = _TITLE_LABEL.sub("", t)
        t = _OUTLINE_NUMBER.sub("", t)
        for opener, closer in _TITLE_WRAPPERS:
            if len(t) > len(opener) + len(closer) and t.startswith(opener) and t.endswith(closer):
                t = t[len(opener) : -len(closer)]
                break
    if not words(t) or words(t) == words(topic):
        return ""
    return t


# A heading restates the task when it names this share of the topic's content words, and this
# share of its own are the topic's.
RESTATED_TOPIC_SHARE = 0.6
RESTATED_TITLE_SHARE = 0.8


def restates(title: str, topic: str) -> bool:
    """Does ``title`` restate the topic (most of the topic's content words and little else),
    or say nothing ("2.")?"""
    stems, topic_stems = content_stems(title), content_stems(topic)
    if not stems:
        return True
    shared = len(stems & topic_stems)
    # The whole topic, with little else: "Creating virtual environments" under "Creating and
    # activating virtual environments" is a part of it, not a restatement.
    return (
        bool(topic_stems)
        and shared / len(topic_stems) >= RESTATED_TOPIC_SHARE
        and shared / len(stems) >= RESTATED_TITLE_SHARE
    )


# What a small model writes where a heading goes that is no heading: a code fence or HTML tag
# ("```python", "pre><code"), or talk about the report, the task or itself ("Here's a possible
# start to the report:", "The report is now ready to be sent.", "This task will be completed ...",
# "The team has found a path name ...").
_TWO_SENTENCES = re.compile(r"[a-z]{2,}[.!?]\s+[A-Z]")  # "... directories. It works": a text cut, not a heading
_MARKUP_TITLE = re.compile(r"`{3}|</?[A-Za-z][\w-]*>|\w><|<[A-Za-z][\w-]*$")
_CHATTER_TITLE = re.compile(
    r"^(?:here(?:'s|\s+is|\s+are)|sure|certainly|okay|below|the following|please|let me|i (?:will|have|am|can)"
    r"|in this (?:section|report)|this (?:is|task|report|section|will))\b"
    r"|\b(?:the|this|our) report\b|\b(?:this|next|following) section\b|\bthis task\b|\bbullet points?\b"
    r"|^(?:the|our) team (?:has|have|is|are|was|were|will|would|should|can|could|must|needs?|wants?|found|decided"
    r"|plans?)\b",
    re.IGNORECASE,
)
# An order to the writer, from an outline written as a to-do list ("Briefly introduce the
# database and its purpose.", "Write a detailed section on ..."): what to write, not what it is.
_INSTRUCTION_TITLE = re.compile(
    r"^(?:briefly\s+|then\s+|now\s+)?(?:write|describe|explain|discuss|introduce|summari[sz]e|elaborate|"
    r"outline|present|mention|highlight|provide\s+(?:an?\s+|the\s+)?(?:overview|introduction|summary|"
    r"explanation|description|example))\b"
    r"|^(?:an?\s+)?brief\s+(?:overview|introduction|summary|description)\s+of\b.*\.$",
    re.IGNORECASE,
)
# A lone word that labels a code block or the document's parts, not what a section is about.
_LABEL_WORDS = frozenset("script python code pre text json bash shell console output example report section".split())


def not_a_heading(title: str) -> str:
    """Why ``title`` is no heading ("" when it may be one): markup, talk about the report or
    the task, an introduction (ends with a colon), more than one sentence, an instruction to
    the writer, or a lone label word."""
    t = title.strip()
    if _MARKUP_TITLE.search(t):
        return "markup"
    if _CHATTER_TITLE.search(t):
        return "talk about the report or the task"
    if t.endswith(":"):
        return "an introduction to something else"
    if _TWO_SENTENCES.search(t):
        return "more than one sentence"
    if _INSTRUCTION_TITLE.search(t) and (t.endswith(".") or len(words(t)) >= 5):
        return "an instruction to the writer"
    if len(words(t)) == 1 and words(t)[0] in _LABEL_WORDS:
        return "a label"
    return ""


_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)[\s#]*$")
_SIGNATURE = re.compile(r"^((?:class\s+)?[\w.]+)\s*\(.*\)\s*$")  # "inspect.getsourcelines(object)"


def _short_heading(heading: str, max_chars: int = 80) -> str:
    h = heading.strip().strip("`*_ ").strip()
    m = _SIGNATURE.match(h)
    if m:  # an API entry's heading: the name says what the section is about, the arguments do not
        h = m.group(1)
    return h if len(h) <= max_chars else title_from(h)


def document_heading(body: str, passages: Sequence[SourceRef]) -> str:
    """The heading the documents give to what ``body`` quotes: the Markdown heading above the
    first of its sentences found under one in ``passages`` (a chunk keeps its document's heading
    lines); "" when none is (text before a chunk's first heading belongs to a heading it lacks)."""
    said = [" ".join(words(s)) for s in sentences(body)]
    said = [s for s in said if len(s.split()) >= 3]
    for ref in passages:
        heading, block = "", []
        for line in ref.text.splitlines() + ["# (end of passage)"]:
            m = _MD_HEADING.match(line)
            if not m:
                block.append(line)
                continue
            if heading and block:
                norm = " ".join(words(" ".join(block)))
                if any(s in norm for s in said):
                    return _short_heading(heading)
            heading, block = m.group(1), []
    return ""


def split_inner_headings(body: str) -> tuple[str, str]:
    """(the heading ``body`` opens on, or "", the body with its own headings one level below a
    section's): a writer that puts "## Overview" inside its section would otherwise start
    sections of its own in the report, and the heading it opens on is what the section is about.
    A heading that `not_a_heading` refuses (talk about the report, markup, an instruction) is
    dropped, the text under it kept."""
    lines = body.strip().splitlines()
    first = ""
    if lines:
        m = _MD_HEADING.match(lines[0])
        if m:
            first, lines = m.group(1).strip(), lines[1:]
            first = "" if not_a_heading(first) else first
    # A heading that is no heading ("2. The report will have a clean structure ...") goes with
    # its line: the grounding checks sentences, and a heading is none.
    out = []
    for line in lines:
        m = _MD_HEADING.match(line)
        if m and not_a_heading(m.group(1)):
            continue
        out.append(re.sub(r"^\s{0,3}#{1,3}\s+", "### ", line))
    return first, re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


_PLACEHOLDER_TITLE = re.compile(r"^section \d+$", re.IGNORECASE)


def section_title(candidates: Iterable[str], topic: str, fallback: str, taken: Iterable[str] = ()) -> str:
    """The first of ``candidates`` that :func:`clean_title` keeps, that is a heading at all
    (:func:`not_a_heading`), does not echo our prompts (an objective parsed from an echoed
    instruction is one), does not restate the topic and is not the heading of another section
    (``taken``), else ``fallback``."""
    used = {" ".join(words(t)) for t in taken}
    for candidate in candidates:
        title = clean_title(candidate, topic)
        if (
            title
            and not _PLACEHOLDER_TITLE.match(title)  # a fallback of an earlier step, not a title
            and not not_a_heading(title)
            and echoed_sentences(title, topic=topic)[0] == 0  # the topic's words aside, not our instructions
            and not restates(title, topic)
            and " ".join(words(title)) not in used
        ):
            return title
    return fallback
