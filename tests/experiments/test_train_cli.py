"""train.py / evaluate.py end to end, as a user runs them (subprocesses)."""

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
TRAIN = str(ROOT / "experiments" / "train.py")
EVALUATE = str(ROOT / "experiments" / "evaluate.py")
# a budget where QMIX's hard target update fires several times
# The matrix game: these tests exercise the training plumbing, not the LLM team.
SMALL = [
    "logger=csv",
    "env=two_step",
    "algo.batch_size=8",
    "algo.learning_starts=8",
    "algo.target_update_interval=5",
    "algo.hidden_dim=16",
]


def run(args, cwd, env=None, timeout=300, script=TRAIN):
    full_env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", **(env or {})}
    return subprocess.run(
        [sys.executable, script, *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout
    )


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


PLUGIN = '''
"""A user's algorithm, outside algos/: a per-agent bandit over actions."""
from dataclasses import dataclass

import numpy as np

import algos


@dataclass
class BanditConfig(algos.AlgoConfig):
    name: str = "bandit"
    lr: float = 0.5  # step size of the running value estimate


class Bandit(algos.Algorithm):
    config_class = BanditConfig
    capabilities = algos.Capabilities(learns=True)

    def __init__(self, spec, cfg, **kw):
        super().__init__(spec, cfg, **kw)
        self.values = np.zeros((spec.n_agents, spec.n_actions))
        self.pending = []
        self.updates = 0

    def act(self, obs, masks, explore, *, state=None, graph=None):
        out = {}
        for i, a in enumerate(self.spec.agents):
            if a in obs:
                allowed = np.flatnonzero(masks[a])
                out[a] = int(self.rng.choice(allowed)) if explore else int(allowed[self.values[i, allowed].argmax()])
        return out

    def observe(self, episode):
        self.pending.append(episode)

    def update(self):
        for ep in self.pending:
            ret = float(ep.rewards.sum())
            for i in range(self.spec.n_agents):
                a = ep.actions[-1, i]
                self.values[i, a] += self.cfg.lr * (ret - self.values[i, a])
        self.pending.clear()
        self.updates += 1
        return {"bandit_updates": float(self.updates)}

    def state_dict(self):
        return {**super().state_dict(), "values": self.values.copy(), "updates": self.updates}

    def load_state_dict(self, state):
        super().load_state_dict(state)
        self.values, self.updates = state["values"].copy(), state["updates"]


algos.register("bandit", Bandit)
'''


@pytest.mark.slow
def test_plugin_algorithm_outside_algos_trains_through_train_py(tmp_path):
    pkg = tmp_path / "my_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "my_algo.py").write_text(PLUGIN)
    run_dir = tmp_path / "run"
    res = run(
        [
            "plugins=[my_pkg.my_algo]",
            "algo=bandit",
            "env=two_step",
            "algo.lr=0.25",
            "train.episodes=2",
            "train.log_every=1",
            "logger=csv",
            f"hydra.run.dir={run_dir}",
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert res.returncode == 0, res.stderr[-3000:]
    log = rows(run_dir / "train.csv")
    assert [r["bandit_updates"] for r in log] == ["1.0", "2.0"]
    state = torch.load(run_dir / "checkpoints" / "final.pt", weights_only=False)
    assert state["algo_name"] == "bandit" and state["algo"]["updates"] == 2
    assert state["config"]["algo"]["lr"] == 0.25
    assert "checkpoint:" in res.stdout and str(run_dir / "checkpoints" / "final.pt") in res.stdout
    # Resuming needs the plugin named again: the checkpoint's record is compared, never imported.
    final = run_dir / "checkpoints" / "final.pt"
    refused = run([f"resume={final}", "train.episodes=3", f"hydra.run.dir={tmp_path / 'refused'}"], cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr[-3000:]
    assert "was trained with plugin 'my_pkg.my_algo'" in refused.stderr and "plugins=[my_pkg.my_algo]" in refused.stderr
    resumed = run(
        ["plugins=[my_pkg.my_algo]", f"resume={final}", "train.episodes=3", f"hydra.run.dir={tmp_path / 'resumed'}"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    state = torch.load(tmp_path / "resumed" / "checkpoints" / "final.pt", weights_only=False)
    assert state["algo"]["updates"] == 3 and [r["spec"] for r in state["plugins"]] == ["my_pkg.my_algo"]


def test_plugin_file_path_registers_a_config_that_validates(tmp_path):
    """plugins=[path/to/file.py] works too, and the plugin's dataclass is a structured
    config: a wrong key fails at composition, naming it."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import ConfigCompositionException

    from algos.plugins import load_plugin
    from experiments.run_config import register_configs

    register_configs()
    plugin = tmp_path / "bandit_file.py"
    plugin.write_text(PLUGIN.replace('"bandit"', '"bandit_file"'))
    load_plugin(str(plugin))
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=["algo=bandit_file", "algo.lr=0.1"])
        assert cfg.algo.name == "bandit_file" and cfg.algo.lr == 0.1
        with pytest.raises(ConfigCompositionException, match="algo.lrr"):
            compose("config", overrides=["algo=bandit_file", "algo.lrr=1"])


@pytest.mark.slow
def test_interrupt_writes_a_checkpoint_exits_130_and_resume_continues(tmp_path):
    run_dir = tmp_path / "run"
    args = [
        *SMALL,
        "train.log_every=5",
        "train.checkpoint_every=0",
        "algo.epsilon_anneal_steps=100000",
        f"hydra.run.dir={run_dir}",
    ]
    env = {**os.environ, "WANDB_MODE": "offline"}
    proc = subprocess.Popen(
        [sys.executable, TRAIN, *args, "train.episodes=1000000"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 240
    while time.time() < deadline:
        if (run_dir / "train.csv").exists() and len(rows(run_dir / "train.csv")) >= 4:
            break
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-3000:]
    assert "resume=" in err
    ckpt = torch.load(run_dir / "checkpoints" / "last.pt", weights_only=False)
    stopped = ckpt["progress"]["episode"]
    assert ckpt["interrupted"] and stopped >= 20
    counters = ckpt["algo"]["counters"]
    assert counters["episodes_seen"] == stopped and counters["t_env"] == ckpt["progress"]["t_env"] == 2 * stopped
    before = rows(run_dir / "train.csv")

    res = run([f"resume={run_dir}", f"train.episodes={stopped + 20}"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"from episode {stopped}" in res.stdout
    final = torch.load(run_dir / "checkpoints" / "final.pt", weights_only=False)
    assert final["progress"]["episode"] == stopped + 20
    assert final["algo"]["counters"]["t_env"] == 2 * (stopped + 20)
    assert final["algo"]["counters"]["n_updates"] == ckpt["algo"]["counters"]["n_updates"] + 20
    after = rows(run_dir / "train.csv")
    assert after[: len(before)] == before  # the same log, continued
    new = after[len(before) :]
    assert new and int(new[0]["episode"]) > int(before[-1]["episode"])
    eps_before, eps_after = float(before[-1]["epsilon"]), float(new[0]["epsilon"])
    assert eps_after < eps_before  # epsilon keeps annealing from where it was...
    assert eps_before - eps_after < 0.01  # ...not restarted at epsilon_start
    assert (run_dir / ".hydra" / "config.yaml").exists()  # the original composition is kept
    assert load_yaml(run_dir / ".hydra" / "config.yaml")["algo"]["hidden_dim"] == 16


def load_yaml(path):
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.load(path))


@pytest.mark.slow
def test_evaluate_loads_a_checkpoint_and_a_fixed_policy(tmp_path):
    run_dir = tmp_path / "run"
    res = run([*SMALL, "train.episodes=30", f"hydra.run.dir={run_dir}"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    out = tmp_path / "m.json"
    ev = run(
        [f"checkpoint={run_dir}", "eval.episodes=4", f"eval.out={out}", f"hydra.run.dir={tmp_path / 'ev'}"],
        cwd=tmp_path,
        script=EVALUATE,
    )
    assert ev.returncode == 0, ev.stderr[-3000:]
    m = json.loads(out.read_text())
    assert m["algo"] == "qmix" and m["source"]["kind"] == "checkpoint" and m["source"]["episode"] == 30
    assert len(m["per_episode"]) == 4 and "act/agent_0/top" in m["metrics"]
    out2 = tmp_path / "r.json"
    ev = run(
        ["algo=random", "env=two_step", "eval.episodes=50", f"eval.out={out2}", f"hydra.run.dir={tmp_path / 'ev2'}"],
        cwd=tmp_path,
        script=EVALUATE,
    )
    assert ev.returncode == 0, ev.stderr[-3000:]
    r = json.loads(out2.read_text())
    assert r["source"]["kind"] == "fixed_policy" and 0.0 <= r["metrics"]["return"] <= 8.0
    assert len({tuple(map(tuple, e["actions"])) for e in r["per_episode"]}) > 1  # random really varies


@pytest.mark.slow
def test_default_command_trains_and_prints_where_things_went(tmp_path):
    """The README's command on its real defaults (report env, SmolLM2, reference judge,
    MiniLM retrieval), cut to one training and one evaluation episode: the full default
    budget is timed by hand (see conf/env/report_writing.yaml), not in a test."""
    res = run(
        ["algo=qmix", "train.episodes=1", "train.eval_episodes=1", "algo.min_updates=0"], cwd=tmp_path, timeout=1200
    )
    assert res.returncode == 0, res.stderr[-3000:]
    for label in ("checkpoint:", "logs:", "tensorboard:", "wandb:", "report:", "trace:"):
        assert label in res.stdout, f"train.py did not print {label!r}:\n{res.stdout[-2000:]}"
    for label in ("report:", "trace:"):
        path = Path(re.search(rf"{label}\s+(\S+)", res.stdout).group(1))
        assert path.is_file() and path.stat().st_size > 0 and tmp_path in path.parents
    ckpt = re.search(r"checkpoint:\s+(\S+)", res.stdout).group(1)
    assert Path(ckpt).is_file()
    run_dir = Path(ckpt).parents[1]
    assert re.search(r"\d\d-\d\d-\d\d_[0-9a-f]{6}$", run_dir.name)  # unique id in the dir


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["basic", "joblib"])
def test_multirun_four_jobs_each_with_config_csv_wandb_and_checkpoint(tmp_path, launcher):
    args = ["-m", "algo=qmix,vdn", "seed=0,1", *SMALL[1:], "train.episodes=20", "logger.tensorboard=false"]
    if launcher == "joblib":
        args.append("hydra/launcher=joblib")
    res = run(args, cwd=tmp_path, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    sweeps = list((tmp_path / "multirun").glob("*/*"))
    assert len(sweeps) == 1 and re.search(r"_[0-9a-f]{6}$", sweeps[0].name)
    jobs = sorted(p for p in sweeps[0].iterdir() if p.is_dir())
    assert len(jobs) == 4, [j.name for j in jobs]
    groups = {}
    for job in jobs:
        assert (job / ".hydra" / "config.yaml").is_file() and (job / "config.yaml").is_file()
        assert len(rows(job / "train.csv")) >= 1
        assert (job / "checkpoints" / "final.pt").is_file()
        wb = list((job / "wandb").glob("offline-run-*"))
        assert len(wb) == 1
        cfg = load_yaml(job / "config.yaml")
        groups.setdefault(cfg["algo"]["name"], set()).add(_wandb_group(job))
    # W&B group = hash of the config without the seed: one group per algorithm
    assert set(groups) == {"qmix", "vdn"} and all(len(g) == 1 for g in groups.values())
    assert groups["qmix"] != groups["vdn"]


def _wandb_group(job):
    ckpt = torch.load(job / "checkpoints" / "final.pt", weights_only=False)
    from algos.training.loggers import config_hash

    return config_hash(ckpt["config"])


@pytest.mark.slow
def test_a_budget_without_gradient_updates_fails_at_start_naming_the_settings(tmp_path):
    res = run(["logger=csv", "env=two_step", "train.episodes=10", f"hydra.run.dir={tmp_path / 'r'}"], cwd=tmp_path)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "Traceback" not in res.stderr
    assert "0 gradient updates" in res.stderr and "train.episodes=10" in res.stderr
    assert "algo.learning_starts=32" in res.stderr
    assert not (tmp_path / "r" / "train.csv").exists(), "no episode may run in a budget that learns nothing"


@pytest.mark.slow
def test_train_csv_has_the_loss_column_before_the_first_update(tmp_path):
    run_dir = tmp_path / "r"
    args = [*SMALL, "train.episodes=12", "train.log_every=1", "train.eval_every=0", f"hydra.run.dir={run_dir}"]
    res = run(args, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    table = rows(run_dir / "train.csv")
    assert "loss" in table[0] and "updates" in table[0]
    assert table[0]["loss"] == "nan" and float(table[0]["updates"]) == 0.0  # learning_starts=8: nothing learnt yet
    assert float(table[-1]["loss"]) == float(table[-1]["loss"])  # a number once updates ran
    assert float(table[-1]["updates"]) == 12 - 8 + 1


@pytest.mark.parametrize(
    "override, key",
    [
        ("algo.mixer=qmixx", "algo.mixer"),
        ("logger.progress=bars", "logger.progress"),
        ("algo.gnn_layer=gcn", "algo.gnn_layer"),
    ],
)
@pytest.mark.slow
def test_a_misspelt_choice_exits_2_naming_the_key_before_anything_is_written(tmp_path, override, key):
    run_dir = tmp_path / "r"
    res = run(["logger=csv", "env=two_step", override, f"hydra.run.dir={run_dir}"], cwd=tmp_path)
    assert res.returncode == 2, res.stderr[-2000:]
    assert key in res.stderr and "must be one of" in res.stderr and "Traceback" not in res.stderr
    assert not run_dir.exists(), f"the run folder was created for a config that cannot run: {list(run_dir.rglob('*'))}"


@pytest.mark.slow
def test_resume_after_a_kill_past_the_checkpoint_logs_each_episode_once(tmp_path):
    """A kill -9 leaves rows logged after the last periodic checkpoint: the resumed run
    replays those episodes and must not log them twice (train.csv, eval.csv)."""
    import shutil

    run_dir = tmp_path / "run"
    common = [*SMALL, "train.log_every=1", "train.eval_every=4", "train.eval_episodes=1", f"hydra.run.dir={run_dir}"]
    res = run([*common, "train.episodes=12", "train.checkpoint_every=5"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    before = rows(run_dir / "train.csv")
    assert [int(r["episode"]) for r in before] == list(range(1, 13))
    # what a kill -9 during episode 13 leaves: last.pt from episode 10, rows up to 12, no final.pt
    ckpt_dir = run_dir / "checkpoints"
    shutil.copy(ckpt_dir / "ep_000010.pt", ckpt_dir / "last.pt")
    (ckpt_dir / "final.pt").unlink()

    res = run([f"resume={run_dir}", "train.episodes=15"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "from episode 10" in res.stdout
    after = rows(run_dir / "train.csv")
    assert [int(r["episode"]) for r in after] == list(range(1, 16))
    assert after[:10] == before[:10]  # the rows up to the checkpoint are the original ones
    evals = [int(r["episode"]) for r in rows(run_dir / "eval.csv")]
    assert evals == sorted(set(evals)) and evals[-1] == 15
