"""rescore_panel: a stored panel's reports judged again from their traces."""

from __future__ import annotations

import csv
import json

import pytest

from agents_llm.report_state import ReportState
from report_protocol import ActionTable
from tests.agents_llm.judges.test_reference_judge import GROUNDED, SOURCE, TOPIC, UNGROUNDED
from tests.envs.report.conftest import make_env
from tests.report_doubles import StubRetriever

from experiments.protocol.rescore_panel import rescore

T = ActionTable(4)
HASHING = ["env=report_writing", "judge.embedding=hashing"]


def _panel_with_one_episode(tmp_path, recorded: float | None = None) -> tuple:
    """A panel folder as validate_proxy writes it: one scripted episode's trace and its row."""
    cell = tmp_path / "episodes" / "preset_ring" / "task-a"
    env = make_env(retriever=StubRetriever(), output_dir=str(cell), save_episodes=True, max_rounds=3)
    env.reset(seed=7)
    talk = {"LeadArchitect": T.broadcast, "Researcher": T.query(0), "DataAnalyst": T.query(1), "Reviewer": T.solo}
    infos = {}
    for actions in (talk, dict(talk, DataAnalyst=T.append), talk):
        _, _, term, trunc, infos = env.step(actions)
        if any(term.values()) or any(trunc.values()):
            break
    env.close()
    score = float(next(iter(infos.values()))["report_score"])
    row = {"policy": "preset:ring", "task": "task-a", "seed": "7", "llm_score": score if recorded is None else recorded}
    with open(tmp_path / "panel.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(row))
        w.writeheader()
        w.writerow(row)
    return score


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_the_same_judge_gives_the_score_the_env_recorded_and_the_old_one_is_kept(tmp_path):
    score = _panel_with_one_episode(tmp_path, recorded=0.123)
    (row,) = _rows(rescore(tmp_path, HASHING))
    assert float(row["llm_score"]) == pytest.approx(score, abs=1e-9)
    assert float(row["llm_score_recorded"]) == pytest.approx(0.123)


def _trace(folder, seed: int, text: str) -> None:
    """A trace as the env saves it, holding a one-section report written from SOURCE."""
    state = ReportState(TOPIC)
    state.append("Electrolytes", text, [SOURCE])
    folder.mkdir(parents=True)
    (folder / "trace.json").write_text(json.dumps({"episode": {"seed": seed}, "report_state": state.to_dict()}))


def test_a_grounded_report_outscores_an_ungrounded_one_read_from_its_trace(tmp_path):
    _trace(tmp_path / "episodes" / "preset_ring" / "t" / "episode_1", 3, GROUNDED)
    _trace(tmp_path / "episodes" / "random" / "t" / "episode_1", 3, UNGROUNDED)
    _trace(tmp_path / "episodes" / "random" / "t" / "episode_2", 4, GROUNDED)  # another seed: not this row's
    with open(tmp_path / "panel.csv", "w", newline="") as f:
        f.write("policy,task,seed,llm_score\npreset:ring,t,3,0.0\nrandom,t,3,0.0\n")
    ring, rand = _rows(rescore(tmp_path, HASHING))
    assert float(ring["llm_score"]) > 0.5 > float(rand["llm_score"])


def test_a_row_without_its_episode_is_named(tmp_path):
    _panel_with_one_episode(tmp_path)
    with open(tmp_path / "panel.csv", "a", newline="") as f:
        f.write("random,task-b,7,0.5\n")
    with pytest.raises(FileNotFoundError, match="random/task-b"):
        rescore(tmp_path, HASHING)
