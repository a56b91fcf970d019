"""Benchmark the report env's round engine: does a round cost its critical path?

With the scripted TEST DOUBLE sleeping L seconds per call, a round whose message graph
has a critical path of d calls should take close to d*L, not calls*L. This prints, per
joint action, the measured round time over d*L (target <= 1.05) and, from a second run
with L = 0, the framework's overhead per LLM call (planning, prompts, retrieval,
Collector, judge, observations, trace).

    python experiments/timing/bench_env.py                  # L = 0.25 s, 5 rounds per scenario
    python experiments/timing/bench_env.py --latency 0.05 --repeats 10

Everything is local: hashing embedding, the default corpus in a temporary cache,
reference judge on the hashing embedding.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time


from agents_llm.backends.scripted import ScriptedBackend  # noqa: E402
from report_protocol import ActionTable  # noqa: E402
from envs.report.writing import ReportWritingEnv  # noqa: E402

TEAM = ["LeadArchitect", "Researcher", "DataAnalyst", "Reviewer"]
T = ActionTable(len(TEAM))


def scenarios() -> dict[str, dict[str, int]]:
    solo = {a: T.solo for a in TEAM}
    return {
        "all solo (d=2: Researcher queries then answers)": dict(solo),
        "chain LA->R->DA->Rev": {**solo, "Researcher": T.query(0), "DataAnalyst": T.query(1), "Reviewer": T.query(2)},
        "LA broadcast, Rev aggregate": {**solo, "LeadArchitect": T.broadcast, "Reviewer": T.aggregate},
        "DA appends, Rev queries DA": {**solo, "DataAnalyst": T.append, "Reviewer": T.query(2)},
        "mutual pair LA<->DA, R appends": {
            **solo,
            "LeadArchitect": T.query(2),
            "DataAnalyst": T.query(0),
            "Researcher": T.append,
        },
    }


def make_env(latency: float, cache: str) -> ReportWritingEnv:
    return ReportWritingEnv(
        llm={"backend": "scripted"},
        backend=ScriptedBackend(latency_s=latency),
        rag={"embedding": {"backend": "hashing"}},
        judge={"kind": "reference", "embedding": "hashing"},
        store_path=os.path.join(cache, "store"),
        max_rounds=1000,
        min_rounds_before_terminate=0,
    )


def run(latency: float, repeats: int, cache: str) -> dict[str, dict]:
    env = make_env(latency, cache)
    env.reset(seed=0)
    env.step({a: T.solo for a in TEAM})  # warm-up: first retrieval, first embedding
    out = {}
    for name, actions in scenarios().items():
        walls, depths, calls = [], [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            env.step(actions)
            walls.append(time.perf_counter() - t0)
            record = env.trace.rounds[-1]
            calls.append(len(record["calls"]))
            plan_depth = _depth(env, actions)
            depths.append(plan_depth)
        out[name] = {"wall": statistics.median(walls), "depth": depths[0], "calls": statistics.median(calls)}
    return out


def _depth(env: ReportWritingEnv, actions: dict[str, int]) -> int:
    from agents_llm.engine import plan_from_actions

    plan = plan_from_actions(env.possible_agents, actions, masks=None)
    return env.engine.critical_path_calls(plan)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.25, help="seconds the scripted backend sleeps per call")
    parser.add_argument("--repeats", type=int, default=5, help="rounds per scenario (median reported)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-env-") as cache:
        os.environ["QMIX_CACHE_DIR"] = cache
        slow = run(args.latency, args.repeats, cache)
        fast = run(0.0, args.repeats, cache)
    L = args.latency
    print(f"scripted latency L = {L:.3f} s per call; median of {args.repeats} rounds per scenario\n")
    print(
        f"{'scenario':48s} {'calls':>5s} {'depth d':>7s} {'d*L s':>7s} {'wall s':>7s} {'wall/(d*L)':>10s} "
        f"{'calls*L s':>9s} {'overhead/call ms':>16s}"
    )
    ratios, overheads = [], []
    for name, r in slow.items():
        ideal = r["depth"] * L
        ratio = r["wall"] / ideal
        per_call = fast[name]["wall"] / max(fast[name]["calls"], 1) * 1000
        ratios.append(ratio)
        overheads.append(per_call)
        print(
            f"{name:48s} {r['calls']:5.0f} {r['depth']:7d} {ideal:7.3f} {r['wall']:7.3f} {ratio:10.3f} "
            f"{r['calls'] * L:9.3f} {per_call:16.2f}"
        )
    print(
        f"\nworst wall/(d*L) = {max(ratios):.3f} (target <= 1.05); "
        f"framework overhead per call (L = 0) median {statistics.median(overheads):.2f} ms, "
        f"max {max(overheads):.2f} ms"
    )
    return 0 if max(ratios) <= 1.05 else 1


if __name__ == "__main__":
    raise SystemExit(main())
