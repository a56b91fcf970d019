"""The report env's feature layout is declared once: spaces, offsets, docstring and vectors agree."""

from __future__ import annotations

import numpy as np
import pytest

import envs.report.writing as report_writing
from agents_llm.roles import ROLES
from report_protocol import ActionTable
from envs.report.features import OBSERVATION_BLOCKS, STATE_BLOCKS, DecisionPoint, ReportFeatures

AGENTS = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]


def _features(comm: bool, summary_dim: int = 8) -> ReportFeatures:
    return ReportFeatures(
        AGENTS,
        AGENTS,
        list(ROLES),
        ActionTable(len(AGENTS)),
        summary_dim=summary_dim,
        observe_comm_adjacency=comm,
        token_scale=1000.0,
        round_token_scale=100.0,
    )


def _point(n: int, summary_dim: int, **kw) -> DecisionPoint:
    values = dict(
        round=1,
        max_rounds=4,
        min_rounds_before_terminate=2,
        chars=500,
        sections=1,
        report_empty=False,
        length_target=25000.0,
        report_score=0.3,
        length_score=0.1,
        last_append_round=1,
        episode_tokens=400,
        last_round_tokens=120,
        own_tokens={"Researcher": 50},
        rag_exhausted=False,
        objective_set=True,
        has_output={"Researcher": True},
        last_actions={"Researcher": 7},
        adjacency=np.eye(n, dtype=np.float32)[::-1].copy(),
        summary=np.ones(summary_dim, np.float32),
    )
    values.update(kw)
    return DecisionPoint(**values)


@pytest.mark.parametrize("comm", [False, True])
def test_spaces_offsets_and_vectors_come_from_one_layout(comm):
    f, n, a, s = _features(comm), len(AGENTS), len(AGENTS) + 5, 8
    expected = len(ROLES) + n + 15 + 2 * a + s + (n * n if comm else 0)
    layout = f.observation_layout()
    assert f.obs_dim == expected == layout[-1][2] == f.observation_space()["observation"].shape[0]
    assert [name for name, _, _ in layout] == [b.name for b in OBSERVATION_BLOCKS if comm or b.name != "comm_adjacency"]
    obs, state = f.vectors(_point(n, s))
    assert state.shape == f.state_space().shape == (3 + 6 + 2 + 2 + n + n * a + s,)
    vec = obs["Researcher"]
    spans = {name: vec[start:stop] for name, start, stop in layout}
    assert spans["agent"].tolist() == [0, 1, 0, 0]
    assert spans["own_last_action"][7] == 1 and spans["own_last_action"].sum() == 1
    assert spans["tokens"].tolist() == pytest.approx([0.4, 1.2, 0.05])
    if comm:
        assert spans["comm_adjacency"].reshape(n, n)[0, n - 1] == 1


def test_docstring_lists_every_block():
    for block in OBSERVATION_BLOCKS + STATE_BLOCKS:
        assert f"{block.name:<20} {block.doc}" in report_writing.__doc__


def test_a_value_out_of_step_with_its_block_is_caught():
    f = _features(False)
    with pytest.raises(AssertionError, match="summary"):
        f.vectors(_point(len(AGENTS), 8, summary=np.ones(3, np.float32)))
