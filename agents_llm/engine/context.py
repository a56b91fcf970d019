"""What the round engine is configured with and what one episode carries between rounds."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from .. import prompts
from ..backends import TokenLedger
from ..conversation import Conversations
from ..report_state import ReportState
from .evidence import EvidenceFlow, TeamEvidence


class Route(str, Enum):
    """What the engine is run for; each route sets the behaviour below in one place.

    - ``plain``: the engine on its own: a section is what the model wrote, every call stands alone
      (unit tests and the writing diagnostics, experiments/protocol/bench_writing.py).
    - ``research``: the report env: junk prose gives way to retrieved sentences, each agent's calls
      form one chat, and evidence travels only through the team (`EvidenceFlow.TEAM`), so
      communication decides what a section can say.
    - ``product``: write_report: as research for junk prose, and the writer writes from evidence
      (it sees the best sentences of the passages its section will cite, a section the plan names
      is searched and written by its title first, and a sentence that says, in other words, what
      one source sentence says stays in the writer's words); a section may use what any agent
      retrieved (`EvidenceFlow.POOLED`: the fullest report a fixed pipeline writes); calls stand
      alone.
    """

    PLAIN = "plain"
    RESEARCH = "research"
    PRODUCT = "product"


# The behaviour each route sets; an explicit setting of the same name overrides it.
ROUTE_DEFAULTS: dict[Route, dict[str, object]] = {
    Route.PLAIN: {"reuse_sources": False, "conversation": False, "evidence_flow": EvidenceFlow.TEAM.value},
    Route.RESEARCH: {"reuse_sources": True, "conversation": True, "evidence_flow": EvidenceFlow.TEAM.value},
    Route.PRODUCT: {"reuse_sources": True, "conversation": False, "evidence_flow": EvidenceFlow.POOLED.value},
}


@dataclass
class EngineSettings:
    """Per-call budgets, small by default for a 135M model on a CPU, and the route the engine runs
    for (`Route`), which sets how a section is written; three of its choices stay settable."""

    agent_max_tokens: int = 64
    query_max_tokens: int = 24
    collector_max_tokens: int = 160
    summary_max_tokens: int = 48
    gate_max_tokens: int = 16
    temperature: float = 0.0
    seed: int | None = 0
    max_queries: int = 3
    evidence_max_chars: int = prompts.MAX_EVIDENCE_CHARS
    route: str = Route.PLAIN.value  # plain | research (the report env's) | product (write_report's)
    # None: the route's. The Collector writes a section from the best-matching retrieved sentences
    # when the writer's prose is too short, echoes the prompt, repeats itself or is mostly
    # unsupported (agents_llm.sentence_reuse); false: it writes what the model wrote.
    reuse_sources: bool | None = None
    # None: the route's. Each agent's calls form one chat whose later turns append only what the
    # agent has not been shown (agents_llm.conversation): an in-process model then evaluates only the
    # new turn; false: every call stands alone. A chat past `conversation_max_chars` starts again.
    conversation: bool | None = None
    conversation_max_chars: int = 8000
    # None: the route's. How evidence reaches the Collector (agents_llm.engine.evidence): "team",
    # only through what the appending agents hold (their own retrievals and what they received);
    # "cited", as "team", and a message carries only the evidence its text restates (a fact crosses
    # a relay only if the relay repeats it); "pooled", every retrieval of any agent.
    evidence_flow: str | None = None
    # Junk search queries (code, under two words, no term of the topic/objective/outline) fall back to
    # the topic and outline terms (agents_llm.engine.query_check).
    vet_queries: bool = True
    # The Summarizer's running account of the report after each append, which later rounds' prompts
    # read; write_report turns it off when its plan has no round after drafting that would read it.
    summarize: bool = True
    # The message-ablation diagnostic (experiments/protocol/comm_sensitivity.py): false blanks every delivery
    # between agents (no teammate's text, evidence or objective reaches anyone; an agent's own tool
    # results and the report stay). Not a setting for a run that means to write well.
    deliver_messages: bool = True

    # What the engine does: the explicit setting, else the route's (a config schema holds the
    # unresolved fields, so that a route named in a later config layer still decides).
    def _resolved(self, key: str) -> object:
        value = getattr(self, key)
        return ROUTE_DEFAULTS[Route(self.route)][key] if value is None else value

    @property
    def reuses_sources(self) -> bool:
        """Junk prose gives way to retrieved sentences (`reuse_sources`, or the route's)."""
        return bool(self._resolved("reuse_sources"))

    @property
    def chats(self) -> bool:
        """Each agent's calls form one chat (`conversation`, or the route's)."""
        return bool(self._resolved("conversation"))

    @property
    def flow(self) -> EvidenceFlow:
        """How evidence reaches the Collector (`evidence_flow`, or the route's)."""
        return EvidenceFlow(self._resolved("evidence_flow"))

    @property
    def writes_from_evidence(self) -> bool:
        """The product route's writer: it sees its section's evidence, a planned section is about its
        title, and a sentence close in meaning to one source sentence keeps the writer's words."""
        return self.route == Route.PRODUCT.value

    def __post_init__(self) -> None:
        """The route's behaviour where none was given, and range checks at construction (the env
        builds this from `engine.*` before any call)."""
        if self.route not in {r.value for r in Route}:
            raise ValueError(f"engine.route must be one of {[r.value for r in Route]}, got {self.route!r}")
        for key in ("reuse_sources", "conversation"):
            if getattr(self, key) is not None and not isinstance(getattr(self, key), bool):
                raise ValueError(
                    f"engine.{key} must be true or false (or null: the route's), got {getattr(self, key)!r}"
                )
        for key in (
            "agent_max_tokens",
            "query_max_tokens",
            "collector_max_tokens",
            "summary_max_tokens",
            "gate_max_tokens",
            "max_queries",
            "evidence_max_chars",
            "conversation_max_chars",
        ):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"engine.{key} must be an integer >= 1, got {value!r}")
        if (
            isinstance(self.temperature, bool)
            or not isinstance(self.temperature, (int, float))
            or not 0 <= self.temperature <= 2
        ):
            raise ValueError(f"engine.temperature must be a number in [0, 2], got {self.temperature!r}")
        if self.evidence_flow is not None and self.evidence_flow not in {f.value for f in EvidenceFlow}:
            raise ValueError(
                f"engine.evidence_flow must be one of {[f.value for f in EvidenceFlow]}, got {self.evidence_flow!r}"
            )
        if not isinstance(self.deliver_messages, bool):
            raise ValueError(f"engine.deliver_messages must be true or false, got {self.deliver_messages!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0):
            raise ValueError(f"engine.seed must be null or an integer >= 0, got {self.seed!r}")


@dataclass
class EpisodeContext:
    """Everything one episode carries between rounds (owned by the env, never shared)."""

    report: ReportState
    ledger: TokenLedger
    memory: dict[str, str] = field(default_factory=dict)  # each agent's previous output
    objective: str = ""  # the Current Team Objective, set by the Lead Architect
    rag_exhausted: bool = False
    evidence: TeamEvidence = field(default_factory=TeamEvidence)  # who holds which retrieved chunks
    budget_exhausted: str | None = None  # the ledger's reason, once spent
    llm_failure: str | None = None  # the error that stopped further calls (server down, bad key, ...)
    # Prompt tokens the model computed in this episode, and those it reused from earlier prompts' state.
    prompt_tokens_evaluated: int = 0
    prompt_tokens_reused: int = 0
    conversations: Conversations | None = None  # each agent's chat, with engine.conversation on
    # The episode's reset seed: with sampled decoding (temperature > 0) every call's sampling seed
    # derives from it and `EngineSettings.seed`, so two episodes of one cell are replicates.
    episode_seed: int | None = None

    def sampling_seed(self, settings: EngineSettings) -> int | None:
        """The seed a call samples with: the engine's own when decoding is greedy or the episode
        has no seed, else one drawn from (engine seed, episode seed)."""
        if settings.temperature == 0 or settings.seed is None or self.episode_seed is None:
            return settings.seed
        return int(np.random.SeedSequence([settings.seed, self.episode_seed]).generate_state(1)[0] % 2**31)
