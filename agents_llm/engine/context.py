"""What the round engine is configured with and what one episode carries between rounds."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import prompts
from ..backends import TokenLedger
from ..conversation import Conversations
from ..report_state import ReportState
from .evidence import EvidenceFlow, TeamEvidence


@dataclass
class EngineSettings:
    """Per-call budgets; small by default for a 135M model on a CPU."""

    agent_max_tokens: int = 64
    query_max_tokens: int = 24
    collector_max_tokens: int = 160
    summary_max_tokens: int = 48
    gate_max_tokens: int = 16
    temperature: float = 0.0
    seed: int | None = 0
    max_queries: int = 3
    evidence_max_chars: int = prompts.MAX_EVIDENCE_CHARS
    # The Collector writes a section from the best-matching retrieved sentences when the writer's prose
    # is too short, echoes the prompt, repeats itself or is mostly unsupported (agents_llm.sentence_reuse).
    # Off here (the engine on its own writes what the model wrote); the report env's and write_report's
    # configs turn it on for real runs.
    reuse_sources: bool = False
    # With reuse on, a written sentence that says what one source sentence says, in other words, stays in
    # the writer's words when the retriever's embedding reads it as close in meaning as the judge's
    # grounding band calls fully grounded (agents_llm.grounding.MeaningCheck); off, it gives way to
    # that source sentence. write_report turns it on; the report env keeps it off, so that the LLM-team
    # results measured before it stay comparable.
    keep_by_meaning: bool = False
    # The writer (the Collector's prose call) also gets the best sentences of the passages its section
    # will cite, and is asked to write from them in its own words. On in write_report, off in the env.
    writer_sees_evidence: bool = False
    # A section the plan names is about its title: its evidence is searched by the title first, beside the
    # Researcher's queries, and the source sentences it is written from (the writer's evidence, the quotes
    # its junk prose gives way to) are those naming the title's words first. A section planned from a
    # document's heading then holds what that heading heads, whatever the model wrote as queries.
    # On in write_report, off in the env (LLM-team results comparable).
    section_about_title: bool = False
    # Junk search queries (code, under two words, no term of the topic/objective/outline) fall back to
    # the topic and outline terms (agents_llm.engine.query_check).
    vet_queries: bool = True
    # The Summarizer's running account of the report after each append, which later rounds' prompts
    # read; write_report turns it off when its plan has no round after drafting that would read it.
    summarize: bool = True
    # Each agent's calls form one chat whose later turns append only what the agent has not been shown
    # (agents_llm.conversation): an in-process model then evaluates only the new turn. Off, every call
    # stands alone. A chat past `conversation_max_chars` starts again from the stand-alone prompt. Off
    # here; the report env's config turns it on (write_report's keeps its calls stand-alone).
    conversation: bool = False
    conversation_max_chars: int = 8000
    # How evidence reaches the Collector (agents_llm.engine.evidence): "team", only through what the
    # appending agents hold (their own retrievals and what they received), so communication decides
    # what a section can say; "cited", as "team", and a message carries only the evidence its text
    # restates (a fact crosses a relay only if the relay repeats it); "pooled", every retrieval of any
    # agent (write_report's route: the fullest report a fixed pipeline writes, whoever sent what).
    evidence_flow: str = EvidenceFlow.TEAM.value
    # The message-ablation diagnostic (experiments/protocol/comm_sensitivity.py): false blanks every delivery
    # between agents (no teammate's text, evidence or objective reaches anyone; an agent's own tool
    # results and the report stay). Not a setting for a run that means to write well.
    deliver_messages: bool = True

    def __post_init__(self) -> None:
        """Range checks at construction (the env builds this from `engine.*` before any call)."""
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
        if self.evidence_flow not in {f.value for f in EvidenceFlow}:
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
