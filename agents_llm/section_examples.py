"""A section's example: the short code block its heading's passage shows, quoted as the document writes it.

A reader of "Creating environments" wants the command (`python3 -m venv ...`) as much as the
sentences around it, and only sentences are quoted: code is never prose. A section planned
from a document heading is written from the passage that heading heads, so a short fenced
block in that passage (Markdown's, or an HTML page's `<pre>`, which the loader fences) is the
document's own example for it. It is added after the section's sentences, verbatim and
fenced, when it is short (`MAX_EXAMPLE_LINES`, `MAX_EXAMPLE_CHARS`) and at most half as long as
the sentences it follows, so that a section stays prose with an example, not code with a
caption (the referee flags a text that is half code; the reference judge reads prose only).
A PDF's code has no fence to tell it from a table or a formula, so a PDF gives none; nor does
a block the injection guard would change or one with a line that speaks to the model. An
interpreter session is the one change allowed: its `>>>` prompts are prompt delimiters to the
guard, which neutralises them in every prompt, but in a report they are the document's own
example (`>>> glob.glob('*.gif')`), quoted from the passage's unguarded text
(`SourceRef.raw_text`); the report reaches a prompt only through the guard again.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from rag.guard import guard_untrusted_text
from rag.headings import heading_key
from rag.sentences import blocks

from .report_state import SourceRef
from .sentence_reuse import instruction_like

MAX_EXAMPLE_LINES = 10  # a command or a few lines of use, not a program
MAX_EXAMPLE_CHARS = 500
_FENCE_LINE = re.compile(r"^\s*(?:`{3,}|~{3,})")
_INTERPRETER_PROMPT = ">>>"


def _quotable(code: str) -> bool:
    """Nothing in `code` the guard would change but an interpreter session's `>>>` prompts, each
    opening its line, and no line that speaks to the model."""
    guarded = guard_untrusted_text(code, max_chars=None)
    if guarded.removed_characters or guarded.truncated_from is not None:
        return False
    if any(f.kind != "delimiter" or f.excerpt != _INTERPRETER_PROMPT for f in guarded.findings):
        return False
    lines = [line for line in code.splitlines() if line.strip()]
    if any(_INTERPRETER_PROMPT in line and not re.match(r"^>>>(?: |$)", line) for line in lines):
        return False
    return not any(instruction_like(line) for line in lines)


def passage_example(sources: Sequence[SourceRef], heading: str) -> tuple[str, Optional[SourceRef]]:
    """The first short fenced code block of `heading`'s passage among `sources`, fenced, and the
    passage part it is in; ("", None) when there is none."""
    key = heading_key(heading)
    for ref in sources:
        if not ref.heading or heading_key(ref.heading) != key:
            continue
        for block in blocks(ref.raw_text or ref.text):
            lines = block.text.strip().splitlines()
            if (
                block.kind != "code"
                or len(lines) < 3
                or not (_FENCE_LINE.match(lines[0]) and _FENCE_LINE.match(lines[-1]))
            ):
                continue  # no whole fenced block (an indented one may be a quotation; a cut one is not all there)
            code = [line.rstrip() for line in lines[1:-1]]
            while code and not code[-1].strip():
                code.pop()
            while code and not code[0].strip():
                code.pop(0)
            text = "\n".join(code)
            if not code or len(code) > MAX_EXAMPLE_LINES or len(text) > MAX_EXAMPLE_CHARS:
                continue
            if "[neutralised" in text or not _quotable(text):
                continue  # the guard changed it, or it speaks to the model
            return f"```\n{text}\n```", ref
    return "", None


def with_example(text: str, sources: Sequence[SourceRef], heading: str) -> tuple[str, Optional[SourceRef]]:
    """(`text` followed by its heading's example, the passage part the example is from, None when
    no example was added): none when the example is over half as long as the sentences it follows."""
    example, ref = passage_example(sources, heading) if heading and text.strip() else ("", None)
    if not example or 2 * len(example) > len(text):
        return text, None
    return f"{text.rstrip()}\n\n{example}", ref
