"""experiments/bench_learner.py's ceiling and FLOP count: the replay of an update's matrix
products runs exactly the products the update runs (same ops, same shapes), their FLOPs
agree with torch's own count wherever torch counts them, and a product the replay cannot
run is refused rather than left out."""

from __future__ import annotations

from collections import Counter

import bench_learner
import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import algos
from algos.buffer import collate


def small_update():
    B, T, N, D, S = 4, 3, 3, 5, 6
    A = 5 + N
    batch = collate(bench_learner.make_episodes(B, T, N, D, A, S, seed=0))
    spec = algos.EnvSpec(agents=[f"agent_{i}" for i in range(N)], obs_dim=D, n_actions=A, state_dim=S)
    return bench_learner.ours_step(batch, spec, hidden=8)


def recorded(fn, **kw):
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, **kw) as prof:
        fn()
    return [e for e in prof.events() if e.name in bench_learner.MATMUL_OPS]


def shapes_of(e):
    return tuple(tuple(s) for s in e.input_shapes[: bench_learner.MATMUL_OPS[e.name][0]])


def test_product_flops_agree_with_torchs_count_and_include_the_in_place_ones():
    step = small_update()
    step()
    counted_by_torch = 0
    for e in recorded(step, with_flops=True):
        ours = bench_learner.matmul_flops([(e.name, list(shapes_of(e)))])
        if e.name.endswith("_"):
            assert e.flops == 0  # torch does not count addmm_; we do
        else:
            assert e.flops == ours, (e.name, shapes_of(e))
            counted_by_torch += ours
    calls = bench_learner.matmul_calls(step)
    in_place = bench_learner.matmul_flops([c for c in calls if c[0].endswith("_")])
    assert in_place > 0  # the GRU backward's addmm_
    assert bench_learner.flops_per_update(step) == counted_by_torch + in_place


def test_the_replay_runs_the_same_products():
    step = small_update()
    want = Counter((name.rstrip("_"), tuple(shapes)) for name, shapes in bench_learner.matmul_calls(step))
    assert {name for name, _ in want} >= {"aten::mm", "aten::addmm"}
    events = recorded(bench_learner.matmuls_only(bench_learner.matmul_calls(step)))
    assert Counter((e.name, shapes_of(e)) for e in events) == want


def test_a_product_it_cannot_replay_is_refused_not_dropped():
    a, b = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
    with pytest.raises(RuntimeError, match="aten::addbmm"):
        bench_learner.matmul_calls(lambda: torch.addbmm(torch.zeros(3, 5), a, b))
    with pytest.raises(RuntimeError, match="aten::mv"):
        bench_learner.matmul_calls(lambda: torch.mv(a[0], b[0, :, 0]))
    # ops that only run the products above, or merely sound like one, are not refused
    assert bench_learner.matmul_calls(lambda: (torch.matmul(a, b), a.cummax(0))) == [
        ("aten::bmm", [(2, 3, 4), (2, 4, 5)])
    ]


def test_the_product_table_covers_every_product_once_per_shape():
    step = small_update()
    calls = bench_learner.matmul_calls(step)
    rows = bench_learner.product_table(calls, reps=2)
    assert sum(count for _, _, _, count, _ in rows) == len(calls)
    assert len({(name, tuple(shapes)) for _, name, shapes, _, _ in rows}) == len(rows)
    assert [r[0] for r in rows] == sorted((r[0] for r in rows), reverse=True)
    assert all(rate > 0 for *_, rate in rows)
