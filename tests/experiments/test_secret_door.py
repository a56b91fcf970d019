"""A secret has one door: the environment variable the backend names.

A key given anywhere else (`llm.api_key=K`, `+llm.api_key=K`, as the value of a `*_env`
setting, in a URL) is refused at start with one line naming that door, exit 2, and is
written nowhere: no run folder, no .hydra/, not on the console. Before, `+llm.api_key=K`
landed in .hydra/*.yaml and a key given as `llm.api_key_env` reached the config,
checkpoints, logs, traces, the report and the console.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents_llm.redaction import secret_setting_problem
from experiments.run_config import secret_argument_problem

ROOT = Path(__file__).resolve().parents[2]
KEY = "Zq8vNw3kT5pLm2Xr9Yb4"  # no sk- prefix: nothing but the door can tell it is a key
SK_KEY = "sk-live-4f9a7c2e1b8d6f3a0c5e"
VAR = "QMIX_TEST_PROVIDER_SECRET"  # holds KEY for the run: a key pasted as a name is that value

# Each case is a fresh interpreter of about 7 s: one case per entry point (and the URL door) runs in
# the fast suite, the other shapes of the same door in the slow one.
_SLOW = pytest.mark.slow


def _case(script: str, args: list[str], key: str, slow: bool = True):
    return pytest.param(script, args, key, id=f"{script}:{args[-1].split('=')[0]}", marks=_SLOW if slow else ())


CASES = [
    _case("train.py", [f"llm.api_key={KEY}"], "llm.api_key"),
    _case("train.py", [f"+llm.api_key={KEY}"], "llm.api_key"),
    _case("train.py", [f"llm.api_key_env={KEY}"], "llm.api_key_env", slow=False),
    _case("train.py", [f"llm.api_key_env={SK_KEY}"], "llm.api_key_env"),
    _case("train.py", [f"+env.llm.api_key={KEY}"], "env.llm.api_key"),
    _case("train.py", [f"llm.base_url=https://user:{KEY}@example.com/v1"], "llm.base_url", slow=False),
    _case("train.py", [f"llm.base_url=https://example.com/v1?api_key={KEY}"], "llm.base_url"),
    _case("evaluate.py", [f"+llm.api_key={KEY}"], "llm.api_key", slow=False),
    _case("evaluate.py", [f"llm.api_key_env={KEY}"], "llm.api_key_env"),
    _case("write_report.py", ["task=Pumps", f"llm.api_key_env={KEY}"], "llm.api_key_env", slow=False),
    _case("write_report.py", ["task=Pumps", f"+llm.api_key={SK_KEY}"], "llm.api_key"),
    _case("write_report.py", ["task=Pumps", "llm=openai", f"llm.api_key_env={SK_KEY}"], "llm.api_key_env"),
]


@pytest.mark.parametrize("script, args, key", CASES)
def test_a_key_given_anywhere_but_its_variable_is_refused_and_written_nowhere(tmp_path, script, args, key):
    run_dir = tmp_path / "run"
    extra = [f"output_root={tmp_path / 'out'}", f"data_root={tmp_path / 'data'}"] if script == "write_report.py" else []
    env = {**os.environ, VAR: KEY, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / script), *args, *extra, f"hydra.run.dir={run_dir}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert key in lines[0] and "environment variable" in lines[0], lines[0]
    for secret in (KEY, SK_KEY):
        assert secret not in proc.stdout + proc.stderr
        for path in tmp_path.rglob("*"):
            if path.is_file():
                assert secret not in path.read_text(errors="replace"), path
    assert not run_dir.exists() and not (tmp_path / "out").exists() and not (tmp_path / "outputs").exists()


def test_a_variable_name_passes_and_a_key_does_not(monkeypatch):
    monkeypatch.setenv(VAR, KEY)
    assert secret_setting_problem("llm.api_key_env", "OPENAI_API_KEY") is None
    assert secret_setting_problem("llm.api_key_env", VAR) is None
    assert secret_setting_problem("llm.api_key_env", KEY) is not None  # the value of a variable
    assert secret_setting_problem("llm.api_key_env", SK_KEY) is not None  # no variable's name
    assert secret_setting_problem("llm.api_key", KEY) is not None
    assert (
        secret_setting_problem("llm.max_tokens", 64) is None and secret_setting_problem("algo.token_cost", 0.1) is None
    )
    assert secret_argument_problem(["env=two_step", "llm.api_key_env=MY_KEY"]) is None
    assert KEY not in (secret_argument_problem([f"+llm.api_key={KEY}"]) or KEY)


def test_the_backend_refuses_a_key_where_its_variable_name_goes():
    from agents_llm.backends import LLMConfigError
    from agents_llm.backends.openai_compat import OpenAIBackend

    with pytest.raises(LLMConfigError, match="environment variable") as err:
        OpenAIBackend("m", api_key_env=SK_KEY)
    assert SK_KEY not in str(err.value)
