"""The decoding-noise estimates recover the episode and task noise a panel was drawn with."""

from __future__ import annotations

import numpy as np
import pytest

from algos.evaluation.decoding_noise import greedy_sd, sampled_noise, tasks_for


def _panel(task_sd: float, episode_sd: float, tasks: int, k: int, seed: int = 0) -> dict:
    """Two policies: b = a + a per-task effect (sd task_sd); every episode adds noise (sd episode_sd)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(0.6, 0.1, tasks)
    effect = rng.normal(0.0, task_sd, tasks)
    return {
        "a": {f"t{i}": list(base[i] + rng.normal(0, episode_sd, k)) for i in range(tasks)},
        "b": {f"t{i}": list(base[i] + effect[i] + rng.normal(0, episode_sd, k)) for i in range(tasks)},
    }


@pytest.mark.parametrize("task_sd, episode_sd", [(0.0, 0.1), (0.08, 0.05), (0.1, 0.0)])
def test_sampled_noise_recovers_the_noise_the_panel_was_drawn_with(task_sd, episode_sd):
    noise = sampled_noise(_panel(task_sd, episode_sd, tasks=4000, k=3))
    assert noise.episode_sd == pytest.approx(episode_sd, abs=0.005)
    assert noise.task_sd == pytest.approx(task_sd, abs=0.01)
    assert (noise.tasks, noise.pairs, noise.episodes_per_cell) == (4000, 1, 3)
    # k episodes per cell average the episode noise away, never the task's
    if episode_sd > 0:
        assert noise.difference_sd(1) > noise.difference_sd(4)
    assert noise.difference_sd(10**6) == pytest.approx(noise.task_sd, abs=1e-3)


def test_greedy_sd_is_the_sd_of_the_paired_differences():
    scores = {"a": {"x": 0.5, "y": 0.7, "z": 0.6}, "b": {"x": 0.6, "y": 0.7, "z": 0.8}}
    assert greedy_sd(scores) == pytest.approx(np.std([0.1, 0.0, 0.2], ddof=1))
    assert greedy_sd(scores, tasks=["x", "y"]) == pytest.approx(np.std([0.1, 0.0], ddof=1))


def test_tasks_for_80_percent_power():
    # ((1.96 + 0.84) * 0.1 / 0.05)^2 = 31.4: 32 tasks
    assert tasks_for(0.1, 0.05) == 32
    assert tasks_for(0.1, 0.025) > 4 * 31
    with pytest.raises(ValueError, match="delta"):
        tasks_for(0.1, 0)


def test_a_panel_without_replicates_is_refused_with_the_setting_to_change():
    with pytest.raises(ValueError, match="validate.replicates"):
        sampled_noise({"a": {"x": [0.5], "y": [0.6]}, "b": {"x": [0.4], "y": [0.6]}})
