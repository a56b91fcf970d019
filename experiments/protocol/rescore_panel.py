#!/usr/bin/env python
"""A stored LLM-team panel judged again by today's judge.

A panel (``experiments/protocol/validate_proxy.py validate.out=<folder>``) keeps every episode's trace,
and a trace keeps the final report as the env's judge read it (``report_state``: sections with
the chunks they cite). When the judge changes, its figures are stale; playing the panel again
costs hours. This reads each row's trace, scores the report with the judge of ``env=report_writing``
(or the overrides given) and writes ``panel_rescored.csv`` beside ``panel.csv``: the same rows,
``llm_score`` the new judge's, ``llm_score_recorded`` the one the panel stored. The proxy columns
stay (``validate.replay_proxy=true`` plays the proxy again). Then:

    python experiments/protocol/rescore_panel.py PANEL
    python experiments/protocol/comm_sensitivity.py PANEL --panel panel_rescored.csv
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def episode_trace(panel: Path, row: dict) -> Path:
    """The trace of `row`'s episode: under episodes/<policy>/<task>/, the one of the row's seed."""
    folder = panel / "episodes" / row["policy"].replace(":", "_") / row["task"]
    for path in sorted(folder.glob("*/trace.json")):
        episode = json.loads(path.read_text(encoding="utf-8")).get("episode", {})
        if str(episode.get("seed")) == str(row["seed"]):
            return path
    raise FileNotFoundError(
        f"{folder}: no trace.json of seed {row['seed']} for the panel row {row['policy']}/{row['task']}"
    )


def rescore(panel: Path, overrides: list[str]) -> Path:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from agents_llm.judges import make_judge
    from agents_llm.report_state import ReportState
    from experiments.protocol.comm_sensitivity import read_panel
    from experiments.run_config import register_configs

    register_configs()
    with initialize_config_dir(str(ROOT / "conf"), version_base="1.3"):
        judge_cfg = OmegaConf.to_container(compose(config_name="config", overrides=overrides).env.judge, resolve=True)
    judge = make_judge(judge_cfg)
    rows = read_panel(panel)
    out_rows = []
    for row in rows:
        trace = json.loads(episode_trace(panel, row).read_text(encoding="utf-8"))
        state = trace.get("report_state")
        if state is None:
            raise ValueError(f"{row['policy']}/{row['task']}: the trace records no report_state to judge")
        score = asyncio.run(judge.score(ReportState.from_dict(state))).score
        out_rows.append(dict(row, llm_score=score, llm_score_recorded=row["llm_score"]))
        print(f"  {row['policy']:<22} {row['task']:<20} {float(row['llm_score']):.3f} -> {score:.3f}", flush=True)
    target = panel / "panel_rescored.csv"
    with open(target, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*rows[0].keys(), "llm_score_recorded"])
        writer.writeheader()
        writer.writerows(out_rows)
    return target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("panel", type=Path, help="a validate_proxy.py output folder")
    ap.add_argument("overrides", nargs="*", default=["env=report_writing"], help="train.py overrides naming the judge")
    args = ap.parse_args()
    try:
        print(f"wrote {rescore(args.panel, args.overrides)}")
    except (FileNotFoundError, ValueError) as e:
        print(f"rescore_panel.py: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
