#!/usr/bin/env python
"""Greedy evaluation of a checkpoint or a fixed policy on the env's holdout settings.

    python experiments/evaluate.py checkpoint=outputs/<run dir>            # its checkpoints/last.pt
    python experiments/evaluate.py checkpoint=outputs/<run dir>/checkpoints/final.pt eval.episodes=50
    python experiments/evaluate.py algo=random env=two_step                # a fixed policy
    python experiments/evaluate.py algo=random eval.out=random.json
    python experiments/evaluate.py env=report_writing 'eval.compare=[handcrafted,preset:ring,random]'

With a checkpoint, the algorithm and env come from the checkpoint's config (its
``plugins`` are imported first); ``env.eval_overrides`` (e.g. the holdout split) are
merged into the env's arguments. Writes a metrics JSON (``eval.out``, default
``<hydra run dir>/metrics.json``) with the mean metrics, the per-agent action
distribution (``act/<agent>/<a>``, ``act/<agent>/top`` = share of the most frequent
action: 1.0 means a collapsed policy) and every episode's return.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# As in train.py: launchers that run each job in a fresh process (submitit) unpickle the
# task, which imports experiments.run_config: let those processes find this checkout too.
os.environ["PYTHONPATH"] = os.pathsep.join(
    dict.fromkeys(p for p in (str(ROOT), *os.environ.get("PYTHONPATH", "").split(os.pathsep)) if p)
)

import hydra  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from hydra.core.hydra_config import HydraConfig  # noqa: E402
from omegaconf import DictConfig, OmegaConf  # noqa: E402

import algos  # noqa: E402
from algos.plugins import PluginError, check_checkpoint_plugins, check_learned_state, load_plugins  # noqa: E402
from algos.training import checkpoint as ckpt  # noqa: E402
from algos.training.loggers import RunLoggers, env_action_names  # noqa: E402
from algos.training.progress import RunProgress, rounds_budget  # noqa: E402
from algos.training.rollout import action_distribution, run_episode  # noqa: E402
from experiments.run_config import refuse_secret_arguments, register_configs  # noqa: E402
import envs  # noqa: E402
from algos.training.env_configs import make_env  # noqa: E402
from algos.training.runners import check_rollout, make_runner, model_processes, vectorized  # noqa: E402
from algos.training.seeding import seed_everything  # noqa: E402


def score_summary(per_episode: list[dict], tasks: list[str] | None) -> dict:
    """IQM with its 95 % stratified bootstrap interval (rliable, as benchmark.py) of the
    report score (the return on envs without one), over (repetitions, tasks): the episode
    with seed s played task s % n (``task_sampling: by_seed``), so n consecutive seeds play
    every task once. Episodes past the last whole repetition count in the means only."""
    from algos.evaluation import interval_estimates

    value = "report_score" if per_episode and "report_score" in per_episode[0] else "return"
    n = len(tasks) if tasks else 1
    by_task: dict[int, list[float]] = {}
    for e in sorted(per_episode, key=lambda e: e["seed"]):  # seed s played tasks[s % n]
        by_task.setdefault(int(e["seed"]) % n, []).append(float(e[value]))
    per_task = {tasks[k]: float(np.mean(v)) for k, v in sorted(by_task.items())} if tasks else {}
    reps = min(len(v) for v in by_task.values()) if len(by_task) == n else 0
    if reps == 0:  # fewer episodes than tasks: the tasks played, once
        matrix = np.array([[v[0] for _, v in sorted(by_task.items())]])
        incomplete = len(per_episode) - matrix.size
    else:
        matrix = np.array([v[:reps] for _, v in sorted(by_task.items())]).T  # (repetitions, tasks)
        incomplete = len(per_episode) - reps * n
    # One repetition: resample the tasks (a stratified bootstrap over one run has no spread).
    over = "repetitions within tasks" if matrix.shape[0] > 1 else "tasks"
    est = interval_estimates({"policy": matrix if matrix.shape[0] > 1 else matrix.T})["policy"]
    return {
        "value": value,
        "iqm": {"point": est.point, "low": est.low, "high": est.high},
        "bootstrap_over": over,
        "repetitions": max(reps, 1),
        "incomplete": incomplete,
        "per_task": per_task,
    }


def default_eval_episodes(env_cfg: DictConfig) -> int:
    """``eval.episodes: null``: one repetition of the held-out tasks on a task env (every task once,
    so the IQM's interval covers whole repetitions), 20 on an env without tasks."""
    from envs.report.tasks import load_tasks

    if "task_sampling" not in env_cfg:
        return 20
    if env_cfg.get("task_id"):
        return 1
    over = env_cfg.get("eval_overrides") or {}
    return len(load_tasks(over.get("tasks", env_cfg.get("tasks")), over.get("split", env_cfg.get("split", "train"))))


def evaluate_run(cfg: DictConfig) -> dict:
    load_plugins(cfg.plugins)
    if cfg.eval.episodes is None:
        env_of_run = (
            OmegaConf.create(ckpt.load(ckpt.resolve_checkpoint(cfg.checkpoint))["config"]["env"])
            if cfg.checkpoint
            else cfg.env
        )
        cfg = OmegaConf.merge(cfg, {"eval": {"episodes": default_eval_episodes(env_of_run)}})
    if "task_sampling" in cfg.env:  # a task env: n consecutive seeds play each of its n tasks once
        cfg = OmegaConf.merge(cfg, {"env": {"task_sampling": "by_seed"}})
    if cfg.eval.compare and not cfg.checkpoint:  # several fixed policies, one table
        from experiments.compare_policies import compare_policies

        out_dir = Path(cfg.eval.out).parent if cfg.eval.out else Path(HydraConfig.get().runtime.output_dir)
        result = compare_policies(cfg, make_env, out_dir)
        return {**result, "metrics": result["rows"][0]["metrics"]}
    source = {"kind": "fixed_policy"}
    state = None
    if cfg.checkpoint:
        path = ckpt.resolve_checkpoint(cfg.checkpoint)
        state = ckpt.load(path)
        trained = OmegaConf.create(state["config"])
        check_checkpoint_plugins(state, cfg.plugins, source=f"checkpoint {path}")  # imports nothing
        algo_cfg, env_cfg = trained.algo, trained.env
        source = {
            "kind": "checkpoint",
            "path": str(path),
            "episode": state["progress"]["episode"],
            "t_env": state["progress"]["t_env"],
        }
    else:
        algo_cfg, env_cfg = cfg.algo, cfg.env
    if "task_sampling" in env_cfg:  # a checkpoint's env: as above
        env_cfg = OmegaConf.merge(env_cfg, {"task_sampling": "by_seed"})
    torch.set_num_threads(cfg.torch_threads)
    seed_everything(cfg.seed)
    out_dir = Path(cfg.eval.out).parent if cfg.eval.out else Path(HydraConfig.get().runtime.output_dir)
    pool = envs.ResourcePool()  # the run's envs share backend, store and judge
    env = make_env(env_cfg, evaluation=True, output_dir=out_dir / "episodes", pool=pool)
    spec = algos.EnvSpec.from_env(env)
    algo = algos.build(algo_cfg.name, spec, algo_cfg, seed=cfg.seed, device=cfg.device)
    if state is not None:
        check_learned_state(algo, state["algo"], when="evaluating")
        algo.load_state_dict(state["algo"])
    elif algo.capabilities.learns:
        print(f"warning: evaluating an untrained {algo_cfg.name} (no checkpoint=...)", file=sys.stderr)

    t0 = time.perf_counter()
    per_episode, counts, infos = [], np.zeros((spec.n_agents, spec.n_actions), np.int64), []
    auto = model_processes(cfg.rollout, env_cfg, cfg.eval.episodes)
    if auto is not None:
        for key, value in auto.items():
            OmegaConf.update(cfg, f"rollout.{key}", value)
        print(
            f"{cfg.eval.episodes} episodes on the in-process model: {auto['workers']} single-thread model processes "
            "(rollout.backend=ray); rollout.auto_workers=false keeps one",
            file=sys.stderr,
        )
    check_rollout(cfg.rollout)
    bar = RunProgress(
        cfg.logger.progress,
        total_episodes=cfg.eval.episodes,
        desc=f"eval {algo_cfg.name}",
        rounds_per_episode=rounds_budget(env),
        main_kind="eval",
    )
    if vectorized(cfg.rollout):  # rollout.num_envs episodes in flight (or on Ray workers)
        import asyncio

        with asyncio.Runner() as loop:
            runner = make_runner(
                cfg,
                algo,
                spec,
                env_cfg,
                evaluation=True,
                output_dir=out_dir / "episodes",
                loop=loop,
                algo_cfg=algo_cfg,
                pool=pool,
            )
            try:
                done = runner.run_episodes([(i, cfg.eval.seed + i) for i in range(cfg.eval.episodes)], explore=False)
            finally:
                runner.close()
        for f in done.failures:
            print(f"warning: evaluation episode {f.index} dropped: {f.reason}", file=sys.stderr)
        finished = [(r.episode, r.stats, r.seed) for r in done.results]
    else:

        def sequential():
            for i in range(cfg.eval.episodes):
                bar.begin_episode("eval", i, cfg.eval.episodes)
                episode, st = run_episode(env, algo, spec, explore=False, seed=cfg.eval.seed + i, on_round=bar.on_round)
                bar.end_episode({"return": st.ret})
                yield episode, st, cfg.eval.seed + i

        finished = sequential()
    for episode, st, seed in finished:
        per_episode.append(
            {"seed": seed, "return": st.ret, "length": st.length, "actions": episode.actions.tolist(), **st.infos}
        )
        counts += st.action_counts
        infos.append(st.infos)
    returns = np.array([e["return"] for e in per_episode])
    metrics = {
        "return": float(returns.mean()),
        "return_std": float(returns.std()),
        "length": float(np.mean([e["length"] for e in per_episode])),
    }
    for k in sorted(set().union(*infos)):
        metrics[k] = float(np.mean([i[k] for i in infos if k in i]))
    metrics.update(action_distribution(counts, spec.agents))
    summary = score_summary(per_episode, [getattr(t, "id", str(t)) for t in getattr(env, "tasks", [])] or None)
    bar.close()
    if cfg.logger.wandb and cfg.logger.wandb_mode != "disabled":  # a W&B run of job type eval, in the run's group
        run_cfg = OmegaConf.create(
            {
                **OmegaConf.to_container(cfg, resolve=True),
                "algo": OmegaConf.to_container(algo_cfg, resolve=True),
                "env": OmegaConf.to_container(env_cfg, resolve=True),
            }
        )
        loggers = RunLoggers(
            run_cfg,
            out_dir,
            job_type="eval",
            kinds=("eval",),
            overrides=(state or {}).get("overrides", []),
            action_names=env_action_names(env, spec.n_actions),
            trained_config=(state or {}).get("config"),
        )
        loggers.log("eval", metrics, int(source.get("episode", 0)))
        loggers.close()
    result = {
        "algo": algo_cfg.name,
        "env": env_cfg.name,
        "source": source,
        "episodes": cfg.eval.episodes,
        "seconds": time.perf_counter() - t0,
        "metrics": metrics,
        "summary": summary,
        "per_episode": per_episode,
    }
    out = Path(cfg.eval.out) if cfg.eval.out else Path(HydraConfig.get().runtime.output_dir) / "metrics.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(result, indent=2))
    tmp.replace(out)
    print(
        f"{algo_cfg.name} on {env_cfg.name}: return (explore=False) {metrics['return']:.3f} +- {metrics['return_std']:.3f} over {cfg.eval.episodes} episodes"
    )
    spent = [
        f"{metrics[k]:.1f} {name}"
        for k, name in (
            ("length", "rounds"),
            ("tokens", "tokens"),
            ("referee/report_flags", "report flags"),
            ("referee/agent_flags", "output flags"),
        )
        if k in metrics
    ]
    if spent:
        print(f"  per episode: {', '.join(spent)}")
    iqm = summary["iqm"]
    print(
        f"  {summary['value']}: IQM {iqm['point']:.3f} [{iqm['low']:.3f}, {iqm['high']:.3f}] (95 % bootstrap over "
        f"{summary['bootstrap_over']}) from "
        f"{summary['repetitions']} repetition(s) x {len(summary['per_task'])} task(s)"
        + (
            f"; {summary['incomplete']} episode(s) of an incomplete repetition left out"
            if summary["incomplete"]
            else ""
        )
    )
    if len(summary["per_task"]) > 1:
        print("  per task: " + ", ".join(f"{t} {v:.3f}" for t, v in summary["per_task"].items()))
    print(f"  metrics: {out}")
    return result


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> float:
    try:
        return evaluate_run(cfg)["metrics"]["return"]
    except (ckpt.CheckpointError, FileNotFoundError, PluginError) as e:  # a checkpoint missing, damaged or foreign
        print(f"evaluate.py: {e}", file=sys.stderr, flush=True)
        sys.exit(2)


register_configs()

if __name__ == "__main__":
    from experiments.preflight import preload_or_refuse, refuse_bad_settings

    refuse_secret_arguments(sys.argv)  # before Hydra writes or echoes the line
    preload_or_refuse(sys.argv, "evaluate.py")
    refuse_bad_settings(sys.argv, "evaluate.py")  # one line, exit 2, nothing written
    main()
