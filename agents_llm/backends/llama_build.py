"""The one llama.cpp build this project runs: portable x86-64, no AVX-512, no AMX.

llama-cpp-python compiles llama.cpp with ``GGML_NATIVE=ON`` unless told otherwise, so
a build made on a CPU that advertises AMX carries the AMX kernels and uses them for
every batched evaluation; in a VM whose hypervisor does not enable the tile state,
``ldtilecfg`` faults and the process dies on its first prompt of two tokens or more.
The project therefore builds one wheel with explicit flags (AVX2/FMA/F16C/BMI2, the
x86-64-v3 level every x86 server of the last decade has), keyed by those flags in a
cache of its own: pip's wheel cache keys by name and version only, and would hand back
a wheel built with other flags.

Run by path, before the project's dependencies exist, so this module imports only the
standard library::

    python agents_llm/backends/llama_build.py install   # build (once per flag set) and install
    python agents_llm/backends/llama_build.py check     # a real prompt in a child process
    python agents_llm/backends/llama_build.py record    # print what the install recorded
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from pathlib import Path

VERSION = "0.3.36"

# One flag per line so a diff shows what changed. GGML_NATIVE=OFF stops -march=native;
# the AVX-512 and AMX families stay off even on a CPU that has them, so the wheel runs on
# any machine it is copied to (a CI host, a cluster node) and never executes a tile
# instruction. LLAVA_BUILD=OFF halves the compile (we use no vision model).
PORTABLE_CMAKE_ARGS: tuple[str, ...] = (
    "-DLLAVA_BUILD=OFF",
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON",
    "-DGGML_AVX_VNNI=OFF",
    "-DGGML_AVX512=OFF",
    "-DGGML_AVX512_VBMI=OFF",
    "-DGGML_AVX512_VNNI=OFF",
    "-DGGML_AVX512_BF16=OFF",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
)
BUILD_SUMMARY = "portable x86-64 (GGML_NATIVE=OFF; AVX2 FMA F16C BMI2; no AVX-512, no AMX)"

# What llama_print_system_info() must report for the portable build: the CPU backend
# lists the instruction sets it was compiled with, not what the CPU has.
EXPECTED_FEATURES = {"AVX2": "1", "FMA": "1", "F16C": "1", "AVX512": "0", "AMX_INT8": "0"}
AMX_MNEMONICS = ("ldtilecfg", "sttilecfg", "tileloadd", "tilestored", "tdpb", "tilezero", "tilerelease")

# Where the install records what it put in place: beside the packages it describes, so a
# venv has its own record and a pip reinstall by other means shows as a checksum mismatch.
RECORD_NAME = "qmix_llama_build.json"

# A prompt of well over 50 tokens: batched evaluation (the path that crashed) only runs
# for prompts of two tokens or more, so a one-word smoke test would prove nothing.
CHECK_PROMPT = (
    "The report writing team studies how language model agents share evidence. "
    "A researcher retrieves passages from the documents, an analyst turns them into "
    "paragraphs, a reviewer checks each claim against its source, and a lead architect "
    "keeps the outline. Write one sentence that summarises what the team does:"
)
CHECK_MIN_PROMPT_TOKENS = 50


def cmake_args() -> str:
    """The flags the install builds with; QMIX_LLAMA_CMAKE_ARGS replaces them (e.g. a CUDA build)."""
    return os.environ.get("QMIX_LLAMA_CMAKE_ARGS", " ".join(PORTABLE_CMAKE_ARGS))


def build_key(args: str) -> str:
    tag = f"{VERSION}|{args}|{sys.implementation.cache_tag}|{sysconfig.get_platform()}"
    return hashlib.sha256(tag.encode()).hexdigest()[:16]


def wheel_cache_dir() -> Path:
    root = os.environ.get("QMIX_WHEEL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "qmix-report-gym", "wheels"
    )
    return Path(root)


def record_path() -> Path:
    return Path(sysconfig.get_paths()["purelib"]) / RECORD_NAME


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def installed_lib_dir() -> Path | None:
    """llama_cpp/lib of the installed package, found without importing it (importing loads the libs)."""
    for root in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        candidate = Path(root) / "llama_cpp" / "lib"
        if candidate.is_dir():
            return candidate
    return None


def _library_hashes(lib_dir: Path) -> dict[str, str]:
    return {p.name: _sha256(p) for p in sorted(lib_dir.glob("*.so*")) if p.is_file() and not p.is_symlink()}


def build_wheel(args: str) -> Path:
    """The wheel for these flags: from the project's cache, or compiled now (6-9 min on 2 cores)."""
    target = wheel_cache_dir() / f"llama-cpp-python-{VERSION}-{build_key(args)}"
    wheels = sorted(target.glob("llama_cpp_python-*.whl"))
    if wheels:
        return wheels[0]
    print(f"llama-cpp-python {VERSION}: compiling with CMAKE_ARGS={args!r} (6-9 minutes on 2 cores, once)", flush=True)
    env = dict(os.environ, CMAKE_ARGS=args, FORCE_CMAKE="1")
    with tempfile.TemporaryDirectory(prefix="llama-wheel-") as tmp:
        # --no-cache-dir: never take pip's cached wheel, which may carry other flags.
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "--no-binary", "llama-cpp-python",
             f"llama-cpp-python=={VERSION}", "-w", tmp],
            check=True, env=env,
        )  # fmt: skip
        built = sorted(Path(tmp).glob("llama_cpp_python-*.whl"))
        if not built:
            raise SystemExit(f"pip wheel produced no llama_cpp_python wheel in {tmp}")
        target.mkdir(parents=True, exist_ok=True)
        final = target / built[0].name
        shutil.move(str(built[0]), final)
    (target / "cmake_args.txt").write_text(args + "\n")
    return final


def _is_installed(record: dict | None, wheel_sha: str) -> bool:
    """True when the installed libraries are the ones this wheel put there."""
    lib_dir = installed_lib_dir()
    if record is None or lib_dir is None or record.get("wheel_sha256") != wheel_sha:
        return False
    return record.get("libraries") == _library_hashes(lib_dir)  # not reinstalled by other means since


def install(args: str | None = None) -> dict:
    """Build (or reuse) the wheel for the project's flags and make it the installed one."""
    args = cmake_args() if args is None else args
    wheel = build_wheel(args)
    wheel_sha = _sha256(wheel)
    record = read_record()
    if record is None or not _is_installed(record, wheel_sha):
        # --force-reinstall: a llama-cpp-python of the same version built elsewhere counts as
        # installed to pip and would stay. --no-deps: `pip install -e .` brings the deps.
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--no-deps", "--force-reinstall", "--no-cache-dir", str(wheel)],
            check=True,
        )
        lib_dir = installed_lib_dir()
        if lib_dir is None:
            raise SystemExit(
                f"installed {wheel.name} but found no llama_cpp/lib under {sysconfig.get_paths()['purelib']}"
            )
        record = {
            "version": VERSION,
            "cmake_args": args,
            "summary": BUILD_SUMMARY if args == " ".join(PORTABLE_CMAKE_ARGS) else "custom (QMIX_LLAMA_CMAKE_ARGS)",
            "wheel": str(wheel),
            "wheel_sha256": wheel_sha,
            "libraries": _library_hashes(lib_dir),
        }
        record_path().write_text(json.dumps(record, indent=2) + "\n")
    print(f"llama-cpp-python {VERSION}: {record['summary']}, wheel {wheel}")
    return record


def read_record() -> dict | None:
    path = record_path()
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def system_features(info: str) -> dict[str, str]:
    """'AVX2 = 1 | FMA = 1 | ...' (llama_print_system_info) as a dict."""
    features: dict[str, str] = {}
    for part in info.replace("\n", "|").split("|"):
        name, sep, value = part.partition("=")
        if sep:
            features[name.strip().split(":")[-1].strip()] = value.strip()
    return features


_CHILD = textwrap.dedent(
    """
    import sys, llama_cpp
    from agents_llm.backends.models import resolve_model
    path = resolve_model("smollm2-135m")
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=512, n_threads=1, n_batch=64, verbose=False, seed=0)
    prompt = sys.argv[1]
    n_prompt = len(llm.tokenize(prompt.encode()))
    if n_prompt < int(sys.argv[2]):
        sys.exit(f"the check prompt has {n_prompt} tokens, fewer than {sys.argv[2]}: it would not batch")
    out = llm(prompt, max_tokens=8, temperature=0.0)
    text = out["choices"][0]["text"]
    print(f"{n_prompt} prompt tokens evaluated, generated {out['usage']['completion_tokens']} tokens: {text!r}")
    """
)


def _system_info_in_child() -> str:
    """llama_print_system_info() from a separate process: it loads the library but computes nothing."""
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return done.stdout.strip() or f"(unavailable: {done.stderr.strip()[-300:]})"


def check(timeout: float = 300.0) -> int:
    """Run a >=50-token prompt through the embedded model in a child process; 0 if it worked."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, CHECK_PROMPT, str(CHECK_MIN_PROMPT_TOKENS)],
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        print(f"llama.cpp check: the embedded model did not answer within {timeout:.0f} s", file=sys.stderr)
        return 1
    if done.returncode == 0:
        print(f"llama.cpp check passed: {done.stdout.strip()}")
        return 0
    if done.returncode < 0:
        sig = signal.Signals(-done.returncode).name
        what = f"the process was killed by {sig}"
        if sig in ("SIGILL", "SIGSEGV", "SIGBUS"):
            what += " (an instruction this CPU or VM does not allow: the llama.cpp build does not fit this machine)"
    else:
        what = f"the process exited {done.returncode}: {done.stderr.strip()[-800:]}"
    record = read_record()
    built = record["cmake_args"] if record else "unknown (no install record: not built by `make install`)"
    print(
        "llama.cpp check FAILED: a 50+-token prompt through the embedded model (SmolLM2-135M) crashed.\n"
        f"  what happened: {what}\n"
        f"  llama.cpp reports: {_system_info_in_child()}\n"
        f"  built with: {built}\n"
        "  what to do: run `make install` again (it installs the project's portable build over any other);\n"
        f"  if that build crashes too, set QMIX_LLAMA_CMAKE_ARGS to fewer instruction sets (e.g. drop -DGGML_AVX2=ON)\n"
        f"  and rerun `make install`; wheels are kept per flag set under {wheel_cache_dir()}.",
        file=sys.stderr,
    )
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("install", "check", "record"))
    ns = parser.parse_args(argv)
    if ns.command == "install":
        install()
        return 0
    if ns.command == "check":
        return check()
    print(json.dumps(read_record(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
