"""Progress a person can watch: rounds, tokens, score; plain lines for logs; quiet for CI."""

from __future__ import annotations

import io

import pytest

from algos.training.progress import RunProgress, resolve_mode


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _episode(progress, rounds=3):
    progress.begin_episode("train")
    for t in range(rounds):
        progress.on_round(t, {"tokens": 100, "report_score": 0.1 * (t + 1)})
    progress.end_episode({"return": 1.5})


def test_bar_shows_the_rounds_of_the_current_episode_with_tokens_and_score():
    out = Terminal()
    progress = RunProgress("auto", total_episodes=2, desc="qmix@report", rounds_per_episode=3, stream=out)
    assert progress.mode == "bar"
    _episode(progress)
    progress.write("a message")  # goes above the bars, not glued to them
    progress.close()
    text = out.getvalue()
    assert "qmix@report" in text and "1/2" in text
    assert "train rounds" in text and "3/3" in text and "tokens=300" in text and "score=0.300" in text
    assert "a message\n" in text


def test_plain_lines_for_log_files_and_quiet_prints_nothing():
    out = io.StringIO()  # not a terminal: auto is plain
    progress = RunProgress(
        "auto", total_episodes=2, desc="qmix@report", rounds_per_episode=3, stream=out, plain_interval_s=0.0
    )
    assert progress.mode == "plain"
    _episode(progress)
    lines = out.getvalue().splitlines()
    assert "train round 3/3, tokens 300, score 0.300" in lines
    assert any(line.startswith("qmix@report episode 1/2: return 1.5") and "eta" in line for line in lines)
    quiet = io.StringIO()
    progress = RunProgress("quiet", total_episodes=2, rounds_per_episode=3, stream=quiet)
    _episode(progress)
    progress.close()
    assert quiet.getvalue() == ""
    with pytest.raises(ValueError, match="logger.progress must be one of"):
        resolve_mode("loud")
