#!/usr/bin/env python
"""Is the team's writing degenerate? Real report episodes, measured by the referee.

Runs `--episodes` episodes of the report env as `train.py` composes it (Hydra config,
extra overrides after `--`), with a seeded random policy (what an exploring learner
does early on), and prints per episode and in all:

* junk queries: share of the Researcher's generated search queries that are not a
  plausible query for the topic (agents_llm.engine.query_check: code, under two words,
  no topic/objective/outline term), and share of the queries actually searched that are;
* flagged outputs: share of non-empty agent outputs the referee flags (repetition, echo);
* flagged sections: share of appended sections with a referee flag on the section
  (repetition, echo, unsupported citation), and the scoring flags (padding, jumps);
* reference score at the end, characters, tokens, seconds per episode.

    python experiments/protocol/bench_writing.py --episodes 4
    python experiments/protocol/bench_writing.py --episodes 4 --label before -- \\
        env.engine.vet_queries=false env.engine.reuse_sources=false llm.repeat_penalty=1.0
    python experiments/protocol/bench_writing.py --episodes 4 -- llm.model=qwen2.5-coder-0.5b

Timings on a shared machine are inflated by the other load; compare runs made together.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def compose(overrides: list[str]):
    from experiments.run_config import compose_run_config

    return compose_run_config(["algo=random", *overrides])


def episode_stats(env, infos_per_round: list[dict]) -> dict:
    from agents_llm.engine.query_check import junk_reason, query_terms

    generated = searched = junk_generated = junk_searched = 0
    outputs = flagged_outputs = appended = flagged_sections = 0
    scoring_flags: dict[str, int] = {}
    for rnd, info in zip(env.trace.rounds, infos_per_round):
        outline = [s["title"] for s in rnd["report"]["sections"]]
        terms = query_terms(env.task.topic, rnd.get("objective", ""), outline)
        for rec in rnd["agents"].values():
            retrieval = rec.get("retrieval") or {}
            raw = retrieval.get("generated", retrieval.get("queries", []))
            generated += len(raw)
            junk_generated += sum(junk_reason(q, terms) is not None for q in raw)
            searched += len(retrieval.get("queries", []))
            junk_searched += sum(junk_reason(q, terms) is not None for q in retrieval.get("queries", []))
        flags = rnd.get("referee", [])
        for agent, text in (info.get("round_outputs") or {}).items():
            if text.strip():
                outputs += 1
                flagged_outputs += any(f["target"] == agent and not f["on_report"] for f in flags)
        section = rnd["collector"].get("section_id") if rnd["collector"]["status"] == "appended" else None
        if section:
            appended += 1
            flagged_sections += any(f["target"] == section for f in flags)
        for f in flags:
            if f["target"] == "report":
                scoring_flags[f["kind"]] = scoring_flags.get(f["kind"], 0) + 1
    kinds: dict[str, int] = {}
    for rnd in env.trace.rounds:
        for f in rnd.get("referee", []):
            kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    return {
        "task": env.task.id,
        "queries": generated,
        "junk_queries": junk_generated,
        "searched": searched,
        "junk_searched": junk_searched,
        "outputs": outputs,
        "flagged_outputs": flagged_outputs,
        "appended": appended,
        "flagged_sections": flagged_sections,
        "scoring_flags": scoring_flags,
        "flag_kinds": kinds,
        "report_score": float(infos_per_round[-1].get("report_score", 0.0)),
        "chars": env.report.chars,
        "tokens": env.ledger.total.total,
        "rewards": [round(float(i.get("_reward", 0.0)), 4) for i in infos_per_round if i.get("appended")],
    }


def share(num: int, den: int) -> str:
    return f"{num}/{den} ({num / den:.0%})" if den else "0/0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--split", default="holdout", help="task split the episodes draw from")
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--label", default="", help="a name for this run in the output")
    parser.add_argument("--out", default=None, help="write the per-episode rows and the last report here (JSON)")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides after --, e.g. llm.model=qwen2.5-coder-0.5b")
    args = parser.parse_args()

    import numpy as np

    import algos
    from algos.training.env_configs import make_env

    cfg = compose([f"env.split={args.split}", *args.overrides])
    env = make_env(cfg.env)
    spec = algos.EnvSpec.from_env(env)
    policy = algos.build("random", spec, cfg.algo, seed=args.seed)
    rows, reports = [], []
    for ep in range(args.episodes):
        t0 = time.perf_counter()
        obs, infos = env.reset(seed=args.seed + ep)
        per_round = []
        while env.agents:
            o = {a: obs[a]["observation"] for a in env.agents}
            m = {a: obs[a]["action_mask"] for a in env.agents}
            actions = policy.act(o, m, True)
            obs, rewards, _, _, infos = env.step({a: int(actions[a]) for a in env.agents})
            # the full round record (round_outputs, ...): step's infos hold only the stackable numbers
            info = dict(next(iter(env.last_round_info().values())))
            info["_reward"] = float(np.mean(list(rewards.values())))
            per_round.append(info)
        row = episode_stats(env, per_round)
        row["seconds"] = time.perf_counter() - t0
        rows.append(row)
        reports.append(env.report.to_markdown())
        print(
            f"[{args.label}] episode {ep + 1}/{args.episodes} {row['task']}: score {row['report_score']:.3f}, "
            f"junk queries {share(row['junk_queries'], row['queries'])}, flagged outputs "
            f"{share(row['flagged_outputs'], row['outputs'])}, flagged sections "
            f"{share(row['flagged_sections'], row['appended'])}, flags {row['flag_kinds']}, "
            f"rewards per append {row['rewards']}, {row['chars']} chars, {row['tokens']} tokens, "
            f"{row['seconds']:.0f} s",
            flush=True,
        )

    def total(key: str) -> int:
        return sum(r[key] for r in rows)

    print(f"\n[{args.label}] {cfg.env.llm.model} over {len(rows)} episode(s), overrides {args.overrides}:")
    print(f"  junk generated queries   {share(total('junk_queries'), total('queries'))}")
    print(f"  junk queries searched    {share(total('junk_searched'), total('searched'))}")
    print(f"  flagged agent outputs    {share(total('flagged_outputs'), total('outputs'))}")
    print(f"  flagged appended sections {share(total('flagged_sections'), total('appended'))}")
    print(f"  reference score (mean)   {np.mean([r['report_score'] for r in rows]):.3f}")
    print(f"  seconds per episode      {np.mean([r['seconds'] for r in rows]):.0f}")
    print(f"  tokens per episode       {np.mean([r['tokens'] for r in rows]):.0f}")
    print(f"\nlast report:\n{reports[-1]}")
    if args.out:
        Path(args.out).write_text(
            json.dumps({"label": args.label, "overrides": args.overrides, "rows": rows, "reports": reports}, indent=2)
        )


if __name__ == "__main__":
    main()
