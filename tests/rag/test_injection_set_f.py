"""Format checks for held-out injection set F (tests/rag/data/heldout_injections_f.json).

Only the set's shape is checked here, not the defence: the set was written blind and is
measured end to end elsewhere, so a test that ran the guard on it would invite tuning.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

SET_F = Path(__file__).parent / "data" / "heldout_injections_f.json"
# Encoded payloads carry their markers only once decoded, so they need not appear verbatim.
ENCODED_FAMILY = "encoded"


def format_problems(data: dict[str, Any]) -> list[str]:
    """Every way `data` breaks the held-out set format, one line each."""
    problems = []
    if not isinstance(data.get("note"), str) or not data["note"].strip():
        problems.append("note: missing or empty")
    attacks, benign = data.get("attacks", []), data.get("benign", [])
    if len(attacks) < 80:
        problems.append(f"attacks: {len(attacks)} < 80")
    if len(benign) < 45:
        problems.append(f"benign: {len(benign)} < 45")
    ids = [entry.get("id") for entry in attacks + benign]
    problems += [f"id {i!r}: used more than once" for i in sorted({i for i in ids if ids.count(i) > 1})]
    families = {a.get("family") for a in attacks}
    if len(families) < 20:
        problems.append(f"families: {len(families)} distinct < 20")
    benign_text = "\n".join(b.get("text", "") for b in benign)
    for attack in attacks:
        where = f"attack {attack.get('id')!r}"
        number = re.fullmatch(r"f(\d{2})", str(attack.get("id")))
        markers = attack.get("markers", [])
        if number is None:
            problems.append(f"{where}: id is not f followed by two digits")
        elif f"HARRIER{number.group(1)}" not in markers:
            problems.append(f"{where}: markers lack HARRIER{number.group(1)}")
        for marker in markers:
            if attack.get("family") != ENCODED_FAMILY and marker not in attack.get("text", ""):
                problems.append(f"{where}: marker {marker!r} is not in its text")
            if marker in benign_text:
                problems.append(f"{where}: marker {marker!r} occurs in benign prose")
    for entry in benign:
        if re.fullmatch(r"m\d{2}", str(entry.get("id"))) is None:
            problems.append(f"benign {entry.get('id')!r}: id is not m followed by two digits")
    if any("HARRIER" in b.get("text", "").upper() for b in benign):
        problems.append("benign: an entry carries a HARRIER marker")
    return problems


@pytest.fixture(scope="module")
def set_f() -> dict[str, Any]:
    return json.loads(SET_F.read_text(encoding="utf-8"))


def test_set_f_has_the_held_out_format(set_f):
    assert format_problems(set_f) == []


def test_set_f_markers_are_unique_across_attacks(set_f):
    harriers = [m for a in set_f["attacks"] for m in a["markers"] if m.startswith("HARRIER")]
    assert len(harriers) == len(set(harriers)) == len(set_f["attacks"])


def _broken(set_f: dict[str, Any]) -> dict[str, Any]:
    broken = copy.deepcopy(set_f)
    broken["attacks"][1]["id"] = broken["attacks"][0]["id"]
    broken["attacks"][2]["markers"] = [m for m in broken["attacks"][2]["markers"] if not m.startswith("HARRIER")]
    broken["benign"] = broken["benign"][:44]
    broken["benign"][0]["id"] = "benign-1"
    for attack in broken["attacks"]:
        attack["family"] = "one_family"
    return broken


def test_format_check_names_each_break(set_f):
    problems = format_problems(_broken(set_f))
    assert "benign: 44 < 45" in problems
    assert "families: 1 distinct < 20" in problems
    assert any(p.startswith("id 'f01': used more than once") for p in problems)
    assert any("markers lack HARRIER03" in p for p in problems)
    assert "benign 'benign-1': id is not m followed by two digits" in problems
