"""Judges and reward: how good the report is, and what the team earns for each append.

For the env (one judge per env or shared across envs; one tracker per episode):

    from agents_llm.judges import make_judge, make_reward_tracker
    judge = make_judge(cfg.judge, backend=backend)          # kind=llm needs the backend;
    judge = make_judge(cfg.judge, embed=embedding)          # kind=reference takes an optional
                                                            #   embedding (callable or rag's)
    result = await judge.score(report, ledger=ledger)       # -> JudgeResult
        result.score: float in [0, 1]; result.components: dict[str, float];
        result.flagged: bool; result.reason: str; result.calls: int (LLM requests made)
    tracker = make_reward_tracker(judge, cfg.judge)         # at reset, per episode
      (= RewardTracker(judge, w_score, w_length, length_target, length_width))
    step = await tracker.after_append(report, ledger)       # after each round that appended
        step.reward = w_score * Δ report_score + w_length * Δ length_score
        step.report_score, step.length_score, step.judge (the JudgeResult), step.as_dict() for infos

TokenBudgetExceeded raised by an LLM judge call propagates (the env ends the episode);
every other judge failure is a flagged result with a reason, and with
`hold_score_on_flag` (default) the tracker keeps the previous score, so the hiccup
earns no reward and the next good judgment pays the difference.

Kinds: `llm` (Macro + Micro judges, chunk judgments cached by content hash: an append
costs the new chunks; `judge.micro_calls` counts Micro requests) and `reference`
(deterministic: supported coverage, grounding by embedding similarity, redundancy,
structure, combined as a gate: coverage^a * grounding^b * redundancy^c * a structure
factor, so junk scores ~0; checked by the validity suite in agents_llm/judges/validity).
Grounding per sentence, for the referee: `ReferenceJudge.sentence_grounding(sentences,
sources, topic)` -> list[SentenceGrounding(sentence, similarity, grounded, evidence)], and
`ReferenceJudge.report_grounding(report)` (per section).
Length score: `judge.length_preset` (config.LENGTH_PRESETS: smollm2_cpu, original) or
explicit `judge.length_target` / `judge.length_width`.
Hydra: each registered judge's config is stored as `judge/base_<kind>`.
A new judge: one file with the judge and its config dataclass, `@register_judge(name,
config_class=...)` on its factory (agents_llm/judges/registry.py); `judge.kind=<name>`.
"""

from .base import Judge, JudgeResult, length_score
from .config import JudgeConfig, LLMJudgeConfig, ReferenceJudgeConfig
from .factory import make_judge, make_reward_tracker, register_configs, validate_judge_config
from .registry import JUDGES, register_judge
from .llm_judge import LLMJudge
from .reference import ReferenceJudge, SentenceGrounding
from .reward import RewardStep, RewardTracker

__all__ = [
    "JUDGES",
    "Judge",
    "JudgeResult",
    "JudgeConfig",
    "LLMJudge",
    "LLMJudgeConfig",
    "ReferenceJudge",
    "ReferenceJudgeConfig",
    "RewardStep",
    "RewardTracker",
    "SentenceGrounding",
    "length_score",
    "make_judge",
    "make_reward_tracker",
    "register_configs",
    "register_judge",
    "validate_judge_config",
]
