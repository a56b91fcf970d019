"""Build a judge and its reward tracker from a `judge` config (OmegaConf node, dataclass or dict).

`make_judge` builds the judge `judge.kind` names in the registry (`registry.JUDGES`); the
built-in `llm` and `reference` judges are registered here, each a factory of its config;
`validate_judge_config` checks a config against its judge's schema and `register_configs` stores
every registered judge's schema in Hydra's ConfigStore.
"""

from __future__ import annotations

from typing import Any

from ..backends import LLMBackend
from .base import Judge
from .config import (
    LENGTH_MEASURES,
    LENGTH_PRESETS,
    JudgeConfig,
    LLMJudgeConfig,
    ReferenceJudgeConfig,
    _get,
    length_params,
)
from .registry import JUDGES, _store, register_judge
from .reward import RewardTracker


def _as_config(cfg: Any) -> Any:
    """A typed OmegaConf node: dicts are merged onto their kind's dataclass so typos fail here too."""
    from omegaconf import OmegaConf

    if OmegaConf.is_config(cfg):
        return cfg
    if isinstance(cfg, dict):
        kind = str(getattr(cfg.get("kind"), "value", cfg.get("kind")))
        if kind not in JUDGES:
            raise ValueError(f"judge.kind must be one of {JUDGES.available()}, got {kind!r}")
        return OmegaConf.merge(OmegaConf.structured(JUDGES.get(kind).config_class), cfg)
    return OmegaConf.structured(cfg)


def build_embedding(cfg: Any) -> Any:
    """The reference judge's embedding: rag's MiniLM or hashing embedding, as the config says."""
    choice = getattr(cfg.embedding, "value", cfg.embedding)
    if choice == "hashing":
        from rag.embeddings import HashingEmbedding

        return HashingEmbedding(dim=cfg.hashing_dim)
    if choice == "minilm":
        from rag.embeddings import MiniLMEmbedding

        return MiniLMEmbedding(model_path=cfg.minilm_path)
    raise ValueError(f"judge.embedding must be 'minilm' or 'hashing', got {choice!r}")


def make_judge(cfg: Any, *, backend: LLMBackend | None = None, embed: Any = None) -> Judge:
    """The judge `cfg.kind` names.

    `backend` is required for kind=llm (the judge shares the team's backend or has its
    own). `embed` (a callable list[str] -> 2-D array, or a rag embedding) overrides the
    configured embedding of kind=reference, so an env can pass the one it already loaded;
    `judge.embedding` should still name its kind, since it picks the grounding band.
    """
    cfg = _as_config(cfg)
    validate_judge_config(cfg)
    kind = getattr(cfg.kind, "value", cfg.kind)
    judge: Judge = JUDGES.get(kind).factory(cfg, backend=backend, embed=embed)
    return judge


@register_judge("llm", config_class=LLMJudgeConfig)
def build_llm_judge(cfg: Any, *, backend: LLMBackend | None = None, embed: Any = None) -> Judge:
    from .llm_judge import LLMJudge

    if backend is None:
        raise ValueError("judge.kind=llm needs an LLM backend: make_judge(cfg.judge, backend=make_backend(cfg.llm))")
    return LLMJudge(
        backend,
        max_tokens=cfg.max_tokens,
        temperature=cfg.temperature,
        seed=cfg.seed,
        macro_weight=cfg.macro_weight,
        hallucination_penalty=cfg.hallucination_penalty,
        judge_retries=cfg.judge_retries,
        macro_max_chars=cfg.macro_max_chars,
        sources_max_chars=cfg.sources_max_chars,
        chunk_unit=getattr(cfg.chunk_unit, "value", cfg.chunk_unit),
        chunk_size=cfg.chunk_size,
        cache_size=cfg.cache_size,
        fallback_score=cfg.fallback_score,
    )


@register_judge("reference", config_class=ReferenceJudgeConfig)
def build_reference_judge(cfg: Any, *, backend: LLMBackend | None = None, embed: Any = None) -> Judge:
    from ..text.bands import GROUNDING_BANDS, RELEVANCE_BANDS
    from .reference import ReferenceJudge

    embedding = getattr(cfg.embedding, "value", cfg.embedding)
    floor, ceiling = GROUNDING_BANDS[embedding]
    rel_floor, rel_ceiling = RELEVANCE_BANDS[embedding]
    return ReferenceJudge(
        embed if embed is not None else build_embedding(cfg),
        key_terms=list(cfg.key_terms),
        weights=dict(cfg.weights),
        grounding_floor=floor if cfg.grounding_floor is None else cfg.grounding_floor,
        grounding_ceiling=ceiling if cfg.grounding_ceiling is None else cfg.grounding_ceiling,
        relevance_floor=rel_floor if cfg.relevance_floor is None else cfg.relevance_floor,
        relevance_ceiling=rel_ceiling if cfg.relevance_ceiling is None else cfg.relevance_ceiling,
        support_level=cfg.support_level,
        topic_terms=cfg.topic_terms,
        duplicate_threshold=cfg.duplicate_threshold,
        target_sections=cfg.target_sections,
        min_sentence_words=cfg.min_sentence_words,
    )


def make_reward_tracker(judge: Judge, cfg: Any, *, grounder: Any = None) -> RewardTracker:
    """A fresh per-episode tracker with the config's weights and length score.

    `grounder`: a ReferenceJudge that measures supported characters for a judge that is
    not one (judge.length_measure=supported with the LLM judge).
    """
    cfg = _as_config(cfg)
    validate_judge_config(cfg)
    target, width = length_params(cfg)
    return RewardTracker(
        judge,
        w_score=cfg.w_score,
        w_length=cfg.w_length,
        length_target=target,
        length_width=width,
        hold_score_on_flag=cfg.hold_score_on_flag,
        length_measure=str(getattr(cfg, "length_measure", "supported")),
        grounder=grounder,
    )


def validate_judge_config(cfg: Any) -> None:
    """Range checks a dataclass type cannot express; each error names its key."""

    def need(ok: bool, key: str, what: str) -> None:
        if not ok:
            raise ValueError(f"judge.{key} {what}, got {_get(cfg, key)!r}")

    preset = _get(cfg, "length_preset", "smollm2_cpu")
    need(preset in LENGTH_PRESETS, "length_preset", f"must be one of {sorted(LENGTH_PRESETS)}")
    need(
        _get(cfg, "length_measure", "supported") in LENGTH_MEASURES,
        "length_measure",
        f"must be one of {list(LENGTH_MEASURES)}",
    )
    target, width = length_params(cfg)
    need(width > 0, "length_width", "must be positive")
    need(target >= 0, "length_target", "must be >= 0")
    for key in ("w_score", "w_length"):
        need(_get(cfg, key, 0.0) >= 0, key, "must be >= 0")
    kind = getattr(_get(cfg, "kind"), "value", _get(cfg, "kind"))
    if kind not in JUDGES:
        raise ValueError(f"judge.kind must be one of {JUDGES.available()}, got {kind!r}")
    schema: type[JudgeConfig] = JUDGES.get(kind).config_class  # register_judge checked it subclasses JudgeConfig
    schema.check(cfg, need)


def register_configs() -> None:
    """Store every registered judge's config as `judge/base_<kind>` (registering stores it too;
    this stores them again in a ConfigStore that was cleared)."""
    for name in JUDGES.available():
        _store(JUDGES.get(name))
