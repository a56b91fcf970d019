"""visualize.py logs=<multirun folder>: each configuration's curves over its seeds, with a band."""

import csv

import numpy as np
import pytest
from omegaconf import OmegaConf


def _run(folder, seed, returns, algo="qmix"):
    folder.mkdir(parents=True)
    OmegaConf.save(
        OmegaConf.create({"seed": seed, "algo": {"name": algo, "lr": 0.001}, "env": {"name": "two_step_v0"}}),
        folder / "config.yaml",
    )
    (folder / "checkpoints").mkdir()
    (folder / "checkpoints" / "final.pt").write_bytes(b"")  # a finished run (find_runs looks for it)
    with open(folder / "train.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["episode", "return", "loss"])
        for i, r in enumerate(returns):
            w.writerow([10 * (i + 1), r, "" if i == 0 else 1.0 / (i + 1)])


def test_a_two_seed_multirun_gets_mean_curves_with_a_band(tmp_path, saved_figures):
    from experiments.visualize import training_plots

    _run(tmp_path / "0_seed=0", 0, [2.0, 4.0, 6.0])
    _run(tmp_path / "1_seed=1", 1, [4.0, 6.0, 8.0])
    result = training_plots(tmp_path, None)
    assert [p.name for p in result.files] == ["training_curves_seeds.png"]
    assert result.files[0].parent == tmp_path / "plots" and result.files[0].is_file()
    ret = next(ax for ax in saved_figures[0].axes if ax.get_title() == "Return")
    (mean,) = [line for line in ret.get_lines() if "mean of 2 seed(s)" in line.get_label()]
    assert list(mean.get_ydata()) == [3.0, 5.0, 7.0]
    (band,) = ret.collections  # fill_between: the 95 % bootstrap band of the mean
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(2.0) and ys.max() == pytest.approx(8.0)  # resampled seeds: 2..4 up to 6..8
    # Every axes of the figure draws something: no empty panel (report_score, tokens... were never logged).
    assert all(ax.get_lines() or ax.texts for ax in saved_figures[0].axes)
    assert any("'tokens'" in n and "no panel" in n for n in result.notes)


def test_a_bootstrap_band_brackets_the_mean_and_is_a_point_for_equal_seeds():
    from agents_llm.viz.multirun_plots import bootstrap_band

    low, high = bootstrap_band(np.array([[1.0, 5.0], [3.0, 5.0]]))
    assert low[0] < 2.0 < high[0] and low[1] == high[1] == 5.0
