"""Do the documents cover the topic at all? Asked once, before the team writes.

Retrieval always answers: on two licence texts, a query about diets comes back with the
licence passages closest to it, and a team handed them writes a "report" of licence
fragments. So before the run, the topic is searched for, and the passages that come back
are read for the topic's own words (its content words, stemmed as the judge stems them):
the documents cover the topic when at least one passage names at least half of them
(`COVERED_TERM_SHARE`; one of one or two). When none does, `write_report` writes no
section, says what it searched and what came back, and exits with
`NOT_COVERED_EXIT_CODE`.

The same record makes an empty report's note truthful: what was searched, how many
passages came back and from which files, and how many of them name the topic's words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .judges.reference import key_terms_of
from .sentence_reuse import content_stems

COVERED_TERM_SHARE = 0.5
PROBE_TOP_K = 8
NOT_COVERED_EXIT_CODE = 4  # write_report.py: the documents do not cover the topic (no section written)
_EXCERPT_CHARS = 90


def terms_needed(terms: int) -> int:
    """How many of `terms` words a text must name to cover what they ask (`COVERED_TERM_SHARE`, at least one)."""
    return max(1, math.ceil(terms * COVERED_TERM_SHARE)) if terms else 0


@dataclass(frozen=True)
class Passage:
    """One passage the probe got back: where it is, which topic terms it names, how it opens."""

    citation: str
    terms: tuple[str, ...]
    excerpt: str


@dataclass(frozen=True)
class Coverage:
    topic: str
    queries: tuple[str, ...]
    terms: tuple[str, ...]  # the topic's content words, stemmed
    passages: tuple[Passage, ...] = field(default_factory=tuple)

    @property
    def needed(self) -> int:
        """How many topic terms one passage must name."""
        return terms_needed(len(self.terms))

    @property
    def best(self) -> Passage | None:
        return max(self.passages, key=lambda p: len(p.terms), default=None)

    @property
    def covered(self) -> bool:
        """True when a passage names enough of the topic's terms (or the topic has no content word to check)."""
        if not self.terms:
            return True
        best = self.best
        return best is not None and len(best.terms) >= self.needed

    def explain(self) -> str:
        """What was searched and what came back, in plain words."""
        searched = "; ".join(f'"{q}"' for q in self.queries)
        if not self.passages:
            return f"Searched the documents for {searched}: nothing came back."
        files = sorted({p.citation.split(", p.")[0] for p in self.passages})
        best = self.best
        assert best is not None
        named = ", ".join(best.terms) if best.terms else "none"
        return (
            f"Searched the documents for {searched}: {len(self.passages)} passage(s) came back from "
            f'{", ".join(files)}; the closest ({best.citation}: "{best.excerpt}") names {len(best.terms)} of the '
            f"topic's {len(self.terms)} key words ({named}; {self.needed} needed)."
        )


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT_CHARS else flat[: _EXCERPT_CHARS - 3].rstrip() + "..."


def passages_of(chunks: Sequence[Any], terms: Sequence[str]) -> tuple[Passage, ...]:
    """Passages from retrieved chunks (anything with text, source and page), each with the topic terms it names."""
    wanted = set(terms)
    out = []
    for c in chunks:
        text = str(getattr(c, "text", ""))
        page = getattr(c, "page", None)
        citation = f"{c.source}, p. {page}" if page is not None else str(c.source)
        named = tuple(t for t in terms if t in content_stems(text) and t in wanted)
        out.append(Passage(citation, named, _excerpt(text)))
    return tuple(out)


def probe_coverage(topic: str, retrieve: Callable[[list[str]], Sequence[Any]]) -> Coverage:
    """Search for `topic` with `retrieve` (queries -> chunks) and read what came back."""
    queries = [" ".join(topic.split())]
    terms = tuple(key_terms_of(topic))
    return Coverage(topic=topic, queries=tuple(queries), terms=terms, passages=passages_of(retrieve(queries), terms))


def searched_in_run(rounds: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[tuple[str, Any]]]:
    """(the queries the team ran, the distinct (source, page) passages that came back) from a
    trace's rounds (`rounds[i]["agents"][name]["retrieval"]`), in first-seen order."""
    queries: list[str] = []
    passages: list[tuple[str, Any]] = []
    for rnd in rounds:
        for agent in (rnd.get("agents") or {}).values():
            retrieval = (agent or {}).get("retrieval") or {}
            for q in retrieval.get("queries") or []:
                if q not in queries:
                    queries.append(q)
            for c in retrieval.get("chunks") or []:
                where = (str(c.get("source")), c.get("page"))
                if where not in passages:
                    passages.append(where)
    return queries, passages


def no_section_note(corpus: str, rounds: Sequence[Mapping[str, Any]], gaps: Sequence[str] = ()) -> str:
    """Why a run wrote no section, as the trace shows it: what was searched, what came back."""
    queries, passages = searched_in_run(rounds)
    shown = "; ".join(f'"{q}"' for q in queries[:4]) + (f" and {len(queries) - 4} more" if len(queries) > 4 else "")
    if not queries:
        found = "The team ran no search."
    elif not passages:
        found = f"The team searched for {shown}, and nothing came back."
    else:
        files = sorted({s for s, _ in passages})
        found = (
            f"The team searched for {shown}; {len(passages)} passage(s) came back from {', '.join(files)}, "
            "and no section could be written from them (trace.json says why, per round)."
        )
    missing = f" Not found: {'; '.join(gaps[:6])}." if gaps else ""
    return f"Short report: no section was written from the documents in {corpus}. {found}{missing}"
