"""Compare several policies on the same held-out episodes: one table, as JSON and Markdown.

Used by ``experiments/evaluate.py`` when ``eval.compare`` lists policies:

    python experiments/evaluate.py env=report_writing env.max_rounds=8 \\
        'eval.compare=[handcrafted,preset:solo,preset:star,preset:chain,preset:full,preset:ring,random]'

Every policy plays at the env's round budget (``env.max_rounds``): the handcrafted pipeline
fits its phases to it (``algo.schedule=budget``), so scores and tokens compare at equal budgets.

An entry is an algorithm name, optionally ``name:topology`` for presets or
``name:key=value;key=value`` for any config keys (dotted keys allowed). The entry whose
name is the composed ``algo`` starts from that config, so ``algo=handcrafted
algo.rounds.drafting=4`` shapes the handcrafted row. Every policy plays the same
episodes (same seeds, hence the same tasks) on one env with shared LLM, store and
judge. Writes ``comparison.json`` and ``comparison.md`` beside ``eval.out`` (default:
the Hydra run dir).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from omegaconf import DictConfig, OmegaConf

import algos
from algos.training.rollout import run_episode

COLUMNS = [
    ("report_score", "report score", "{:.3f}"),
    ("length_score", "length score", "{:.3f}"),
    ("tokens", "tokens", "{:.0f}"),
    ("length", "rounds", "{:.1f}"),
    ("chars", "chars", "{:.0f}"),
    ("return", "return", "{:.3f}"),
    ("seconds", "s/episode", "{:.1f}"),
    # the referee's flags per episode (agents_llm.referee): on the report, and on agents' outputs
    ("referee/report_flags", "report flags", "{:.1f}"),
    ("referee/agent_flags", "output flags", "{:.1f}"),
]
REFEREE_PREFIX = "referee/"  # every per-kind flag count goes to the JSON rows too


def parse_entry(entry: str) -> tuple[str, str, dict[str, Any]]:
    """(label, algorithm name, config overrides) of one ``eval.compare`` entry."""
    text = str(entry).strip()
    name, _, rest = text.partition(":")
    name = name.strip()
    if not name:
        raise ValueError(f"eval.compare: empty policy name in entry {entry!r}")
    overrides: dict[str, Any] = {}
    if rest:
        if "=" not in rest:
            overrides["topology"] = rest.strip()
        else:
            for part in rest.split(";"):
                key, eq, value = part.partition("=")
                if not eq or not key.strip():
                    raise ValueError(f"eval.compare entry {entry!r}: expected key=value, got {part!r}")
                overrides[key.strip()] = yaml.safe_load(value)
    algos.get(name)  # unknown names fail here, listing the registered ones
    return text, name, overrides


def algo_config(name: str, overrides: dict[str, Any], composed: Any) -> DictConfig:
    base = composed if composed is not None and composed.get("name") == name else OmegaConf.create({"name": name})
    cfg = OmegaConf.create(OmegaConf.to_container(base, resolve=True))
    for key, value in overrides.items():
        OmegaConf.update(cfg, key, value, force_add=True)
    return cfg


def play_episodes(env, algo, spec, label: str, episodes: int, seed: int) -> list[dict]:
    """One policy's episodes, seeds seed .. seed + episodes - 1, in order on one env: the
    policy's own random stream runs on from one episode to the next."""
    per_episode = []
    for i in range(episodes):
        t0 = time.perf_counter()
        _, st = run_episode(env, algo, spec, explore=False, seed=seed + i)
        task = getattr(getattr(env, "task", None), "id", None)
        per_episode.append(
            {
                "task": task,
                "return": st.ret,
                "length": float(st.length),
                "seconds": time.perf_counter() - t0,
                "chars": float(getattr(getattr(env, "report", None), "chars", 0)),
                **st.infos,
            }
        )
        print(
            f"  {label:<16} episode {i + 1}/{episodes} ({task}): "
            f"score {st.infos.get('report_score', float('nan')):.3f}, rounds {st.length}, "
            f"tokens {st.infos.get('tokens', 0):.0f}",
            flush=True,
        )
    return per_episode


def play_policy_job(job: dict) -> list[dict]:
    """One policy's episodes in a model process of its own (a spawned worker): the env, the
    policy and its seed as the sequential loop builds them, so the rows are the same."""
    from algos.plugins import load_plugins
    from algos.training.env_configs import make_env

    load_plugins(job["plugins"])
    env = make_env(OmegaConf.create(job["env"]), evaluation=True)
    spec = algos.EnvSpec.from_env(env)
    algo = algos.build(job["name"], spec, OmegaConf.create(job["algo"]), seed=job["seed"], device=job["device"])
    return play_episodes(env, algo, spec, job["label"], job["episodes"], job["eval_seed"])


def compare_workers(cfg: DictConfig, policies: int) -> int:
    """Model processes for the comparison: one per policy at a time, two on a 2-core machine when
    the env's LLM is the in-process llama.cpp on one thread (``rollout.auto_workers=false``: one)."""
    from algos.training.runners import model_process_count

    rollout = cfg.get("rollout") or {}
    if not rollout.get("auto_workers", False):
        return 1
    return model_process_count(cfg.env, policies)


def compare_policies(cfg: DictConfig, make_env, out_dir: Path, workers: int | None = None) -> dict:
    """Every entry of ``cfg.eval.compare`` on the same episodes. ``workers`` model processes play
    the policies (None: :func:`compare_workers`); each policy's episodes run in order in one
    process, so the table is the same for any number of workers."""
    entries = [parse_entry(e) for e in cfg.eval.compare]
    env = make_env(cfg.env, evaluation=True)
    spec = algos.EnvSpec.from_env(env)
    configs = [(label, name, algo_config(name, overrides, cfg.get("algo"))) for label, name, overrides in entries]
    workers = compare_workers(cfg, len(entries)) if workers is None else workers
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        print(
            f"{len(entries)} policies on {workers} single-thread model processes "
            "(rollout.auto_workers=false keeps one)",
            flush=True,
        )
        jobs = [
            {
                "label": label,
                "name": name,
                "algo": OmegaConf.to_container(acfg, resolve=True),
                "env": OmegaConf.to_container(cfg.env, resolve=True),
                "plugins": list(cfg.get("plugins") or []),
                "seed": cfg.seed,
                "device": cfg.device,
                "episodes": cfg.eval.episodes,
                "eval_seed": cfg.eval.seed,
            }
            for label, name, acfg in configs
        ]
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            played = list(pool.map(play_policy_job, jobs))
    else:
        played = [
            play_episodes(
                env,
                algos.build(name, spec, acfg, seed=cfg.seed, device=cfg.device),
                spec,
                label,
                cfg.eval.episodes,
                cfg.eval.seed,
            )
            for label, name, acfg in configs
        ]
    rows = []
    for (label, name, acfg), per_episode in zip(configs, played):
        keys = [key for key, _, _ in COLUMNS] + sorted(
            {k for e in per_episode for k in e if k.startswith(REFEREE_PREFIX)} - {k for k, _, _ in COLUMNS}
        )
        metrics = {
            key: float(np.mean([e[key] for e in per_episode if key in e]))
            for key in keys
            if any(key in e for e in per_episode)
        }
        rows.append(
            {
                "policy": label,
                "algo": name,
                "config": OmegaConf.to_container(acfg),
                "metrics": metrics,
                "per_episode": per_episode,
            }
        )
    result = {
        "env": cfg.env.name,
        "split": (cfg.env.get("eval_overrides") or {}).get("split"),
        "episodes": cfg.eval.episodes,
        "seed": cfg.eval.seed,
        "rows": rows,
        "max_rounds": getattr(env, "max_rounds", None),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "comparison.json", out_dir / "comparison.md"
    _write(json_path, json.dumps(result, indent=2, default=str))
    _write(md_path, markdown_table(result))
    print(markdown_table(result))
    print(f"  comparison: {json_path}\n              {md_path}")
    result["paths"] = {"json": str(json_path), "markdown": str(md_path)}
    return result


def markdown_table(result: dict) -> str:
    head = ["policy"] + [title for _, title, _ in COLUMNS]
    budget = f" at a budget of {result['max_rounds']} rounds" if result.get("max_rounds") else ""
    lines = [
        f"Policies on {result['env']} ({result.get('split') or 'default'} split){budget}, "
        f"{result['episodes']} episode(s) each, same seeds; rounds and tokens are what each policy spent.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for row in result["rows"]:
        cells = [row["policy"]]
        for key, _, fmt in COLUMNS:
            v = row["metrics"].get(key)
            cells.append(fmt.format(v) if v is not None and not math.isnan(v) else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
