#!/usr/bin/env python
"""How long are the reports the configured team writes in the round budget?

Runs real episodes of the report env as `train.py` composes it (Hydra config: by default
conf/env/report_writing.yaml, i.e. SmolLM2 on llama.cpp with its sampling settings, the
reference judge, MiniLM retrieval, the 4-round budget and its per-call token budgets;
extra overrides after `--`), with the random policy (what a learner starts from) and the
`full` preset (everyone appends often), and prints per episode: rounds, sections, tokens,
raw characters (`ReportState.chars`), supported characters (what the reward's length term
measures under `judge.length_measure=supported`: the characters of distinct, grounded prose
sentences, `ReferenceJudge.supported_chars`, measured on the episode's own reward tracker:
its grounder, or its judge), seconds, and the length score under each length preset
computed on the configured measure. The summary gives the relation the default length
preset is derived from: measured characters per section, per round and per 1000 tokens,
the most an episode reached, the supported/raw ratio, the spread of the length score per
preset, and the preset the derivation rule gives (target = the longest report, rounded to
100; width = half of it).

    python experiments/protocol/bench_length.py                       # 3 random + 3 full episodes
    python experiments/protocol/bench_length.py --episodes 6 --policies random
    python experiments/protocol/bench_length.py --rag hashing         # skip MiniLM ingestion (retrieval differs)
    python experiments/protocol/bench_length.py -- judge.length_measure=chars llm.model=qwen2.5-coder-0.5b

Timings on a shared, loaded machine are inflated; the character counts are not.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]

from agents_llm.judges.base import length_score  # noqa: E402
from agents_llm.judges.config import LENGTH_PRESETS, length_params  # noqa: E402


def compose(overrides: list[str]):
    """The run config `train.py` composes (algo=random: the bench brings its own policies)."""
    from experiments.run_config import compose_run_config

    return compose_run_config(["algo=random", *overrides])


def overrides_of(args) -> list[str]:
    out = [f"env.split={args.split}"]
    if args.model:
        out.append(f"llm.model={args.model}")
    if args.rag:
        out.append(f"rag.embedding.backend={args.rag}")
        out.append(f"judge.embedding={'hashing' if args.rag == 'hashing' else 'minilm'}")
    if args.max_rounds:
        out.append(f"env.max_rounds={args.max_rounds}")
    return out + list(args.overrides)


def report_lengths(report, tracker) -> dict[str, Any]:
    """A report's raw characters, supported characters and what the tracker's length term measures.

    Supported characters are measured the way `RewardTracker.after_append` measures them: by
    the tracker's grounder (the referee's reference judge on the run's embedding) when it has
    one, else by its judge (a reference judge). `supported` is None when neither can (an LLM
    judge without a grounder, only possible with length_measure=chars). `measured` is the
    figure the length score is computed on (`length_measure`: supported or raw characters).
    """
    grounder = tracker.grounder if tracker.grounder is not None else tracker.judge
    supported: Optional[float] = None
    if hasattr(grounder, "supported_chars"):
        supported = 0.0 if report.is_empty or not report.chars else float(grounder.supported_chars(report))
    raw = int(report.chars)
    if tracker.length_measure == "supported" and tracker.w_length != 0.0:
        if supported is None:
            raise ValueError("length_measure=supported but the tracker has no grounder or reference judge")
        measured = supported
    else:
        measured = float(raw)
    return {"chars": raw, "supported": supported, "measured": measured, "measure": tracker.length_measure}


def measure(env, policy: str, seed: int, secs: float) -> dict[str, Any]:
    """One finished episode's row: sizes, lengths (`report_lengths`), the length score per preset.

    `reward_length_chars` is what the reward's last length term measured (the tracker's last
    step; 0 before any append), which the final report's `measured` must equal.
    """
    tracker = env.tracker
    row: dict[str, Any] = {
        "policy": policy,
        "seed": seed,
        "rounds": int(env.round),
        "sections": len(env.report.sections),
        "tokens": int(env.ledger.total.total),
        "secs": secs,
        **report_lengths(env.report, tracker),
    }
    row["reward_length_chars"] = float(tracker.history[-1].length_chars) if tracker.history else 0.0
    row["length_score"] = float(tracker.length_score(row["measured"]))  # under the run's own target and width
    row["scores"] = {p: length_score(row["measured"], *LENGTH_PRESETS[p]) for p in LENGTH_PRESETS}
    return row


def derived_preset(longest: float) -> tuple[float, float]:
    """The derivation rule of the default preset: target = the longest report, rounded to 100; width = half."""
    target = max(100.0, round(longest / 100.0) * 100.0)
    return target, target / 2.0


def summarize(rows: list[dict[str, Any]], max_rounds: int) -> list[str]:
    """The relation the length preset is derived from, on the measure the reward uses (`measured`)."""
    with_text = [r for r in rows if r["sections"]]
    if not with_text:
        return ["no episode wrote anything"]
    measure_name = rows[0]["measure"]
    unit = "supported chars" if measure_name == "supported" else "chars"

    def med(values) -> float:
        return statistics.median(list(values))

    per_section = [r["measured"] / r["sections"] for r in with_text]
    longest = max(r["measured"] for r in rows)
    lines = [f"relation (length_measure={measure_name}; per section: the {len(with_text)} episodes that wrote):"]
    lines.append(
        f"  {unit} per section: median {med(per_section):.0f} (min {min(per_section):.0f}, max {max(per_section):.0f})"
    )
    lines.append(f"  {unit} per round: median {med(r['measured'] / max(r['rounds'], 1) for r in rows):.0f}")
    lines.append(
        f"  {unit} per 1000 tokens: median {med(1000 * r['measured'] / max(r['tokens'], 1) for r in rows):.0f}"
    )
    lines.append(f"  tokens per round: median {med(r['tokens'] / max(r['rounds'], 1) for r in rows):.0f}")
    lines.append(
        f"  most {unit} in an episode: {longest:.0f} (most raw chars: {max(r['chars'] for r in rows)}); "
        f"round budget {max_rounds}"
    )
    measured = [r for r in with_text if r["supported"] is not None and r["chars"]]
    if measured:
        ratios = [r["supported"] / r["chars"] for r in measured]
        total = sum(r["supported"] for r in measured) / sum(r["chars"] for r in measured)
        lines.append(
            f"  supported / raw chars: median {med(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f}; "
            f"pooled {total:.2f})"
        )
    for preset, (target, width) in LENGTH_PRESETS.items():
        values = [r["scores"][preset] for r in rows]
        lines.append(
            f"  length score [{preset}: {target:.0f} +- {width:.0f}]: min {min(values):.3f} max {max(values):.3f} "
            f"spread {max(values) - min(values):.3f}"
        )
    target, width = derived_preset(longest)
    values = [length_score(r["measured"], target, width) for r in rows]
    lines.append(
        f"  derivation rule (target = longest, rounded; width = half): {target:.0f} +- {width:.0f}, "
        f"length score min {min(values):.3f} max {max(values):.3f} spread {max(values) - min(values):.3f}"
    )
    return lines


def name(value: Any) -> Any:
    return getattr(value, "value", value)  # an enum member's value


def header() -> str:
    return (
        f"{'policy':8s} {'seed':>4s} {'rounds':>6s} {'sections':>8s} {'tokens':>7s} {'chars':>6s} "
        f"{'supp':>6s} {'secs':>6s}  " + "  ".join(f"len[{p}]" for p in LENGTH_PRESETS)
    )


def format_row(row: dict[str, Any]) -> str:
    supported = "-" if row["supported"] is None else f"{row['supported']:.0f}"
    scores = "  ".join(f"{row['scores'][p]:>{len(p) + 5}.3f}" for p in LENGTH_PRESETS)
    return (
        f"{row['policy']:8s} {row['seed']:4d} {row['rounds']:6d} {row['sections']:8d} {row['tokens']:7d} "
        f"{row['chars']:6d} {supported:>6s} {row['secs']:6.0f}  {scores}"
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
    parser.add_argument("--model", default=None, help="llm.model (default: the config's, smollm2-135m)")
    parser.add_argument(
        "--rag", default=None, choices=["minilm", "hashing"], help="retrieval and judge embedding (default: minilm)"
    )
    parser.add_argument("--max-rounds", type=int, default=None, help="default: the env config's round budget")
    parser.add_argument("--split", default="train", help="task split the episodes draw from")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides after --, e.g. judge.length_measure=chars")
    args = parser.parse_args(argv)

    import algos
    from algos.training.env_configs import make_env
    from algos.training.rollout import run_episode

    cfg = compose(overrides_of(args))
    env = make_env(cfg.env)
    spec = algos.EnvSpec.from_env(env)
    target, width = length_params(cfg.judge)
    print(
        f"model {cfg.llm.get('model')}, judge {name(cfg.judge.kind)} ({name(cfg.judge.get('embedding'))}), "
        f"rag {name(cfg.rag.embedding.backend)}, length_measure={cfg.judge.length_measure}, run's length score "
        f"{target:.0f} +- {width:.0f}, {env.max_rounds} rounds, split {args.split}"
    )
    print("columns: chars = raw characters; supp = supported characters; len[preset] on the configured measure\n")
    rows = []
    print(header())
    for policy in args.policies:
        algo = (
            algos.build("random", spec, {}, seed=0)
            if policy == "random"
            else algos.build("preset", spec, {"topology": policy}, seed=0)
        )
        for seed in range(args.episodes):
            started = time.perf_counter()
            run_episode(env, algo, spec, explore=False, seed=seed)
            row = measure(env, policy, seed, time.perf_counter() - started)
            if abs(row["reward_length_chars"] - row["measured"]) > 1e-6 and env.tracker.history:
                print(f"  note: the reward's last length term measured {row['reward_length_chars']:.1f}")
            rows.append(row)
            print(format_row(row), flush=True)
    lines = summarize(rows, env.max_rounds)
    print()
    print("\n".join(lines))
    return 0 if any(r["sections"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
