from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf.errors import ConfigKeyError, ValidationError

from agents_llm.judges import LLMJudge, ReferenceJudge, make_judge, make_reward_tracker, register_configs

CONF = str(Path(__file__).resolve().parents[3] / "conf")


def compose_judge(kind: str, *overrides: str):
    register_configs()
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose(overrides=[f"+judge={kind}", *(f"judge.{o}" for o in overrides)]).judge


def test_both_kinds_compose_with_their_defaults():
    llm = compose_judge("llm")
    ref = compose_judge("reference")
    assert llm.kind == "llm" and llm.chunk_size == 1500 and llm.length_preset == "smollm2_cpu"
    assert llm.length_target is None and llm.length_width is None  # the preset decides
    assert ref.kind == "reference" and ref.embedding.value == "minilm" and ref.weights.grounding == 0.5


def test_length_presets_and_explicit_values(scripted):
    from agents_llm.judges.config import LENGTH_PRESETS

    default = make_reward_tracker(
        make_judge(compose_judge("reference", "embedding=hashing")), compose_judge("reference")
    )
    assert (default.length_target, default.length_width) == LENGTH_PRESETS["smollm2_cpu"]
    original = make_reward_tracker(default.judge, compose_judge("reference", "length_preset=original"))
    assert (original.length_target, original.length_width) == (25000.0, 8500.0)
    # An explicit value wins over the preset's; the other one stays the preset's.
    mixed = make_reward_tracker(
        default.judge, compose_judge("reference", "length_preset=original", "length_target=3000")
    )
    assert (mixed.length_target, mixed.length_width) == (3000.0, 8500.0)
    with pytest.raises(ValueError, match=r"judge\.length_preset"):
        make_reward_tracker(default.judge, compose_judge("reference", "length_preset=huge"))


def test_overrides_reach_the_judge_and_tracker(scripted):
    cfg = compose_judge("llm", "chunk_unit=paragraphs", "chunk_size=2", "w_score=2.5", "length_width=1000")
    judge = make_judge(cfg, backend=scripted())
    ref = make_judge(compose_judge("reference", "embedding=hashing", "target_sections=3"))
    assert isinstance(ref, ReferenceJudge) and ref.target_sections == 3
    # The default length measure (supported characters) needs a grounder beside the LLM judge.
    with pytest.raises(ValueError, match="length_measure='supported' needs a reference judge, or a grounder"):
        make_reward_tracker(judge, cfg)
    tracker = make_reward_tracker(judge, cfg, grounder=ref)
    assert isinstance(judge, LLMJudge) and judge.chunk_unit == "paragraphs" and judge.chunk_size == 2
    assert tracker.w_score == 2.5 and tracker.length_width == 1000 and tracker.length_measure == "supported"
    raw = make_reward_tracker(judge, compose_judge("llm", "length_measure=chars"))
    assert raw.length_measure == "chars" and raw.grounder is None
    with pytest.raises(ValueError, match="judge.length_measure must be one of"):
        make_reward_tracker(ref, {"kind": "reference", "length_measure": "tokens"})


@pytest.mark.parametrize(
    "kind,override,key",
    [
        ("llm", "chunk_sise=10", "chunk_sise"),  # misspelt key
        ("reference", "grounding_flor=0.1", "grounding_flor"),
        ("llm", "chunk_unit=words", "chunk_unit"),  # not an enum value
        ("reference", "embedding=bert", "embedding"),
        ("llm", "max_tokens=many", "max_tokens"),  # wrong type
        ("reference", "weights.coverge=1", "coverge"),
    ],
)
def test_wrong_key_or_value_fails_at_compose_time_naming_the_key(kind, override, key):
    with pytest.raises((ConfigCompositionException, ConfigKeyError, ValidationError)) as err:
        compose_judge(kind, override)
    text = str(err.value) + str(err.value.__cause__ or "")
    assert key in text


@pytest.mark.parametrize(
    "kind,override,key",
    [
        ("llm", "length_width=0", "judge.length_width"),
        ("llm", "macro_weight=1.5", "judge.macro_weight"),
        ("reference", "grounding_floor=0.9", "judge.grounding_floor"),
        ("reference", "w_length=-1", "judge.w_length"),
        ("reference", "weights.structure=1.5", "judge.weights"),
        ("reference", "length_width=-5", "judge.length_width"),
    ],
)
def test_out_of_range_values_fail_when_the_judge_is_built_naming_the_key(kind, override, key, scripted):
    cfg = compose_judge(kind, override)
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        make_judge(cfg, backend=scripted())


def test_llm_judge_without_a_backend_says_how_to_build_one():
    with pytest.raises(ValueError, match="make_backend"):
        make_judge(compose_judge("llm"))


def test_a_registered_judge_composes_checks_its_ranges_and_is_built_by_kind():
    from dataclasses import dataclass

    from agents_llm.judges import JudgeResult, register_judge
    from agents_llm.judges.config import JudgeConfig

    @dataclass
    class ConstantJudgeConfig(JudgeConfig):
        kind: str = "constant_test"
        value: float = 0.5

        @staticmethod
        def check(cfg, need):
            need(0.0 <= cfg.value <= 1.0, "value", "must be in [0, 1]")

    class ConstantJudge:
        kind = "constant_test"

        def __init__(self, value):
            self.value = value

        async def score(self, report, *, ledger=None):
            return JudgeResult(score=self.value)

    register_judge(
        "constant_test", lambda cfg, **_: ConstantJudge(cfg.value), config_class=ConstantJudgeConfig, overwrite=True
    )
    cfg = compose_judge("base_constant_test", "value=0.25")
    assert cfg.kind == "constant_test" and cfg.w_score == 1.0  # the shared reward keys come with it
    judge = make_judge(cfg)
    assert isinstance(judge, ConstantJudge) and judge.value == 0.25
    with pytest.raises(ValueError, match=r"judge\.value must be in \[0, 1\]"):
        make_judge(compose_judge("base_constant_test", "value=2"))
    with pytest.raises((ConfigCompositionException, ConfigKeyError, ValidationError)):
        compose_judge("base_constant_test", "valeu=0.1")  # a misspelt key fails at composition
    with pytest.raises(ValueError, match=r"judge\.kind must be one of .*constant_test.*got 'nope'"):
        make_judge({"kind": "nope"})
