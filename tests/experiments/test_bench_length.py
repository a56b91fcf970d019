"""experiments/protocol/bench_length.py prints the length the reward measures: supported characters
(judge.length_measure=supported), measured the way the episode's reward tracker measures
them, and its summary is computed on that measure, not on raw characters."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import experiments.protocol.bench_length as bench_length
import pytest
from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores go to a temp dir)

from agents_llm.judges import RewardTracker, make_judge
from agents_llm.judges.base import length_score
from agents_llm.judges.config import LENGTH_PRESETS
from agents_llm.judges.validity import STOCK_SENTENCE, GoodSection, load_good_reports


@pytest.fixture(scope="module")
def judge():
    return make_judge({"kind": "reference", "embedding": "hashing"})


def padded_report(i: int, n_good: int):
    """A validity report's first `n_good` good sections, then its first section again and a stock sentence
    repeated: raw characters the supported measure does not count."""
    good = load_good_reports()[i]
    junk = GoodSection(STOCK_SENTENCE, " ".join([STOCK_SENTENCE] * 8), good.sections[0].sources)
    return good.state([*good.sections[:n_good], good.sections[0], junk])


def fake_env(report, tracker, rounds=4, tokens=4000):
    """What `measure` reads of a finished episode."""
    return SimpleNamespace(
        report=report, tracker=tracker, round=rounds, ledger=SimpleNamespace(total=SimpleNamespace(total=tokens))
    )


def test_report_lengths_are_what_the_reward_measures(judge):
    report = padded_report(0, 2)
    tracker = RewardTracker(judge)
    step = asyncio.run(tracker.after_append(report))  # the env's reward step
    got = bench_length.report_lengths(report, tracker)
    assert got["chars"] == report.chars
    assert got["measured"] == got["supported"] == pytest.approx(step.length_chars)
    # the repeated section and the stock sentences are raw characters the measure leaves out
    assert got["supported"] < 0.8 * report.chars
    row = bench_length.measure(fake_env(report, tracker), "full", 0, 1.0)
    assert row["reward_length_chars"] == pytest.approx(row["measured"])
    assert row["length_score"] == pytest.approx(step.length_score)
    for preset, (target, width) in LENGTH_PRESETS.items():
        assert row["scores"][preset] == pytest.approx(length_score(step.length_chars, target, width))
    # the original's raw measure, when configured, is what the length score is computed on
    raw = bench_length.report_lengths(report, RewardTracker(judge, length_measure="chars"))
    assert raw["measured"] == report.chars and raw["supported"] == got["supported"]


def test_supported_chars_come_from_the_trackers_grounder_beside_another_judge(judge):
    class NotReference:  # an LLM judge stands here: no supported_chars of its own
        kind = "llm"

    report = padded_report(1, 3)
    got = bench_length.report_lengths(report, RewardTracker(NotReference(), grounder=judge))
    assert got["measured"] == pytest.approx(judge.supported_chars(report))


def test_summary_is_on_the_measured_length_not_raw_characters(judge):
    rows = []
    for i, n_good in ((0, 1), (2, 3)):
        report = padded_report(i, n_good)
        tracker = RewardTracker(judge)
        asyncio.run(tracker.after_append(report))
        rows.append(bench_length.measure(fake_env(report, tracker, tokens=5000), "random", i, 1.0))
    empty = load_good_reports()[0].state([])
    rows.append(bench_length.measure(fake_env(empty, RewardTracker(judge)), "random", 9, 1.0))
    lines = "\n".join(bench_length.summarize(rows, max_rounds=4))
    longest = max(r["supported"] for r in rows)
    assert longest < 0.8 * max(r["chars"] for r in rows)  # a raw-character summary would print other figures
    assert f"most supported chars in an episode: {longest:.0f} " in lines
    values = [r["scores"]["smollm2_cpu"] for r in rows]
    assert f"spread {max(values) - min(values):.3f}" in lines
    target, width = bench_length.derived_preset(longest)
    assert target == round(longest / 100) * 100 and width == target / 2
    assert f"derivation rule (target = longest, rounded; width = half): {target:.0f} +- {width:.0f}" in lines
    ratio = sorted(r["supported"] / r["chars"] for r in rows if r["chars"])
    assert f"supported / raw chars: median {(ratio[0] + ratio[1]) / 2:.2f}" in lines


@pytest.mark.slow
def test_a_scripted_episode_prints_the_length_the_env_reported(capsys):
    """The bench on the env as train.py composes it (scripted backend, hashing): the row's length score is the
    one the env's infos carried, computed on the supported characters the reward's last length term measured."""
    from algos.training.env_configs import make_env
    from algos.training.rollout import run_episode

    import algos

    cfg = bench_length.compose(["llm=scripted", "rag.embedding.backend=hashing", "judge.embedding=hashing"])
    env = make_env(cfg.env)
    spec = algos.EnvSpec.from_env(env)
    _, stats = run_episode(env, algos.build("preset", spec, {"topology": "full"}, seed=0), spec, explore=False, seed=0)
    row = bench_length.measure(env, "full", 0, stats.seconds)
    assert row["measure"] == "supported" and row["sections"] >= 1
    assert row["measured"] == row["supported"] == pytest.approx(row["reward_length_chars"])
    assert row["length_score"] == pytest.approx(stats.infos["length_score"])
    assert bench_length.main(["--episodes", "1", "--policies", "full", "--rag", "hashing", "--", "llm=scripted"]) == 0
    out = capsys.readouterr().out
    printed = [line.split() for line in out.splitlines() if line.startswith("full ")]
    assert len(printed) == 1 and printed[0][:7] == bench_length.format_row(row).split()[:7]  # all but the seconds
    assert "supported / raw chars" in out and "length_measure=supported" in out
