"""How long are the reports the configured team writes in the round budget?

Runs real episodes of the report env (default: the env config of
conf/env/report_writing.yaml, i.e. SmolLM2 on llama.cpp, its round budget and per-call
token budgets), with the random policy (what a learner starts from) and the `full`
preset (everyone appends often), and prints per episode: rounds, sections,
tokens, characters, seconds, and the length score under each length preset. The
summary gives the relation the default length preset is derived from: characters per
section, per round and per 1000 tokens, and the most characters an episode reached.

    python experiments/bench_length.py                       # 3 random + 1 full episodes
    python experiments/bench_length.py --episodes 6 --policies random
    python experiments/bench_length.py --rag hashing         # skip MiniLM ingestion (retrieval differs)

Timings on a shared, loaded machine are inflated; the character counts are not.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from omegaconf import OmegaConf  # noqa: E402

import algos  # noqa: E402
from agents_llm.judges.base import length_score  # noqa: E402
from agents_llm.judges.config import LENGTH_PRESETS  # noqa: E402
from algos.training.rollout import run_episode  # noqa: E402
from envs.report_writing import ReportWritingEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def build_env(args) -> ReportWritingEnv:
    env_cfg = OmegaConf.to_container(OmegaConf.load(ROOT / "conf" / "env" / "report_writing.yaml").env)
    rag = {"embedding": {"backend": args.rag}}
    judge = {"kind": "reference", "embedding": "hashing" if args.rag == "hashing" else "minilm"}
    return ReportWritingEnv(
        team=env_cfg["team"],
        max_rounds=args.max_rounds or env_cfg["max_rounds"],
        min_rounds_before_terminate=env_cfg["min_rounds_before_terminate"],
        engine=env_cfg["engine"],
        llm={"backend": "llamacpp", "model": args.model},
        judge=judge,
        rag=rag,
        split="train",
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=3, help="episodes per policy")
    parser.add_argument(
        "--policies",
        nargs="+",
        default=["random", "full"],
        help="random, or a preset topology name (solo, star, chain, full, ring)",
    )
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--rag", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--max-rounds", type=int, default=None, help="default: the env config's round budget")
    args = parser.parse_args(argv)

    env = build_env(args)
    spec = algos.EnvSpec.from_env(env)
    rows = []
    print(
        f"{'policy':8s} {'seed':>4s} {'rounds':>6s} {'sections':>8s} {'tokens':>7s} "
        f"{'chars':>6s} {'secs':>6s}  " + "  ".join(f"len[{p}]" for p in LENGTH_PRESETS)
    )
    for policy in args.policies:
        algo = (
            algos.build("random", spec, {}, seed=0)
            if policy == "random"
            else algos.build("preset", spec, {"topology": policy}, seed=0)
        )
        for seed in range(args.episodes):
            started = time.perf_counter()
            _, stats = run_episode(env, algo, spec, explore=False, seed=seed)
            secs = time.perf_counter() - started
            chars = env.report.chars
            row = {
                "policy": policy,
                "seed": seed,
                "rounds": env.round,
                "sections": len(env.report.sections),
                "tokens": env.ledger.total.total,
                "chars": chars,
                "secs": secs,
            }
            rows.append(row)
            scores = "  ".join(f"{length_score(chars, *LENGTH_PRESETS[p]):>{len(p) + 5}.3f}" for p in LENGTH_PRESETS)
            print(
                f"{policy:8s} {seed:4d} {row['rounds']:6d} {row['sections']:8d} "
                f"{row['tokens']:7d} {chars:6d} {secs:6.0f}  {scores}",
                flush=True,
            )
    with_text = [r for r in rows if r["sections"]]
    if not with_text:
        print("no episode wrote anything")
        return 1
    per_section = [r["chars"] / r["sections"] for r in with_text]
    print("\nrelation (episodes that wrote something):")
    print(
        f"  characters per section: median {statistics.median(per_section):.0f} "
        f"(min {min(per_section):.0f}, max {max(per_section):.0f})"
    )
    print(f"  characters per round: median {statistics.median(r['chars'] / r['rounds'] for r in rows):.0f}")
    print(
        f"  characters per 1000 tokens: median "
        f"{statistics.median(1000 * r['chars'] / max(r['tokens'], 1) for r in rows):.0f}"
    )
    print(f"  tokens per round: median {statistics.median(r['tokens'] / r['rounds'] for r in rows):.0f}")
    print(f"  most characters in an episode: {max(r['chars'] for r in rows)}; round budget {env.max_rounds}")
    for preset, (target, width) in LENGTH_PRESETS.items():
        values = [length_score(r["chars"], target, width) for r in rows]
        print(
            f"  length score [{preset}: {target:.0f} +- {width:.0f}]: min {min(values):.3f} max {max(values):.3f} "
            f"spread {max(values) - min(values):.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
