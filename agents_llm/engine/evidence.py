"""Who holds which evidence: the team's information rules.

A tool result belongs to the agent that called the tool. A message between agents carries,
beside its text, the evidence its sender holds (what it retrieved and what it received this
episode), and the objective it knows: the receiver holds both from then on. The Collector is
one more receiver: it writes, grounds and tops up a section only from the evidence its
appenders hold (`EvidenceFlow.TEAM`). So an agent that never heard from the Researcher has
nothing to write a section from, and who talks to whom decides what the report can say.

`EvidenceFlow.CITED` narrows a message further: it carries only the sender's evidence its text
draws on (`drawn_on`: a chunk that some sentence of the message restates), so what a receiver can
write depends on what its senders chose to say, and a fact passed along a chain survives only if
every agent on the way repeats it.

`EvidenceFlow.POOLED` is the product's route (`write_report`): the Collector writes from
everything any agent retrieved, whoever sent what, which gives a user the fullest report a
fixed pipeline can write but makes communication irrelevant to its text (docs/ARCHITECTURE.md).

Deliveries follow the round's edge timing: a 'fresh' edge delivers what the sender holds after
its turn this round (the receiver waits for that turn), a 'previous' edge what it held when the
round began. Both are fixed before the receiver starts, so what a turn holds never depends on
which concurrent turn finished first.

What an agent holds is what it has not seen reported yet, as the pooled buffer was: the chunks
offered to a section that is written leave every agent's holdings, and a chunk comes back only
when a tool returns it again (its caller holds it anew) or a message brings it. The pooled flow
is then the old buffer exactly: the union of the holdings is what was retrieved since the last
section.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterable, Mapping, Sequence

from rag.sources import SourceRef, as_source_refs, dedup_sources, passages_first

from ..text.terms import STOPWORDS, stem
from ..text.split import sentences, words

# A sentence of a message draws on a chunk when the chunk holds at least this many of the
# sentence's content words and this share of them: a restatement, not a shared topic word.
DRAWN_MIN_SHARED = 3
DRAWN_MIN_SHARE = 0.6


class EvidenceFlow(str, Enum):
    """How evidence reaches the Collector (`EngineSettings.evidence_flow`)."""

    TEAM = "team"  # only through the appenders' holdings: communication decides the report
    CITED = "cited"  # as TEAM, and a message carries only the evidence its text draws on
    POOLED = "pooled"  # every retrieval of any agent (write_report's route)


@dataclass
class Holding:
    """What one agent holds: evidence in the order it came, and the objective it knows."""

    sources: list[SourceRef] = field(default_factory=list)
    objective: str = ""


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 2}


def drawn_on(text: str, sources: Sequence[SourceRef]) -> list[SourceRef]:
    """The `sources` some sentence of `text` restates, in their order: for each sentence with
    at least `DRAWN_MIN_SHARED` content words, the source holding the largest share of them,
    if that share is at least `DRAWN_MIN_SHARE`."""
    if not sources or not text.strip():
        return []
    source_stems = [_stems(r.text) for r in sources]
    used: set[int] = set()
    for sentence in sentences(text):
        said = _stems(sentence)
        if len(said) < DRAWN_MIN_SHARED:
            continue
        shared = [len(said & s) for s in source_stems]
        best = max(range(len(sources)), key=lambda i: (shared[i], -i))
        if shared[best] >= DRAWN_MIN_SHARED and shared[best] / len(said) >= DRAWN_MIN_SHARE:
            used.add(best)
    return [r for i, r in enumerate(sources) if i in used]


class TeamEvidence:
    """Per-agent holdings of one episode (owned by its `EpisodeContext`)."""

    def __init__(self) -> None:
        self._held: dict[str, Holding] = {}
        self._round_start: dict[str, Holding] = {}

    # -- what an agent holds ---------------------------------------------------------
    def holding(self, agent: str) -> Holding:
        return self._held.setdefault(agent, Holding())

    def add(self, agent: str, results: Iterable[Any]) -> None:
        """`agent` retrieved `results` (chunks or SourceRefs): they are its own from now on."""
        h = self.holding(agent)
        h.sources = passages_first(dedup_sources(h.sources, (ref for r in results for ref in as_source_refs(r))))

    def learn_objective(self, agent: str, objective: str) -> None:
        if objective:
            self.holding(agent).objective = objective

    def objective_of(self, agent: str) -> str:
        return self.holding(agent).objective

    # -- rounds and deliveries ---------------------------------------------------------
    def begin_round(self) -> None:
        """Fix what every agent holds as the round begins: what a 'previous' edge delivers."""
        self._round_start = {a: Holding(list(h.sources), h.objective) for a, h in self._held.items()}

    def deliver(self, receiver: str, senders: Sequence[tuple[str, str, str]], *, cited: bool = False) -> None:
        """`receiver` gets each (sender, timing, text) message's evidence and objective, in that
        order (team priority): 'fresh' what the sender holds now, 'previous' what it held at round
        start; with `cited`, only the part of it the message's text draws on."""
        h = self.holding(receiver)
        for sender, when, text in senders:
            if sender == receiver:
                continue
            given = self._round_start.get(sender, Holding()) if when == "previous" else self.holding(sender)
            carried = drawn_on(text, given.sources) if cited else given.sources
            h.sources = passages_first(dedup_sources(h.sources, carried))
            if given.objective:
                h.objective = given.objective

    # -- the Collector ---------------------------------------------------------------
    def for_section(self, appenders: Sequence[str], flow: EvidenceFlow | str = EvidenceFlow.TEAM) -> list[SourceRef]:
        """The evidence a section by `appenders` may be written from, in their priority order
        (`flow` TEAM or CITED), or every agent's (POOLED)."""
        holders = list(self._held) if EvidenceFlow(flow) is EvidenceFlow.POOLED else list(appenders)
        return passages_first(dedup_sources(*(self.holding(a).sources for a in holders)))

    def consume(self, refs: Iterable[SourceRef]) -> None:
        """`refs` went into a section: they leave every agent's holdings."""
        used = {r.key for r in refs}
        for h in self._held.values():
            h.sources = [r for r in h.sources if r.key not in used]

    def pooled(self) -> list[SourceRef]:
        """Every agent's evidence (what the team as a whole has not reported yet)."""
        return passages_first(dedup_sources(*(h.sources for h in self._held.values())))

    def counts(self) -> Mapping[str, int]:
        """How many chunks each agent holds, for the trace."""
        return {a: len(h.sources) for a, h in sorted(self._held.items())}
