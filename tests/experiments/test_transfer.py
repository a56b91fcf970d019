"""transfer.py: a checkpoint beside fixed policies on another team's held-out episodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.report_doubles import isolated_cache  # noqa: F401 (fixture: stores go to a temp dir)

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = ROOT / "checkpoints" / "qmix_report_writing_extractive" / "final.pt"


def _transfer(out: Path, workers: int) -> dict:
    from hydra import compose, initialize_config_dir

    import experiments.protocol.transfer as transfer

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose(
            config_name="transfer",
            overrides=[
                f"transfer.checkpoint={CHECKPOINT}",
                "transfer.overrides=['env=report_writing_extractive','rag=hashing','judge.embedding=hashing','env.max_rounds=3']",
                "transfer.tasks=2",
                "transfer.fixed=[random,preset:ring]",
                f"transfer.workers={workers}",
                f"transfer.out={out}",
            ],
        )
        return transfer.transfer(cfg)


@pytest.mark.slow
def test_two_model_processes_give_the_rows_and_table_of_one(tmp_path, isolated_cache):  # noqa: F811
    """Each policy's tasks run in order in one process (random's stream runs on from task to task),
    so two processes give the sequential rows in the same order, and the files say so."""
    one = _transfer(tmp_path / "one", workers=1)
    two = _transfer(tmp_path / "two", workers=2)

    def played(result):
        return [(e["policy"], e["task"], round(e["report_score"], 6), e["tokens"]) for e in result["episodes"]]

    assert played(one) == played(two)
    assert [p for p, *_ in played(one)] == ["learned"] * 2 + ["random"] * 2 + ["preset:ring"] * 2
    written = json.loads((tmp_path / "two" / "transfer.json").read_text())
    assert [r["policy"] for r in written["table"]] == ["learned", "random", "preset:ring"]
    assert "| learned | 2 |" in (tmp_path / "two" / "transfer.md").read_text()


def test_the_llm_team_gets_two_model_processes_and_the_proxy_one():
    from algos.training.runners import model_process_count

    llama = {"llm": {"backend": "llamacpp", "n_threads": 1}}
    assert model_process_count(llama, 3, cpus=2) == 2
    assert model_process_count(llama, 1, cpus=2) == 1
    assert model_process_count(llama, 3, cpus=1) == 1
    assert model_process_count({"llm": {"backend": "extractive"}}, 3, cpus=2) == 1
    assert model_process_count({"llm": {"backend": "llamacpp", "n_threads": 2}}, 3, cpus=2) == 1
