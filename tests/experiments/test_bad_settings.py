"""Every bad setting is one line and exit 2, before anything is written.

Malformed overrides of train.py, evaluate.py and write_report.py (types, ranges, missing
paths, files for folders, unknown names, empty lists): each is refused by the entry
points' preflight (experiments/preflight.py) with one line naming the key. All cases run
in process (`settings_problem`: the check `__main__` runs before Hydra); a handful run end to
end as the user runs them: exit 2, one stderr line, no traceback, no run folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import experiments.evaluate as evaluate  # noqa: F401  (registers the configs the preflight composes)
import experiments.train as train  # noqa: F401
import experiments.write_report as write_report  # noqa: F401
from experiments.preflight import settings_problem

ROOT = Path(__file__).resolve().parents[2]
OTHER_ENV_CKPT = ROOT / "checkpoints" / "qmix_two_step" / "final.pt"
T, E, W = "train.py", "evaluate.py", "write_report.py"
REPORT = ["env=report_writing"]

# (script, overrides, a word the one-line error must hold); {missing} {folder} {file} {other_env} are paths.
CASES = [
    (T, ["rollout.num_envs=0"], "rollout.num_envs"),
    (T, ["rollout.num_envs=-3"], "rollout.num_envs"),
    (T, ["rollout.workers=0"], "rollout.workers"),
    (T, ["rollout.backend=cluster"], "rollout.backend"),
    (T, ["rollout.sync_every=0"], "rollout.sync_every"),
    (T, ["rollout.workers=2"], "rollout.workers"),
    (T, ["rollout.num_envs=two"], "rollout.num_envs"),
    (T, ["resume={missing}"], "resume"),
    (T, ["resume={folder}"], "resume"),
    (T, ["plugins=[{missing}.py]"], "plugins"),
    (T, ["init={missing}"], "init"),
    (T, ["init={folder}"], "init"),
    (T, ["train.episodes=0"], "train.episodes"),
    (T, ["train.episodes=abc"], "train.episodes"),
    (T, ["train.episodes=1.5"], "train.episodes"),
    (T, ["train.log_every=0"], "train.log_every"),
    (T, ["train.eval_every=-1"], "train.eval_every"),
    (T, ["train.keep_checkpoints=0"], "train.keep_checkpoints"),
    (T, ["seed=-1"], "seed"),
    (T, ["seed=abc"], "seed"),
    (T, ["seed=99999999999"], "seed"),
    (T, ["train.llm_error_share_stop=0"], "llm_error_share_stop"),
    (T, ["train.llm_error_share_stop=2"], "llm_error_share_stop"),
    (T, ["logger.wandb_mode=sometimes"], "logger.wandb_mode"),
    (T, ["logger.progress=bars"], "logger.progress"),
    (T, ["algo=nosuchalgo"], "algo"),
    (T, ["env=nosuchenv"], "env"),
    (T, ["algo.lr=abc"], "algo.lr"),
    (T, ["algo.mixer=qmixx"], "algo.mixer"),
    (T, ["nosuchkey=1"], "nosuchkey"),
    (T, ["torch_threads=0"], "torch_threads"),
    (T, [*REPORT, "env.team=[]"], "env.team"),
    (T, [*REPORT, "env.team=[Nobody]"], "Nobody"),
    (E, ["checkpoint={missing}"], "checkpoint"),
    (E, ["checkpoint={folder}"], "checkpoint"),
    (E, ["eval.compare=[nosuchpolicy]"], "nosuchpolicy"),
    (E, ["eval.compare=[:ring]"], "eval.compare"),
    (E, ["eval.out={folder}"], "eval.out"),
    (E, ["eval.episodes=0"], "eval.episodes"),
    (E, ["eval.episodes=-1"], "eval.episodes"),
    (E, ["eval.seed=-5"], "eval.seed"),
    (E, ["rollout.num_envs=0"], "rollout.num_envs"),
    (E, ["plugins=[{missing}.py]"], "plugins"),
    (E, ["eval.episodes=many"], "eval.episodes"),
    (W, ["max_rounds=99999999999"], "max_rounds"),
    (W, ["max_rounds=0"], "max_rounds"),
    (W, ["max_rounds=abc"], "max_rounds"),
    (W, ["seed=-1"], "seed"),
    (W, ["team=[]"], "team"),
    (W, ["team=[Nobody]"], "Nobody"),
    (W, ["output_root=/dev/null"], "output_root"),
    (W, ["output_root={file}"], "output_root"),
    (W, ["output_root={file}/sub"], "output_root"),
    (W, ["data_root={file}"], "data_root"),
    (W, ["docs={missing}"], "docs"),
    (W, ["checkpoint={missing}"], "checkpoint"),
    (W, ["checkpoint={folder}"], "checkpoint"),
    (W, ["plugins=[{missing}.py]"], "plugins"),
    (W, ["llm=nosuchbackend"], "llm"),
    (W, ["export.pdf=maybe"], "export.pdf"),
    (W, ["opening=maybe"], "opening"),
    (W, ["opening=2"], "opening"),
    (W, ["nosuchkey=1"], "nosuchkey"),
]


@pytest.fixture
def paths(tmp_path) -> dict:
    (tmp_path / "folder").mkdir()
    (tmp_path / "file.txt").write_text("not a folder\n")
    return {
        "missing": str(tmp_path / "no_such_thing"),
        "folder": str(tmp_path / "folder"),
        "file": str(tmp_path / "file.txt"),
        "other_env": str(OTHER_ENV_CKPT),
    }


def test_the_list_is_long_enough():
    assert len(CASES) >= 50 and {s for s, _, _ in CASES} == {T, E, W}


@pytest.mark.parametrize("script, args, key", CASES, ids=[f"{s}:{' '.join(a)}" for s, a, _ in CASES])
def test_a_bad_setting_is_refused_in_one_line_naming_it(paths, script, args, key):
    problem = settings_problem(script, [a.format(**paths) for a in args])
    assert problem is not None, args
    assert "\n" not in problem and key in problem, problem


@pytest.mark.parametrize(
    "script, args",
    [(T, []), (T, ["env=two_step", "rollout.num_envs=2"]), (E, ["eval.compare=[handcrafted,random]"]), (W, [])],
)
def test_good_settings_pass(script, args):
    assert settings_problem(script, args) is None


# Each case is a fresh interpreter (about 10 s): one per entry point runs in the fast suite, the
# others in the slow one.
_SLOW = pytest.mark.slow
END_TO_END = [
    pytest.param(T, ["rollout.num_envs=0"], id="train.py:rollout.num_envs=0"),
    pytest.param(T, ["resume={missing}"], id="train.py:resume={missing}", marks=_SLOW),
    pytest.param(T, ["plugins=[{missing}.py]"], id="train.py:plugins=[{missing}.py]", marks=_SLOW),
    pytest.param(E, ["eval.out={folder}"], id="evaluate.py:eval.out={folder}"),
    pytest.param(W, ["task=Pumps", "output_root=/dev/null"], id="write_report.py:output_root=/dev/null", marks=_SLOW),
    pytest.param(W, ["task=Pumps", "max_rounds=99999999999"], id="write_report.py:max_rounds=99999999999"),
    pytest.param(W, ["task=Pumps", "checkpoint={other_env}"], id="write_report.py:checkpoint={other_env}", marks=_SLOW),
]


@pytest.mark.parametrize("script, args", END_TO_END)
def test_end_to_end_exit_2_one_line_nothing_written(tmp_path, paths, script, args):
    run_dir = tmp_path / "run"
    args = [a.format(**paths) for a in args]
    extra = [f"data_root={tmp_path / 'data'}"] if script == W else [f"hydra.run.dir={run_dir}"]
    if script == W and not any(a.startswith("output_root=") for a in args):
        extra.append(f"output_root={tmp_path / 'out'}")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / script), *args, *extra],
        cwd=tmp_path,
        env={**os.environ, "WANDB_MODE": "disabled"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    left = {p.name for p in tmp_path.iterdir()} - {"folder", "file.txt"}
    assert not left, f"written for a run that cannot run: {sorted(left)}"
