"""`make benchmarl-env`'s environment sees the project's packages, from a venv and from a system Python.

Built with `venv --system-site-packages`, the BenchMARL environment saw the *base*
interpreter's site-packages when make ran under a venv's Python: the project and its torch
were missing there. Only the environment-creating step runs here (no torchrl install).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # creates three virtual environments with pip (~10 s each)


def _make_env(python: str, target: Path) -> Path:
    done = subprocess.run(
        ["make", "-s", f"{target}/pyvenv.cfg", f"BENCHMARL_VENV={target}", f"PYTHON={python}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return target / "bin" / "python"


def _purelib(python: Path | str) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return Path(out.strip())


def test_from_a_venv_the_environment_sees_that_venv_not_the_base_python(tmp_path):
    project_venv = tmp_path / "project-venv"
    subprocess.run([sys.executable, "-m", "venv", str(project_venv)], check=True, timeout=300)
    # A package only the project venv has (as torch and the project are in a user's venv).
    (_purelib(project_venv / "bin" / "python") / "only_in_project_venv.py").write_text("WHERE = 'project venv'\n")
    bench_python = _make_env(str(project_venv / "bin" / "python"), tmp_path / "bench")
    probe = (
        "import sys, only_in_project_venv as m; own = sys.path.index(__import__('sysconfig').get_paths()['purelib']); "
        "print(m.WHERE, own < sys.path.index(m.__file__.rsplit('/', 1)[0]))"
    )
    done = subprocess.run([str(bench_python), "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, f"the BenchMARL environment does not see the project venv: {done.stderr[-1500:]}"
    assert done.stdout.split() == ["project", "venv", "True"], "its own packages must come before the project's"


def test_from_the_system_python_the_environment_imports_the_project_and_torch(tmp_path):
    bench_python = _make_env(sys.executable, tmp_path / "bench")
    probe = "import algos, torch; print(algos.__file__)"
    done = subprocess.run([str(bench_python), "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-1500:]
    assert Path(done.stdout.strip()).resolve().is_relative_to(ROOT.resolve()), "not this checkout's editable install"
