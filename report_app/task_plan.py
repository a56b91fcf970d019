"""A plan from the task's parts: each part a section under the documents' heading closest to
it, or a plain line saying the documents do not cover it.

A task that asks three things ("when is it written, how is it named and how is it sent to a
program?") is answered only when each of them gets a section. The parts come from
`agents_llm.task_parts`; each part's section is the document heading closest to the part
(`agents_llm.document_outline`, the part as its topic, with the task's subject before a colon
beside it), one heading per part. A part no heading is about gets a section titled by the part
itself when a search for it finds a passage naming its words (`agents_llm.coverage`); else it
is not covered, and the report says so. After the run a part is covered when its section is
in the report and one sentence of its body names what the part asks (at least half of the part's
own words, those no other part uses, together: a section under the right heading that speaks of
something else does not answer it, nor one that names the words in sentences about different
things, "owned" in one and "needing" in another; the report says that too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, List, Mapping, Optional, Sequence

from agents_llm.coverage import probe_coverage, terms_needed
from agents_llm.text.split import sentences, words
from agents_llm.text.terms import STOPWORDS, stem
from agents_llm.sentence_reuse import content_stems
from agents_llm.task_parts import REFERRING_WORDS, leans_on, task_parts

NOT_COVERED = "the documents do not cover this"


@dataclass
class PartPlan:
    part: str
    title: Optional[str]  # its section's title; None: not covered
    covered: bool = False  # after the run: its section is in the report and answers the part
    # The part's own words (stemmed; those no other part of the task uses), which its section's body must name.
    asks: tuple[str, ...] = ()
    written: bool = False  # after the run: a section under its title is in the report
    unanswered: tuple[str, ...] = field(default=())  # after the run: the own words its closest sentence lacks

    def line(self) -> str:
        if self.written and not self.covered:
            return (
                f"{self.part}: the section “{self.title}” does not answer this "
                f"(its closest sentence lacks {', '.join(self.missing_words)})."
            )
        return f"{self.part}: {NOT_COVERED}."

    @property
    def missing_words(self) -> list[str]:
        """The part's own words its closest sentence lacks, as the task writes them (not their stems)."""
        said = [w for w in words(self.part) if stem(w) in self.unanswered]
        return list(dict.fromkeys(said)) or list(self.unanswered)

    @property
    def needed(self) -> int:
        """How many of the part's own words its section must name (`agents_llm.coverage`'s share)."""
        return terms_needed(len(self.asks))


def plan_parts(task: str, store: Optional[Any], search: Callable[[List[str]], Sequence[Any]]) -> List[PartPlan]:
    """One `PartPlan` per part of ``task``; [] when the task asks one thing (the outline is then
    the documents' headings closest to the whole task). ``store``: the RAG store (its headings
    and embedding), None with a caller's own retriever (parts are then titled by themselves)."""
    parts = task_parts(task)
    if len(parts) < 2:
        return []
    head, colon, _ = task.partition(":")
    context = head.strip() if colon else ""
    headings, quotable = [], None
    if store is not None:
        from agents_llm.document_outline import passage_has_prose
        from rag.heading_passages import HeadingPassages

        passages = HeadingPassages.of_store(store)
        headings, quotable = passages.headings, passage_has_prose(passages)
    taken: set[str] = set()
    plans: List[PartPlan] = []
    for i, (part, asks, earlier) in enumerate(zip(parts, own_words(parts), leans_on(parts))):
        # A part's pronouns stand for what the parts before it name ("which of them can stop it"):
        # the heading is chosen with those parts beside it, as with the task's subject before a colon.
        beside = [parts[j] for j in earlier[:2]] + ([context] if context else [])
        topic = f"{part} ({'; '.join(beside)})" if beside else part
        own = _own(i, parts)  # empty when other parts use all its words: then any heading may do
        title = _closest_heading(headings, topic, store, quotable, taken, own)
        if title is None and probe_coverage(topic, search).covered:
            title = part
        if title is not None:
            taken.add(title.lower())
        plans.append(PartPlan(part, title, asks=asks))
    return plans


# The verbs a question asks with, not about: "where does the shell look for the commands it runs"
# is answered by "the shell searches the directories in PATH for commands". A sentence that answers
# names what the part asks about, seldom these.
LIGHT_VERBS = frozenset(
    stem(w)
    for w in "look looks get gets got work works happen happens make makes go goes mean means come comes "
    "take takes have has had".split()
)


def _stems(part: str) -> set[str]:
    """A part's content words, stemmed; a pronoun ("them", "they") names nothing the part asks."""
    return content_stems(part) - REFERRING_WORDS


def _own(i: int, parts: Sequence[str]) -> set[str]:
    """What part ``i`` asks that the other parts do not (stemmed): a heading about it names one of these."""
    others = set().union(*(_stems(p) for j, p in enumerate(parts) if j != i))
    return _stems(parts[i]) - others


def own_words(parts: Sequence[str]) -> List[tuple[str, ...]]:
    """Each part's own words, stemmed and sorted: those no other part uses, or all its words when
    every one is shared, or for a part whose only words are pronouns ("what are they for") those of
    the part they stand for. A question's light verb ("how is the name set and where does git look
    for it") is left out when other words of the part's own remain: alone, it is all that tells
    the part from the others, and the words they share would be named by any sentence on the
    topic. What a sentence answering the part must name."""
    earlier = leans_on(list(parts))
    out = []
    for i, part in enumerate(parts):
        asks = _own(i, parts) or _stems(part) or (_stems(parts[earlier[i][0]]) if earlier[i] else set())
        out.append(tuple(sorted(asks - LIGHT_VERBS or asks)))
    return out


def _closest_heading(
    headings: Sequence[Any], topic: str, store: Any, quotable: Any, taken: set[str], own: set[str]
) -> Optional[str]:
    if not headings or store is None:
        return None
    from agents_llm.document_outline import document_outline
    from rag.headings import heading_key

    under = {heading_key(h.title): h.under for h in headings}
    # The part is no report title: a heading that says what the part asks is its section, not an echo.
    entries = document_outline(headings, topic, store.embedding, size=12, quotable=quotable, restating_ok=True)
    ranked = []
    for rank, entry in enumerate(entries):
        if entry.title.lower() in taken or entry.title.split()[-1].lower() in STOPWORDS:
            continue  # taken, or a line cut from a sentence ("... generated by the")
        named = len(own & content_stems(entry.title))
        about = len(own & content_stems(f"{entry.title} {under.get(heading_key(entry.title), '')}"))
        if own and not about:
            continue
        ranked.append((-named, -about, rank, entry.title))  # a heading naming the part's own words first
    return min(ranked)[3] if ranked else None


def mark_covered(plans: Sequence[PartPlan], sections: Sequence[tuple[str, str]]) -> None:
    """After the run, from the report's (title, body) pairs: a part is covered when a section under
    its title was written and one sentence of that section names enough of what the part asks.
    One sentence, because a sentence that answers a part says its words together; a body that
    names them in sentences about other things ("owned by root", "packages needing ...") does not."""
    bodies: dict[str, list[set[str]]] = {}
    for title, body in sections:
        bodies.setdefault(title.strip().lower(), []).extend(content_stems(s) for s in sentences(body))
    for plan in plans:
        said = bodies.get(plan.title.strip().lower()) if plan.title is not None else None
        plan.written = said is not None
        closest = max(said or [set()], key=lambda stems: len(stems & set(plan.asks)))
        plan.unanswered = tuple(w for w in plan.asks if w not in closest)
        plan.covered = plan.written and len(plan.asks) - len(plan.unanswered) >= plan.needed


def one_round_per_section(sections: int) -> dict[str, Any]:
    """The handcrafted pipeline's config for a fixed outline: drafting only, one round per section,
    the Researcher searching by the section's title and the writer appending from its evidence."""
    return {
        "rounds": {"planning": 0, "research": 0, "drafting": sections, "review": 0, "revision": 0},
        "patterns": {
            "drafting": [
                {
                    "required": ["Researcher", "DataAnalyst"],
                    "edges": [["Researcher", "DataAnalyst"], ["DataAnalyst", "Collector"]],
                }
            ]
        },
    }


def _plan_is_default(policy_cfg: Mapping[str, Any]) -> bool:
    """No phase round count and no round pattern given: the plan is write_report's to choose."""
    rounds = policy_cfg.get("rounds") or {}
    patterns = policy_cfg.get("patterns") or {}
    return all(n is None for n in rounds.values()) and all(p is None for p in patterns.values())


def plan_sections(
    task: str,
    outline: Any,
    store: Optional[Any],
    search: Callable[[List[str]], Sequence[Any]],
    policy_cfg: dict[str, Any],
    engine_cfg: dict[str, Any],
    team: Sequence[str],
    given_rounds: Optional[int],
) -> tuple[List[PartPlan], List[str], Optional[int]]:
    """Set ``policy_cfg``'s outline (and, when the plan is write_report's to choose, its rounds and
    ``engine_cfg``'s summary): a section per part of the task, under the documents' heading closest to
    it; for a task that asks one thing, `report_app.outline`'s. Returns (the parts, lines saying what
    was planned, the round budget the plan needs or None)."""
    from .outline import DOCUMENTS, plan_outline

    messages: List[str] = []
    parts = plan_parts(task, store, search) if outline == DOCUMENTS else []
    titles = list(dict.fromkeys(p.title for p in parts if p.title))
    if titles:
        policy_cfg["outline"] = titles
        listed = "; ".join(f"{p.part} -> {p.title or '(not covered)'}" for p in parts)
        messages.append("outline: the task's parts: " + listed)
    else:
        policy_cfg["outline"], said = plan_outline(outline, task, store)
        messages.append(said)
    fast = {"Researcher", "DataAnalyst"} <= set(team)
    if not (policy_cfg["outline"] and given_rounds is None and fast and _plan_is_default(policy_cfg)):
        return parts, messages, None
    # A fixed outline needs no planning, research, review or revision rounds (measured on the dpkg
    # spec: the first two changed no sentence, the last two rewrote two sections and lowered the
    # judge's score): one round per section.
    sections = len(policy_cfg["outline"])
    policy_cfg.update(one_round_per_section(sections))
    engine_cfg.setdefault("summarize", False)  # no later round reads the progress summary
    messages.append(f"plan: one writing round per section ({sections})")
    return parts, messages, sections + 1
