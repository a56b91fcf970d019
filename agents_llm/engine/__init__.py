"""The round engine: joint actions -> `RoundPlan` -> agents run in topological order.

    from agents_llm.engine import RoundEngine, EpisodeContext, plan_from_actions, action_mask
    plan = plan_from_actions(team_names, {"LeadArchitect": 1, ...}, masks=masks)
    result = await engine.run(plan, ctx)      # RoundResult: outputs, order, collector, tokens, record

See `planning` for the edge semantics, `runner` for scheduling and failure handling, `turn` for
one agent's turn, `round_record` for the trace entry and `feedback` for reading the outputs.
"""

from .planning import action_mask, execution_order_edges, is_acyclic, plan_from_actions
from .retrieval import RagRetriever, Retriever, format_evidence
from .context import EngineSettings, EpisodeContext, Route
from .round_record import RoundResult
from .runner import RoundEngine

__all__ = [
    "EngineSettings",
    "EpisodeContext",
    "RagRetriever",
    "Retriever",
    "RoundEngine",
    "RoundResult",
    "Route",
    "action_mask",
    "execution_order_edges",
    "format_evidence",
    "is_acyclic",
    "plan_from_actions",
]
