import csv
import math

import matplotlib.image as mpimg
import pytest

from agents_llm.viz.metrics_columns import action_columns, action_labels
from agents_llm.viz.training_plots import read_metrics_csv, write_training_plots

AGENTS = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
N_ACTIONS = 5 + len(AGENTS)


def _row(episode: int, drop=()) -> dict:
    """A train.csv row laid out as experiments/train.py logs it (episode first, act/<agent>/<a> frequencies)."""
    row = {
        "episode": episode,
        "t_env": 20.0 * episode,
        "wall_s": 1.5 * episode,
        "return": 0.1 * episode,
        "length": 20.0,
        "report_score": min(1.0, 0.02 * episode),
        "length_score": 0.3,
        "tokens": 9000.0,
        "time/episode_s": 3.0,
        "time/update_s": 0.1,
        "epsilon": max(0.05, 1 - 0.02 * episode),
        "buffer_episodes": float(episode),
        "loss": 1.0 / episode,
    }
    for i, agent in enumerate(AGENTS):
        favourite = (episode // 10 + i) % N_ACTIONS
        for a in range(N_ACTIONS):
            row[f"act/{agent}/{a}"] = 0.6 if a == favourite else 0.4 / (N_ACTIONS - 1)
        row[f"act/{agent}/top"] = 0.6
    return {k: v for k, v in row.items() if k not in drop}


def _write_csv(path, rows):
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_curves_and_action_distribution_are_written_from_a_full_log(tmp_path):
    _write_csv(tmp_path / "train.csv", [_row(e) for e in range(10, 110, 10)])
    _write_csv(tmp_path / "eval.csv", [_row(e, drop=("epsilon", "loss")) for e in (50, 100)])
    result = write_training_plots(tmp_path)
    assert [p.name for p in result.files] == ["training_curves.png", "action_distribution.png"]
    assert all(p.parent == tmp_path / "plots" for p in result.files)
    assert not any("missing" in n or "not in" in n for n in result.notes), result.notes
    curves = mpimg.imread(result.files[0])
    assert curves.shape[:2] == (720, 1350)  # 15 x 8 inches at 90 dpi
    assert curves[..., :3].std() > 0.05  # something was drawn


def test_missing_columns_are_named_and_the_rest_still_plotted(tmp_path):
    _write_csv(tmp_path / "train.csv", [_row(e, drop=("epsilon", "tokens")) for e in (10, 20, 30)])
    result = write_training_plots(tmp_path, tmp_path / "out")
    missing = [n for n in result.notes if "is not in train.csv" in n]
    assert sorted(missing) == [
        "column 'epsilon' is not in train.csv: its plot is empty",
        "column 'tokens' is not in train.csv: its plot is empty",
    ]
    assert any("eval.csv not found" in n for n in result.notes)
    assert (tmp_path / "out" / "training_curves.png").is_file()


def test_without_action_columns_there_is_no_action_plot_and_a_note_says_why(tmp_path):
    rows = [{k: v for k, v in _row(e).items() if not k.startswith("act/")} for e in (10, 20)]
    result = write_training_plots(_write_csv(tmp_path / "train.csv", rows))
    assert [p.name for p in result.files] == ["training_curves.png"]
    assert any("no act/<agent>/<action> columns" in n for n in result.notes)


def test_a_column_that_appears_later_reads_as_nan_before(tmp_path):
    path = tmp_path / "train.csv"
    path.write_text("episode,return,loss\n10,0.5,\n20,0.7,0.25\n")
    columns = read_metrics_csv(path)
    assert columns["return"] == [0.5, 0.7]
    assert math.isnan(columns["loss"][0]) and columns["loss"][1] == 0.25


def test_bad_logs_are_refused_by_name(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"train\.csv: no training log here"):
        write_training_plots(tmp_path)
    (tmp_path / "train.csv").write_text("episode,return\n")
    with pytest.raises(ValueError, match="header but no rows"):
        write_training_plots(tmp_path)
    (tmp_path / "train.csv").write_text("episode,return\n10,0.5\n20,oops\n")
    with pytest.raises(ValueError, match=r"train\.csv: line 3, column 'return': not a number: 'oops'"):
        write_training_plots(tmp_path)


def test_action_columns_and_labels_follow_the_report_env_action_table():
    cols = action_columns(["episode", "act/A/0", "act/A/1", "eval/act/B/1", "act/A/top"])
    assert cols == {"A": {0: "act/A/0", 1: "act/A/1"}, "B": {1: "eval/act/B/1"}}
    names = action_labels(AGENTS, N_ACTIONS)
    assert names[0] == "solo_process" and names[3] == "selective_query_Researcher" and names[-1] == "terminate"
    assert action_labels(["a0", "a1"], 2) == ["0", "1"]  # a matrix game: no report-env names


@pytest.mark.slow  # imports torch through algos: about 15 s here
def test_plots_read_what_the_real_csv_logger_writes(tmp_path):
    import numpy as np

    from algos.training.loggers import CSVLogger
    from algos.training.rollout import action_distribution

    logger = CSVLogger(tmp_path / "train.csv")
    for episode in (10, 20, 30):
        counts = np.zeros((len(AGENTS), N_ACTIONS), np.int64)
        counts[:, episode // 10] = 5
        logger.log(
            {
                "return": 1.0,
                "report_score": 0.5,
                "tokens": 100.0,
                "epsilon": 0.5,
                "loss": 0.1,
                "length": 5.0,
                **action_distribution(counts, AGENTS),
            },
            episode,
        )
    result = write_training_plots(tmp_path)
    assert [p.name for p in result.files] == ["training_curves.png", "action_distribution.png"]
    assert not any("is not in train.csv" in n for n in result.notes)


def _axes(figure, title):
    return next(ax for ax in figure.axes if ax.get_title() == title)


def test_a_loss_series_with_one_point_draws_that_point(tmp_path, saved_figures):
    # The first update came in the last logging window: one loss value, NaN before it.
    (tmp_path / "train.csv").write_text("episode,return,loss\n10,0.5,\n20,0.6,\n30,0.7,0.25\n")
    write_training_plots(tmp_path)
    loss = _axes(saved_figures[0], "TD loss")
    visible = [
        line
        for line in loss.get_lines()
        if line.get_marker() not in (None, "None", "") and any(not math.isnan(y) for y in line.get_ydata())
    ]
    assert visible, "the one loss value is not drawn (a line through one point is invisible)"
    assert [y for y in visible[0].get_ydata() if not math.isnan(y)] == [0.25]


def test_a_loss_column_without_a_value_says_no_updates_yet(tmp_path, saved_figures):
    (tmp_path / "train.csv").write_text("episode,return,loss\n10,0.5,\n20,0.6,\n")
    result = write_training_plots(tmp_path)
    loss = _axes(saved_figures[0], "TD loss")
    assert any("no updates yet" in t.get_text() for t in loss.texts)
    assert any("'loss'" in n and "no value yet" in n for n in result.notes)
