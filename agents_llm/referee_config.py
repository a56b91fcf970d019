"""The referee's settings (env config key `referee`): its thresholds and its reward penalty,
checked once (`make_referee_config`)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping


@dataclass
class RefereeConfig:
    """The referee's thresholds and its reward penalty (env config key `referee`)."""

    enabled: bool = True  # run the checks after every round (flags in infos, trace, logs)
    # Turn report flags into a penalty: a flagged round's reward becomes min(reward, 0) - penalty * flags.
    # On by default for training and evaluation through conf/env/report_writing.yaml (referee.penalize:
    # true); off for an env built in Python without a referee config, whose reward is then the judge's
    # delta alone. report_score stays the judge's measurement either way; the flags are counted beside it.
    penalize: bool = False
    penalty: float = 0.05  # reward taken per report flag when penalize is on
    check_agent_outputs: bool = True  # also check each agent's output for repetition and echo (never penalised)
    repetition_share: float = 0.5  # flag when this share of a text's characters repeats earlier sentences
    repetition_similarity: float = 0.8  # word-set Jaccard at which two sentences count as the same sentence
    loop_ngram: int = 3  # words per n-gram of the looping-phrase check
    loop_share: float = 0.5  # flag when this share of a text's n-grams are repeats (texts of >= 12 n-grams)
    echo_overlap: float = 0.6  # a sentence echoes the prompt when this share of its word trigrams is ours
    echo_share: float = 0.3  # flag when this share of a text's characters (or its title) echoes the prompt
    # A sentence echoes the prompt when this share of its content words (topic words and stopwords left out,
    # at least echo_min_words of them) are words of our instructions: catches rephrased echoes.
    echo_vocabulary_share: float = 0.8
    echo_min_words: int = 4
    markup_share: float = 0.5  # flag when this share of a text's classified characters is code or markup
    unsupported_share: float = 0.5  # flag a citing section when this share of its text is below the floor
    jump_tolerance: float = 0.02  # |score change| allowed without a text change
    small_edit_chars: int = 20  # an edit this small counts as "no text change" for a jump above jump_on_small_edit
    jump_on_small_edit: float = 0.1
    padding_min_chars: int = 80  # growth (characters) from which a flat score counts as padding
    padding_tolerance: float = 0.0  # score change at or below which growth counts as padding


def make_referee_config(raw: Any) -> RefereeConfig:
    """A RefereeConfig from None, a dataclass or a mapping; an unknown key fails naming it."""
    if raw is None:
        return RefereeConfig()
    if isinstance(raw, RefereeConfig):
        return raw
    if not isinstance(raw, Mapping):
        raw = {f.name: getattr(raw, f.name) for f in fields(RefereeConfig) if hasattr(raw, f.name)}
    known = {f.name for f in fields(RefereeConfig)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"env.referee: unknown key(s) {unknown}; known: {sorted(known)}")
    cfg = RefereeConfig(**dict(raw))
    for name in ("penalty", "padding_min_chars", "small_edit_chars"):
        if getattr(cfg, name) < 0:
            raise ValueError(f"env.referee.{name} must be >= 0, got {getattr(cfg, name)!r}")
    for name in (
        "repetition_share",
        "repetition_similarity",
        "loop_share",
        "echo_overlap",
        "echo_share",
        "echo_vocabulary_share",
        "markup_share",
        "unsupported_share",
    ):
        if not 0.0 < getattr(cfg, name) <= 1.0:
            raise ValueError(f"env.referee.{name} must be in (0, 1], got {getattr(cfg, name)!r}")
    if cfg.echo_min_words < 1:
        raise ValueError(f"env.referee.echo_min_words must be >= 1, got {cfg.echo_min_words!r}")
    if cfg.loop_ngram < 2:
        raise ValueError(f"env.referee.loop_ngram must be >= 2, got {cfg.loop_ngram!r}")
    return cfg
