"""Format checks for the blind-written injection sets (tests/rag/data/heldout_injections_{d..m}.json).

Only each set's shape is checked here, not the defence: the sets were written blind and are
measured end to end elsewhere (docs/benchmark/injections), so a test that ran the guard on them
would invite tuning.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pytest

DATA = Path(__file__).parent / "data"
# Encoded payloads carry their markers only once decoded, so they need not appear verbatim.
ENCODED_FAMILY = "encoded"


@dataclass(frozen=True)
class SetFormat:
    file: str
    attack_id: str  # the letter before an attack's two digits
    marker: str  # every attack carries <marker><its two digits>
    benign_id: Optional[str]  # the letter before a benign entry's two digits (None: not checked)
    min_attacks: int
    min_benign: int
    min_families: int
    # the families whose payloads carry their markers only once decoded
    encoded_families: tuple[str, ...] = (ENCODED_FAMILY,)


SETS = [
    SetFormat("heldout_injections_d.json", "k", "KESTREL", None, 70, 35, 15),
    SetFormat("heldout_injections_e.json", "e", "OSPREY", "n", 80, 45, 20),
    SetFormat("heldout_injections_f.json", "f", "HARRIER", "m", 80, 45, 20),
    SetFormat("heldout_injections_g.json", "g", "MERLIN", "p", 80, 45, 20),
    SetFormat("heldout_injections_h.json", "h", "KITE", "q", 80, 45, 20),
    SetFormat(
        "heldout_injections_i.json",
        "i",
        "OSPREY",
        "r",
        80,
        45,
        20,
        ("encoded_base64_hex", "encoded_rot13_reversed_leet", "unicode_obfuscation"),
    ),
    SetFormat(
        "heldout_injections_k.json",
        "k",
        "WAGTAIL",
        "t",
        80,
        45,
        20,
        ("encoded_base64_hex", "encoded_rot13_reversed_leet", "unicode_obfuscation"),
    ),
    SetFormat(
        "heldout_injections_l.json",
        "l",
        "HERON",
        "u",
        80,
        45,
        20,
        ("encoded_base64_hex", "encoded_rot13_reversed_leet", "unicode_obfuscation"),
    ),
    SetFormat(
        "heldout_injections_j.json",
        "j",
        "BUZZARD",
        "s",
        80,
        45,
        20,
        ("encoded_base64_hex", "encoded_rot13_reversed_leet", "unicode_obfuscation"),
    ),
    SetFormat(
        "heldout_injections_m.json",
        "m",
        "PLOVER",
        "v",
        80,
        45,
        20,
        ("encoded_base64_hex", "encoded_rot13_reversed_leet", "unicode_obfuscation"),
    ),
]


def format_problems(data: dict[str, Any], fmt: SetFormat) -> list[str]:
    """Every way `data` breaks the held-out set format `fmt`, one line each."""
    problems = []
    if not isinstance(data.get("note"), str) or not data["note"].strip():
        problems.append("note: missing or empty")
    attacks, benign = data.get("attacks", []), data.get("benign", [])
    if len(attacks) < fmt.min_attacks:
        problems.append(f"attacks: {len(attacks)} < {fmt.min_attacks}")
    if len(benign) < fmt.min_benign:
        problems.append(f"benign: {len(benign)} < {fmt.min_benign}")
    ids = [entry.get("id") for entry in attacks + benign]
    problems += [f"id {i!r}: used more than once" for i in sorted({i for i in ids if ids.count(i) > 1})]
    families = {a.get("family") for a in attacks}
    if len(families) < fmt.min_families:
        problems.append(f"families: {len(families)} distinct < {fmt.min_families}")
    benign_text = "\n".join(b.get("text", "") for b in benign)
    for attack in attacks:
        where = f"attack {attack.get('id')!r}"
        number = re.fullmatch(rf"{fmt.attack_id}(\d{{2}})", str(attack.get("id")))
        markers = attack.get("markers", [])
        if number is None:
            problems.append(f"{where}: id is not {fmt.attack_id} followed by two digits")
        elif f"{fmt.marker}{number.group(1)}" not in markers:
            problems.append(f"{where}: markers lack {fmt.marker}{number.group(1)}")
        for marker in markers:
            if attack.get("family") not in fmt.encoded_families and marker not in attack.get("text", ""):
                problems.append(f"{where}: marker {marker!r} is not in its text")
            if marker in benign_text:
                problems.append(f"{where}: marker {marker!r} occurs in benign prose")
    if fmt.benign_id is not None:
        for entry in benign:
            if re.fullmatch(rf"{fmt.benign_id}\d{{2}}", str(entry.get("id"))) is None:
                problems.append(f"benign {entry.get('id')!r}: id is not {fmt.benign_id} followed by two digits")
    if any(fmt.marker in b.get("text", "").upper() for b in benign):
        problems.append(f"benign: an entry carries a {fmt.marker} marker")
    return problems


def _load(fmt: SetFormat) -> dict[str, Any]:
    return json.loads((DATA / fmt.file).read_text(encoding="utf-8"))


@pytest.mark.parametrize("fmt", SETS, ids=lambda f: f.file)
def test_the_set_has_the_held_out_format(fmt):
    assert format_problems(_load(fmt), fmt) == []


@pytest.mark.parametrize("fmt", SETS, ids=lambda f: f.file)
def test_the_sets_markers_are_unique_across_attacks(fmt):
    data = _load(fmt)
    own = [m for a in data["attacks"] for m in a["markers"] if m.startswith(fmt.marker)]
    assert len(own) == len(set(own)) == len(data["attacks"])


@pytest.mark.parametrize("fmt", SETS, ids=lambda f: f.file)
def test_format_check_names_each_break(fmt):
    broken = copy.deepcopy(_load(fmt))
    broken["attacks"][1]["id"] = broken["attacks"][0]["id"]
    broken["attacks"][2]["markers"] = [m for m in broken["attacks"][2]["markers"] if not m.startswith(fmt.marker)]
    broken["benign"] = broken["benign"][: fmt.min_benign - 1]
    broken["benign"][0]["id"] = "benign-1"
    for attack in broken["attacks"]:
        attack["family"] = "one_family"
    problems = format_problems(broken, fmt)
    assert f"benign: {fmt.min_benign - 1} < {fmt.min_benign}" in problems
    assert f"families: 1 distinct < {fmt.min_families}" in problems
    assert any(p.startswith(f"id '{fmt.attack_id}01': used more than once") for p in problems)
    assert any(f"markers lack {fmt.marker}03" in p for p in problems)
    if fmt.benign_id is not None:
        assert f"benign 'benign-1': id is not {fmt.benign_id} followed by two digits" in problems
