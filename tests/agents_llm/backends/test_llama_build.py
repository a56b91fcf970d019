"""The installed llama.cpp is the project's portable build: no AMX, no AVX-512, the project's flags.

These fail on a machine whose llama-cpp-python came from anywhere but `make install`
(pip's wheel cache, a native build), which is the point: such a build may carry kernels
the next machine cannot run.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from agents_llm.backends import llama_build

FIX = "run `make install`: it builds and installs the project's portable llama.cpp wheel"

# AMX tile instructions (configuration, loads/stores, and the dot-product family).
AMX_PATTERN = re.compile(r"\t(ldtilecfg|sttilecfg|tileloadd\w*|tilestored|tilerelease|tilezero|tdp\w+|tcmm\w+)\b")
ZMM_PATTERN = re.compile(r"%zmm\d+")


def _cpu_libraries():
    lib_dir = llama_build.installed_lib_dir()
    assert lib_dir is not None, f"llama_cpp/lib not found in site-packages: {FIX}"
    libs = sorted(p for p in lib_dir.glob("libggml-cpu*.so*") if not p.is_symlink())
    assert libs, f"no libggml-cpu library in {lib_dir}: {FIX}"
    return libs


def _disassembly(path) -> str:
    objdump = shutil.which("objdump")
    assert objdump, "objdump not found: install binutils (Debian: apt-get install binutils)"
    done = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(path)], capture_output=True, text=True, check=True)
    return done.stdout


def test_cpu_backend_holds_no_amx_or_avx512_instruction():
    for lib in _cpu_libraries():
        text = _disassembly(lib)
        assert len(text) > 100_000, f"objdump printed almost nothing for {lib}"
        amx = sorted(set(AMX_PATTERN.findall(text)))
        assert not amx, f"{lib.name} contains AMX instructions {amx}: a VM without tile state faults on them; {FIX}"
        zmm = len(ZMM_PATTERN.findall(text))
        assert zmm == 0, (
            f"{lib.name} uses AVX-512 registers ({zmm} times): it cannot run on a CPU without AVX-512; {FIX}"
        )


def test_install_record_names_the_project_flags_and_the_installed_libraries():
    record = llama_build.read_record()
    assert record is not None, f"no {llama_build.RECORD_NAME} beside the installed packages: {FIX}"
    assert record["version"] == llama_build.VERSION
    assert record["cmake_args"] == " ".join(llama_build.PORTABLE_CMAKE_ARGS), (
        f"llama-cpp-python was built with {record['cmake_args']!r}, not the project's flags: {FIX}"
    )
    lib_dir = llama_build.installed_lib_dir()
    assert lib_dir is not None
    assert record["libraries"] == llama_build._library_hashes(lib_dir), (
        f"the libraries in {lib_dir} are not the ones the install built (reinstalled by other means?): {FIX}"
    )


def test_llama_cpp_reports_the_portable_instruction_sets():
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
    info = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    features = llama_build.system_features(info)
    wrong = {k: features.get(k) for k, v in llama_build.EXPECTED_FEATURES.items() if features.get(k, "0") != v}
    assert not wrong, f"llama.cpp reports {wrong}, expected {llama_build.EXPECTED_FEATURES} ({info.strip()}): {FIX}"


def test_wheel_cache_is_keyed_by_the_flags(monkeypatch, tmp_path):
    monkeypatch.setenv("QMIX_WHEEL_CACHE", str(tmp_path))
    portable = " ".join(llama_build.PORTABLE_CMAKE_ARGS)
    assert llama_build.build_key(portable) != llama_build.build_key(
        portable.replace("-DGGML_NATIVE=OFF", "-DGGML_NATIVE=ON")
    )
    assert llama_build.build_key(portable) == llama_build.build_key(portable)
    assert llama_build.wheel_cache_dir() == tmp_path


@pytest.mark.parametrize("sig", ["SIGILL", "SIGSEGV"])
def test_check_names_the_signal_and_what_to_do(monkeypatch, capsys, sig):
    # A child that dies the way a wrong build dies: the report must say so, not a bare traceback.
    monkeypatch.setattr(llama_build, "_CHILD", f"import os, signal; os.kill(os.getpid(), signal.{sig})")
    assert llama_build.check(timeout=60) == 1
    err = capsys.readouterr().err
    assert sig in err and "does not fit this machine" in err
    assert "make install" in err and "QMIX_LLAMA_CMAKE_ARGS" in err
    assert "AVX2" in err, "the CPU features llama.cpp reports belong in the message"


def test_system_features_parses_llama_cpp_system_info():
    info = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 0 | AMX_INT8 = 0 | LLAMAFILE = 1 | "
    assert llama_build.system_features(info) == {
        "SSE3": "1", "AVX": "1", "AVX2": "1", "AVX512": "0", "AMX_INT8": "0", "LLAMAFILE": "1"
    }  # fmt: skip


@pytest.mark.slow
def test_embedded_model_answers_a_batched_prompt(capsys):
    assert llama_build.check() == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    n_tokens = int(re.search(r"(\d+) prompt tokens evaluated", out).group(1))
    assert n_tokens >= llama_build.CHECK_MIN_PROMPT_TOKENS
