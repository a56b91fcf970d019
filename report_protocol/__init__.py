"""The report protocol: the data every layer of the report env speaks, in one leaf package.

* `actions`: the `5 + N` action table (`ActionTable`) and the action names;
* `round_plan`: `RoundPlan` (what one round does), `GateCheck`, `Directive`, `Denial`;
* `vocabulary`: phase names, the signals the prompts ask the model for, notices and
  directive ids;
* `feedback`: what a round produced, read by the engine (`RoundFeedback`);
* `url_policy`: the credential policy for URLs (no `user:password@`, no secret-looking
  query parameter), which every layer and entry point applies.

Plain data and the standard library only: `rag`, `agents_llm`, `envs` and `algos` all
import it, and it imports none of them (tests/test_layering.py checks both).
"""

from .actions import COLLECTOR, ActionTable
from .feedback import AgentFeedback, Finding, GateVerdict, RoundFeedback, SectionInfo
from .round_plan import Denial, Directive, GateCheck, RoundPlan

__all__ = [
    "COLLECTOR",
    "ActionTable",
    "AgentFeedback",
    "Denial",
    "Directive",
    "Finding",
    "GateCheck",
    "GateVerdict",
    "RoundFeedback",
    "RoundPlan",
    "SectionInfo",
]
