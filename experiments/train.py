#!/usr/bin/env python
"""Train any registered algorithm on any registered env.

    python experiments/train.py algo=qmix                      # defaults: conf/config.yaml
    python experiments/train.py algo=vdn env=one_step_3x3 seed=3 train.episodes=1000
    python experiments/train.py -m algo=qmix,vdn seed=0,1      # sweep (basic launcher)
    python experiments/train.py -m algo=qmix,vdn seed=0,1 hydra/launcher=joblib
    python experiments/train.py resume=outputs/2026-01-01/12-00-00_ab12cd   # continue a run
    python experiments/train.py plugins=[my_pkg.my_algo] algo=my_algo     # your own algorithm

A run dir holds: config.yaml (resolved) and .hydra/, train.csv and eval.csv,
tensorboard/ and wandb/ (offline) when enabled, checkpoints/{last,final,ep_*}.pt.
Ctrl-C writes checkpoints/last.pt and exits with status 130; `resume=<run dir>`
continues from it with the same counters, epsilon, replay buffer and RNG states. An
interrupt inside an episode drops that episode: the checkpoint holds the RNG states of
its start, so the resumed run replays it and ends with the same parameters as an
uninterrupted one.

Settings are range-checked before anything is built (exit 2, naming the key); a URL
with credentials anywhere in the config is refused before Hydra writes a file. Each
episode's LLM calls and failed calls are logged (`llm_calls`, `llm_errors`); when at
least `train.llm_error_share_stop` of one episode's calls failed, training stops
(exit 1) with the cause, keeping the last checkpoint.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[1]
# Launchers that run each job in a fresh process (submitit: SLURM or local) unpickle the
# task, which imports experiments.run_config: let those processes find this checkout too.
os.environ["PYTHONPATH"] = os.pathsep.join(
    dict.fromkeys(p for p in (str(ROOT), *os.environ.get("PYTHONPATH", "").split(os.pathsep)) if p)
)

import hydra  # noqa: E402
import torch  # noqa: E402
from hydra.core.hydra_config import HydraConfig  # noqa: E402
from omegaconf import DictConfig, OmegaConf  # noqa: E402

import algos  # noqa: E402
import envs  # noqa: E402
from agents_llm.redaction import redact  # noqa: E402
from algos.plugins import (  # noqa: E402
    PluginError,
    check_checkpoint_plugins,
    check_learned_state,
    load_plugins,
    plugin_records,
    preload_plugins,
)
from algos.training import checkpoint as ckpt  # noqa: E402
from algos.training import resume  # noqa: E402
from algos.training.env_configs import make_env  # noqa: E402
from algos.training.interrupts import InterruptGuard  # noqa: E402
from algos.training.llm_failures import LLMFailureStop, check_llm_failures  # noqa: E402
from algos.training.loggers import RunLoggers, env_action_names, hydra_task_overrides  # noqa: E402
from algos.training.progress import RunProgress, rounds_budget  # noqa: E402
from algos.training.runners import TrainingRunners, check_rollout, episodes_per_sync, evaluate_greedy  # noqa: E402
from algos.training.schedule import EpisodeSchedule  # noqa: E402
from algos.training.seeding import seed_everything  # noqa: E402
from algos.training.train_log import TrainLogWindow  # noqa: E402
from experiments.run_config import (  # noqa: E402
    ConfigValueError,
    RolloutConfig,
    refuse_secret_arguments,
    register_configs,
    validate_run_config,
)

__all__ = ["train", "make_env", "preload_plugins"]  # make_env: the benchmarks build their envs as train does


def init_learner(algo, cfg: DictConfig) -> None:
    """Load ``cfg.init``'s learner state into a new run's learner (fine-tuning): the same algorithm
    with the same spaces, or a ConfigValueError naming what differs."""
    path = ckpt.resolve_checkpoint(cfg.init)
    state = ckpt.load(path)
    if state["algo_name"] != cfg.algo.name:
        raise ConfigValueError(
            f"init={cfg.init}: the checkpoint holds a {state['algo_name']} learner, the run is algo={cfg.algo.name}"
        )
    check_learned_state(algo, state["algo"], when=f"initialising from {path}")
    try:
        algo.load_state_dict(state["algo"])
    except (RuntimeError, KeyError, ValueError) as e:  # torch names the tensor whose shape differs
        raise ConfigValueError(
            f"init={cfg.init}: its learner (trained on {state['config']['env']['name']}) does not fit this run's "
            f"env {cfg.env.name}: {str(e).splitlines()[0]}"
        ) from None
    print(f"Starting {cfg.algo.name} from the learner of {path} (trained on {state['config']['env']['name']})")


def train(cfg: DictConfig, run_dir: Optional[Path] = None) -> dict[str, float]:
    """Train one run in ``run_dir`` (default: the Hydra job's output dir)."""
    # -- the run's config: checked, seeded, written -----------------------------------
    load_plugins(cfg.plugins)
    run_dir = Path(run_dir) if run_dir is not None else Path(HydraConfig.get().runtime.output_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    saved = None
    if cfg.resume:
        saved = ckpt.load(cfg.resume)
        cfg = resume.resume_config(
            cfg, saved["config"], hydra_task_overrides(), default_rollout=OmegaConf.structured(RolloutConfig)
        )
        check_checkpoint_plugins(saved, cfg.plugins, source=f"checkpoint {cfg.resume}")  # imports nothing
    validate_run_config(cfg)
    check_rollout(cfg.rollout)
    torch.set_num_threads(cfg.torch_threads)
    seed_everything(cfg.seed)
    container = redact(OmegaConf.to_container(cfg, resolve=True))  # what is written: config.yaml, checkpoints, W&B
    OmegaConf.save(OmegaConf.create(container), run_dir / "config.yaml")
    overrides = (saved or {}).get("overrides", hydra_task_overrides())

    # -- envs, the algorithm, its runners; the state to continue from ---------------
    try:
        pool = envs.ResourcePool()  # the run's envs share backend, store and judge of equal configs
        env = make_env(cfg.env, output_dir=run_dir / "episodes", pool=pool)
        eval_env = make_env(cfg.env, evaluation=True, output_dir=run_dir / "eval_episodes", pool=pool)
    except ValueError as e:  # an env setting out of range (the env names it), or a backend refusing its config
        raise ConfigValueError(f"env: {e}") from None
    spec = algos.EnvSpec.from_env(env)
    algo = algos.build(cfg.algo.name, spec, cfg.algo, seed=cfg.seed, device=cfg.device)
    runners = TrainingRunners.build(cfg, algo, spec, run_dir, pool)
    try:
        algo.check_budget(cfg.train.episodes)  # e.g. no gradient update in this budget: fail before any episode
    except ValueError as e:
        raise ConfigValueError(str(e)) from None
    check_learned_state(algo, algo.state_dict(), when="training")  # before any episode is spent
    progress = resume.restore(algo, saved)
    if cfg.init and saved is None:
        init_learner(algo, cfg)
    if saved is not None:
        print(
            f"Resuming {cfg.algo.name} on {cfg.env.name} from episode {progress.episode} (t_env {progress.t_env}) "
            f"in {run_dir}",
            flush=True,
        )
    loggers = RunLoggers(
        cfg,
        run_dir,
        wandb_id=progress.wandb_id,
        job_type="train",
        overrides=overrides,
        action_names=env_action_names(env, spec.n_actions),
        tables_every=cfg.train.eval_every or cfg.train.episodes,
        container=container,
        resume_episode=progress.episode if saved is not None else None,
    )

    def payload(episode: int, interrupted: bool = False) -> dict[str, Any]:
        return ckpt.training_payload(
            algo_name=cfg.algo.name,
            algo_state=algo.state_dict(),
            episode=episode,
            t_env=t_env,
            config=container,
            wandb_id=loggers.wandb_id,
            overrides=overrides,
            plugins=plugin_records(cfg.plugins),
            interrupted=interrupted,
        )

    def stop(*, checkpoint: str = ckpt.LAST, interrupted: bool = False, rewind: bool = False) -> Path:
        """Close the run and write its checkpoint. ``rewind``: an episode in progress was not
        learnt from; the RNGs go back to its start so that a resume replays it."""
        bar.close()
        if runners is not None:
            runners.close()
        if rewind and schedule.start_rng is not None:
            schedule.start_rng.restore(algo)
        data = payload(completed, interrupted=interrupted)
        path = ckpt.save_atomic(data, run_dir / ckpt.CKPT_DIR / checkpoint)
        if checkpoint != ckpt.LAST:  # last.pt is always the newest
            ckpt.save_atomic(data, run_dir / ckpt.CKPT_DIR / ckpt.LAST)
        loggers.close()
        return path

    # -- the loop: play an episode, learn from it, log, evaluate, checkpoint ----------
    total, t_env, completed = cfg.train.episodes, progress.t_env, progress.episode
    bar = RunProgress(
        cfg.logger.progress,
        total_episodes=total,
        initial=completed,
        desc=f"{cfg.algo.name}@{cfg.env.name}",
        rounds_per_episode=rounds_budget(env),
    )
    schedule = EpisodeSchedule(
        env=env,
        algo=algo,
        spec=spec,
        runner=runners.train if runners else None,
        run_seed=cfg.seed,
        start=completed,
        total=total,
        max_rounds=cfg.train.max_rounds,
        block=episodes_per_sync(cfg.rollout),
        progress=bar,
    )
    resume_hint = f"Resume with: python experiments/train.py resume={run_dir}"
    guard = InterruptGuard()
    guard.install()
    window = TrainLogWindow()
    last_eval: dict[str, float] = {}
    failed = 0
    t_start = time.perf_counter()
    try:
        for item in schedule:
            t0 = time.perf_counter() - item.seconds
            if (
                item.episode is None or item.stats is None
            ):  # dropped by the concurrent runner: logged there, counted here
                failed += 1
                completed = item.index + 1
                bar.end_episode()
                bar.write(f"episode {item.index} dropped: {item.failure}")
                continue
            stats = item.stats
            check_llm_failures(stats.failures, episode=item.index, stop_share=cfg.train.llm_error_share_stop)
            # From here to the end of the iteration an interrupt waits: the bookkeeping below
            # (update, logs, evaluation, checkpoint) either all happens or none of it.
            guard.enter()
            algo.observe(item.episode)
            t1 = time.perf_counter()
            update = algo.update()
            t_env += len(item.episode)
            completed = item.index + 1
            schedule.episode_done()
            window.add(stats, update, episode_s=time.perf_counter() - t0, update_s=time.perf_counter() - t1)
            bar.end_episode({"return": stats.ret, **{k: stats.infos[k] for k in ("report_score",) if k in stats.infos}})
            if completed % cfg.train.log_every == 0 or completed == total:
                loggers.log(
                    "train",
                    window.row(
                        t_env=t_env,
                        wall_s=time.perf_counter() - t_start,
                        agents=spec.agents,
                        algo_metrics=algo.metrics(),
                        failed_episodes=failed,
                        update_metric_names=algo.update_metric_names,
                    ),
                    completed,
                )
                window.clear()
            if (cfg.train.eval_every and completed % cfg.train.eval_every == 0) or completed == total:
                last_eval = evaluate_greedy(
                    runners, eval_env, algo, spec, cfg.train.eval_episodes, seed=cfg.eval.seed, progress=bar
                )
                loggers.log("eval", {"t_env": float(t_env), **last_eval}, completed)
            if cfg.train.checkpoint_every and completed % cfg.train.checkpoint_every == 0 and completed != total:
                ckpt.save_periodic(payload(completed), run_dir, completed, cfg.train.keep_checkpoints)
            guard.leave()
    except KeyboardInterrupt:
        guard.in_critical = False
        path = stop(interrupted=True, rewind=True)
        print(
            f"\nInterrupted after {completed} episodes. Checkpoint: {path}\n{resume_hint}", file=sys.stderr, flush=True
        )
        sys.exit(130)
    except LLMFailureStop as e:
        if len(window):  # the episodes finished since the last log row are not lost
            loggers.log("train", window.infos_row(t_env=t_env), completed)
        path = stop(rewind=True)  # the failed episode is not learned from: a resume replays it
        print(
            f"\ntrain.py: stopped, the LLM failed: {redact(str(e))}\nLast checkpoint (after {completed} episodes, "
            f"the failed one not learned from): {path}\n{resume_hint}",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(1)
    except Exception as e:
        if runners is None:
            raise
        # The concurrent runner failed (e.g. every episode lost to a server that is down):
        # keep what was learnt, say how to go on, then fail.
        path = stop(interrupted=True)
        print(
            f"\nStopped after {completed} episodes: {type(e).__name__}: {e}\nCheckpoint: {path}\n{resume_hint}",
            file=sys.stderr,
            flush=True,
        )
        raise

    # -- the end: final checkpoint, where things went ---------------------------------
    final_path = stop(checkpoint=ckpt.FINAL)
    print(
        f"\nTrained {cfg.algo.name} on {cfg.env.name} for {completed} episodes ({t_env} rounds) in "
        f"{time.perf_counter() - t_start:.1f} s; greedy return {last_eval.get('return', float('nan')):.3f}"
    )
    print(f"  run dir:     {run_dir}")
    print(f"  checkpoint:  {final_path}")
    print(f"  logs:        {', '.join(loggers.paths['csv'])}")
    for key in ("tensorboard", "wandb"):
        if key in loggers.paths:
            print(f"  {key + ':':<12} {loggers.paths[key]}")
    artifacts = getattr(getattr(env, "unwrapped", env), "artifacts", None) or getattr(env, "artifacts", None)
    if callable(artifacts):
        for name, path in (artifacts() or {}).items():
            print(f"  {name + ':':<12} {path}")
    sys.stdout.flush()
    return last_eval


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> float:
    try:
        if cfg.sweep.seeds:  # a sweep trial: several seeds, one objective (experiments/sweep_objective.py)
            from experiments.sweep_objective import train_seeds

            return train_seeds(cfg, train, Path(HydraConfig.get().runtime.output_dir), hydra_task_overrides())
        result = train(cfg)
    except (ConfigValueError, ckpt.CheckpointError, PluginError) as e:
        print(f"train.py: {redact(str(e))}", file=sys.stderr, flush=True)
        sys.exit(2)
    return result.get("return", float("nan"))


register_configs()

if __name__ == "__main__":
    from experiments.preflight import preload_or_refuse, refuse_bad_settings

    refuse_secret_arguments(sys.argv)  # before Hydra writes or echoes the line
    preload_or_refuse(sys.argv, "train.py")
    refuse_bad_settings(sys.argv, "train.py")  # one line, exit 2, nothing written
    main()
