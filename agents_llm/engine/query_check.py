"""Is a generated search query a plausible query for the topic? If none is, what to search instead.

A 135M model asked for search queries often answers with code ("```python ... from
dataclasses import dataclass"), a fragment of two tokens, or words unrelated to the
report; the store then answers with whatever is closest to that (a changelog), and the
team writes about it. A query is kept only when it looks like words a reader would type
(not code), has at least `MIN_WORDS` words, and names at least one content term of the
topic, the team objective or the outline; otherwise the Researcher searches for the
topic and outline terms instead.

An instruction of the pipeline is never a query: a model that echoes its prompt ("The
team gathers evidence from the sources for the planned sections") names words of the
objective, so it read as on topic, and the store answered the instruction. A query or an
objective that echoes our instructions (`prompt_echo.echo_reason`: verbatim, a label, or
rephrased in their vocabulary) is refused, and an echoed objective lends no terms. So is a
line carrying a token of the protocol ("SECTION_ID: S1"), and one whose subject is the team's
own work ("The team is planning to write a report ...", "The report is now ready."), unless
the topic itself is about reports, teams or sections.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..text.terms import key_terms_of, stem
from ..text.split import words
from ..prompt_echo import echo_reason
from report_protocol import vocabulary

MIN_WORDS = 2  # "asyncio" alone is a term, not a query; the topic fallback covers it
MAX_WORDS = 24  # a paragraph is not a query
MAX_SYMBOL_SHARE = 0.12  # share of characters outside letters, digits, spaces and -'.,?
ECHO_MIN_WORDS = 3  # content words (beyond the topic's) from which a query can read as a rephrased instruction

# Things that make a line code or markup, not a query.
_CODE = re.compile(
    r"```|^\s*(?:#|//|>>>|\$ )|\b(?:import|def|class|return|lambda|print)\b\s*[\w(]|"
    r"[{};<>=]|\w\(|\)\s*:|^\s*@\w",
    re.IGNORECASE,
)
_PLAIN = re.compile(r"[\w\s\-'.,?]")

# The protocol's own tokens ("SECTION_ID", "RESEARCH_EXHAUSTED"): a line carrying one is copied from a prompt.
_TOKEN = re.compile(r"\b[A-Z]+(?:_[A-Z]+)+\b")
_PROTOCOL_TOKENS = frozenset(
    token
    for name, value in vars(vocabulary).items()
    if name.isupper()
    for token in _TOKEN.findall(" ".join(map(str, value.values())) if isinstance(value, dict) else str(value))
)
# A line whose subject is the team's own work ("The team is planning to write a report ...", "The report
# is now ready.") narrates the pipeline: it asks the store nothing about the documents' subject.
_OUR_WORK = ("team", "report", "section", "outline", "draft")
_ABOUT_OUR_WORK = re.compile(r"^\W*(?:the|this|our|a|an)\s+(" + "|".join(_OUR_WORK) + r")s?\b", re.IGNORECASE)


def instruction_echo(text: str, topic: str = "") -> str | None:
    """'verbatim', 'label' or 'rephrased' when `text` echoes an instruction of the pipeline, else None."""
    return echo_reason(" ".join(text.split()), topic=topic, min_words=ECHO_MIN_WORDS)


def junk_reason(query: str, terms: Sequence[str], topic: str = "") -> str | None:
    """Why `query` is not a plausible search query for `terms` (stemmed content words), or None."""
    q = query.strip()
    echo = instruction_echo(q, topic)
    if echo:
        return f"an instruction of the pipeline ({echo}), not a query"
    token = next((t for t in _TOKEN.findall(q) if t in _PROTOCOL_TOKENS), None)
    if token:
        return f"a token of the pipeline's protocol ({token}), not a query"
    ours = _ABOUT_OUR_WORK.match(q)
    if ours and stem(ours.group(1).lower()) not in {stem(w) for w in words(topic)}:
        return f"about the team's own {ours.group(1).lower()}, not the documents' subject"
    if _CODE.search(q):
        return "code, not a query"
    symbols = sum(1 for ch in q if not _PLAIN.match(ch))
    if q and symbols / len(q) > MAX_SYMBOL_SHARE:
        return "mostly symbols"
    w = words(q)
    if len(w) < MIN_WORDS:
        return f"too short ({len(w)} word{'s' if len(w) != 1 else ''})"
    if len(w) > MAX_WORDS:
        return f"too long ({len(w)} words)"
    if terms and not ({stem(x) for x in w} & set(terms)):
        return "names no term of the topic, objective or outline"
    return None


def query_terms(topic: str, objective: str = "", outline: Sequence[str] = ()) -> list[str]:
    """The stemmed content words a query should share: topic, objective, section titles; an
    objective or title that echoes an instruction of the pipeline lends none."""
    own = [t for t in [objective, *outline] if t.strip() and not instruction_echo(t, topic)]
    return key_terms_of(topic, own)


def fallback_queries(
    topic: str, objective: str = "", outline: Sequence[str] = (), max_queries: int = 3, section: str = ""
) -> list[str]:
    """Queries built from the topic and outline terms: the section the plan asks evidence for,
    with the topic's words (a title alone, "Event Loop", may name no topic term), the topic
    itself, then the objective and the latest section title when they are plausible queries of
    their own."""
    topic_terms = key_terms_of(topic)
    out = [topic.strip()] if topic.strip() else []
    section = " ".join(section.split())
    if section and section.lower() not in topic.lower() and not instruction_echo(section, topic):
        out.insert(0, f"{section} {topic.strip()}".strip()[:200])
    for extra in [objective, *reversed(list(outline))]:
        extra = " ".join(extra.split())[:200]
        if extra and extra.lower() not in {q.lower() for q in out} and junk_reason(extra, topic_terms, topic) is None:
            out.append(extra)
        if len(out) >= max_queries:
            break
    return out[:max_queries]


def vet_queries(
    queries: Sequence[str],
    *,
    topic: str,
    objective: str = "",
    outline: Sequence[str] = (),
    max_queries: int = 3,
    no_query_allowed: bool = True,
    section: str = "",
) -> tuple[list[str], list[dict], bool]:
    """(queries to run, rejected [{query, reason}], fell back?) for the Researcher's parsed queries.

    An empty list (NO_QUERY: the model decided not to search) stays empty when
    `no_query_allowed`; otherwise (nothing retrieved yet in the episode, or the plan asked for
    a section's evidence) it falls back too. `section`: the title of the section the plan asks
    evidence for; its words count as topic terms and the fallback searches for it.
    """
    if not queries:
        if no_query_allowed:
            return [], [], False
        return (
            fallback_queries(topic, objective, outline, max_queries, section),
            [{"query": "NO_QUERY", "reason": "evidence for a section was asked" if section else "no evidence yet"}],
            True,
        )
    terms = query_terms(topic, objective, [*outline, section] if section else outline)
    kept, rejected = [], []
    for q in queries:
        reason = junk_reason(q, terms, topic)
        if reason is None:
            kept.append(q)
        else:
            rejected.append({"query": q, "reason": reason})
    if kept:
        return kept, rejected, False
    return fallback_queries(topic, objective, outline, max_queries, section), rejected, True
