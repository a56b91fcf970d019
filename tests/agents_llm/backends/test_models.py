"""Model registry: parts joined in order, pinned sha256 enforced, clear errors."""

import hashlib
import re
import sys

import pytest

from agents_llm.backends import LLMConfigError
from agents_llm.backends.models import MODELS, ModelSpec, resolve_model


def _fake_part_packages(root, contents):
    names = []
    for i, data in enumerate(contents, 1):
        pkg = root / f"fakemodel_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(data)
        names.append(pkg.name)
    return tuple(names)


@pytest.fixture
def parts(tmp_path, monkeypatch):
    contents = [b"GGUF" + bytes(range(50)), b"middle" * 100, b"tail"]
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    names = _fake_part_packages(tmp_path / "site", contents)
    yield names, b"".join(contents)
    for n in names:
        sys.modules.pop(n, None)


def test_parts_are_concatenated_in_order_and_verified(parts, tmp_path):
    names, whole = parts
    spec = ModelSpec("fake", names, "data/*.bin", hashlib.sha256(whole).hexdigest(), "pip install fake")
    path = resolve_model("fake", tmp_path / "cache", spec=spec)
    assert path.read_bytes() == whole
    # second resolve trusts the verified marker and returns the same file
    assert resolve_model("fake", tmp_path / "cache", spec=spec) == path


def test_wrong_sha256_is_refused_and_nothing_is_left_behind(parts, tmp_path):
    names, whole = parts
    spec = ModelSpec("fake", names, "data/*.bin", "0" * 64, "pip install fake")
    with pytest.raises(LLMConfigError, match=r"has sha256 [0-9a-f]{64}, expected the pinned 0{64}; refusing"):
        resolve_model("fake", tmp_path / "cache", spec=spec)
    assert not (tmp_path / "cache" / "fake.gguf").exists()


def test_a_tampered_cached_model_is_rejoined_and_checked(parts, tmp_path):
    names, whole = parts
    spec = ModelSpec("fake", names, "data/*.bin", hashlib.sha256(whole).hexdigest(), "pip install fake")
    path = resolve_model("fake", tmp_path / "cache", spec=spec)
    path.write_bytes(b"corrupted")
    assert resolve_model("fake", tmp_path / "cache", spec=spec).read_bytes() == whole


def test_missing_part_package_names_it_and_how_to_install(tmp_path):
    spec = ModelSpec("fake", ("no_such_part_package_1",), "data/*.bin", "0" * 64, "pip install -e '.[fake]'")
    with pytest.raises(LLMConfigError, match=r"needs the package 'no_such_part_package_1'.*pip install -e '.\[fake\]'"):
        resolve_model("fake", tmp_path, spec=spec)


def test_unknown_model_name_lists_the_known_ones():
    with pytest.raises(LLMConfigError, match=r"unknown model 'gpt-7'.*smollm2-135m"):
        resolve_model("gpt-7")


def test_every_registered_model_pins_a_full_sha256():
    for name, spec in MODELS.items():
        assert re.fullmatch(r"[0-9a-f]{64}", spec.sha256), f"{name}: the pin must be 64 lowercase hex digits"
    pins = [spec.sha256 for spec in MODELS.values()]
    assert len(set(pins)) == len(pins), "two models pin the same file: a copy-paste slip"


def test_shipped_smollm2_matches_its_pin(tmp_path):
    path = resolve_model("smollm2-135m", tmp_path)
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
