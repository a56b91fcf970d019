"""The commands, as a user runs them, when the LLM fails, a setting is out of range, a URL
carries credentials, or training is interrupted mid-episode (slow: subprocesses)."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from .standins import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
TRAIN = str(ROOT / "experiments" / "train.py")
WRITE = str(ROOT / "experiments" / "write_report.py")
SECRET = "S3cretPass99"


def run(script, args, tmp_path, timeout=600):
    env = {**os.environ, "QMIX_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT), "WANDB_SILENT": "true"}
    return subprocess.run(
        [sys.executable, script, *args], cwd=tmp_path, capture_output=True, text=True, timeout=timeout, env=env
    )


def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    (folder / "sorting.md").write_text(
        "# Sorting networks\n\nA sorting network sorts with a fixed sequence of "
        "compare-exchange operations. Batcher's odd-even merge sort builds one.\n"
    )
    return folder


# algo.min_updates=0: these runs test failure handling in budgets too short to learn in
REPORT_ENV = [
    "rag=hashing",
    "judge.embedding=hashing",
    "env.max_rounds=3",
    "train.eval_episodes=1",
    "algo.min_updates=0",
]


def test_write_report_against_a_dead_server_exits_non_zero_with_the_cause(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"
    res = run(
        WRITE,
        [
            "task=Sorting networks",
            f"docs={docs(tmp_path)}",
            "llm=openai",
            f"llm.base_url={url}",
            "rag=hashing",
            "judge.embedding=hashing",
            "export.pdf=false",
            f"output_root={tmp_path / 'out'}",
            f"data_root={tmp_path / 'data'}",
        ],
        tmp_path,
    )
    assert res.returncode == 3, res.stdout[-2000:] + res.stderr[-2000:]
    [line] = [ln for ln in res.stderr.splitlines() if ln.startswith("write_report:")]
    assert "the LLM failed after 1 round(s): LLMConnectionError: cannot reach the server" in line and url in line
    [out] = list((tmp_path / "out").iterdir())
    assert (out / "report.md").is_file() and (out / "trace.json").is_file()
    assert "Short report" not in res.stdout


def test_train_stops_when_the_llm_fails_keeping_its_last_checkpoint(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"
    run_dir = tmp_path / "run"
    res = run(
        TRAIN,
        [
            "llm=openai",
            f"llm.base_url={url}",
            *REPORT_ENV,
            f"env.corpus={docs(tmp_path)}",
            "train.episodes=3",
            "logger=csv",
            f"hydra.run.dir={run_dir}",
        ],
        tmp_path,
    )
    assert res.returncode == 1, res.stderr[-3000:]
    assert "train.py: stopped, the LLM failed: episode 1:" in res.stderr
    assert "train.llm_error_share_stop=0.5" in res.stderr and "cannot reach the server" in res.stderr
    assert "Traceback" not in res.stderr
    last = torch.load(run_dir / "checkpoints" / "last.pt", weights_only=False)
    assert last["progress"]["episode"] == 0 and "Trained" not in res.stdout


def test_bad_settings_exit_non_zero_naming_the_key(tmp_path):
    res = run(TRAIN, ["logger=csv", "llm.max_tokens=0", f"hydra.run.dir={tmp_path / 'm'}"], tmp_path)
    assert res.returncode == 2 and "train.py: llm.max_tokens must be an integer >= 1, got 0" in res.stderr
    assert not (tmp_path / "m" / "train.csv").exists()  # refused before any episode
    res = run(TRAIN, ["env=two_step", "logger=csv", "train.episodes=-5", f"hydra.run.dir={tmp_path / 'r'}"], tmp_path)
    assert res.returncode == 2 and "train.py: train.episodes must be an integer >= 1, got -5" in res.stderr
    res = run(WRITE, ["task=Sorting networks", "llm=scripted", "engine.agent_max_tokens=-5"], tmp_path)
    assert res.returncode == 2 and "engine.agent_max_tokens must be an integer >= 1, got -5" in res.stderr


def test_a_password_in_the_url_is_written_nowhere(tmp_path):
    url = f"http://alice:{SECRET}@127.0.0.1:{free_port()}/v1"
    runs = [
        run(
            TRAIN,
            [
                "llm=openai",
                f"llm.base_url={url}",
                *REPORT_ENV,
                f"env.corpus={docs(tmp_path)}",
                "train.episodes=1",
                f"hydra.run.dir={tmp_path / 'run'}",
            ],
            tmp_path,
        ),
        run(TRAIN, ["-m", "llm=openai", f"llm.base_url={url}", *REPORT_ENV, "train.episodes=1", "seed=0,1"], tmp_path),
        run(
            WRITE,
            [
                "task=Sorting networks",
                f"docs={docs(tmp_path)}",
                "llm=openai",
                f"llm.base_url={url}",
                "rag=hashing",
                "judge.embedding=hashing",
                f"output_root={tmp_path / 'out'}",
            ],
            tmp_path,
        ),
    ]
    for res in runs:
        assert res.returncode != 0
        assert "llm.base_url must not carry credentials" in res.stderr, res.stderr[-2000:]
        assert SECRET not in res.stdout + res.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    leaks = [str(p) for p in written if SECRET.encode() in p.read_bytes()]
    assert leaks == []


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


RESUME_BASE = [
    "llm=scripted",
    "llm.latency_s=0.15",
    "rag=hashing",
    "judge.embedding=hashing",
    "env.max_rounds=4",
    "train.eval_episodes=1",
    "train.checkpoint_every=0",
    "logger=csv",
]
# Per learner: updates inside 5 episodes, so the resumed run must restore what the cut one learned.
LEARNER = {
    "qmix": ["algo=qmix", "algo.batch_size=2", "algo.learning_starts=2", "algo.epsilon_anneal_steps=1000"],
    # two episodes per REINFORCE batch: the cut falls inside a batch, with its first episode pending
    "graph_pg": ["algo=graph_pg", "algo.batch_size=2"],
}


def _tensors(state, prefix=""):
    """Every tensor of a learner's state dict, by dotted name (nested dicts and lists walked)."""
    if isinstance(state, torch.Tensor):
        yield prefix, state
    elif isinstance(state, dict):
        for k, v in state.items():
            yield from _tensors(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(state, (list, tuple)):
        for i, v in enumerate(state):
            yield from _tensors(v, f"{prefix}[{i}]")


@pytest.mark.parametrize("learner", sorted(LEARNER))
def test_resume_after_an_interrupt_inside_a_report_episode_is_bit_identical(tmp_path, learner):
    corpus = f"env.corpus={docs(tmp_path)}"
    full = tmp_path / "full"
    overrides = [*RESUME_BASE, *LEARNER[learner]]
    res = run(TRAIN, [*overrides, corpus, "train.episodes=5", f"hydra.run.dir={full}"], tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]

    cut = tmp_path / "cut"
    env = {**os.environ, "QMIX_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, TRAIN, *overrides, corpus, "train.episodes=5", f"hydra.run.dir={cut}"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 300
    while time.time() < deadline and not ((cut / "train.csv").exists() and len(_rows(cut / "train.csv")) >= 2):
        time.sleep(0.2)
    time.sleep(1.0)  # well inside episode 3 (an episode takes several seconds at 0.15 s per call)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-3000:]
    stopped = torch.load(cut / "checkpoints" / "last.pt", weights_only=False)
    assert stopped["interrupted"] and 2 <= stopped["progress"]["episode"] < 5

    res = run(TRAIN, [f"resume={cut}"], tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    a = torch.load(full / "checkpoints" / "final.pt", weights_only=False)["algo"]
    b = torch.load(cut / "checkpoints" / "final.pt", weights_only=False)["algo"]
    assert a["counters"] == b["counters"] and a["counters"]["n_updates"] > 0
    whole, resumed = dict(_tensors(a)), dict(_tensors(b))
    assert whole.keys() == resumed.keys() and len(whole) > 0
    for name, tensor in whole.items():
        assert torch.equal(tensor, resumed[name]), f"{learner}: {name} differs after resume"
