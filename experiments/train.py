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

import copy
import os
import random
import signal
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without `pip install -e .`
# Launchers that run each job in a fresh process (submitit: SLURM or local) unpickle the
# task, which imports run_config from experiments/: let those processes find it too.
os.environ["PYTHONPATH"] = os.pathsep.join(
    dict.fromkeys(p for p in (str(ROOT / "experiments"), str(ROOT), *os.environ.get("PYTHONPATH", "").split(os.pathsep)) if p))

import hydra  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from hydra.core.hydra_config import HydraConfig  # noqa: E402
from omegaconf import DictConfig, OmegaConf  # noqa: E402

import algos  # noqa: E402
import envs  # noqa: E402
from algos.plugins import check_learned_state, load_checkpoint_plugins, load_plugins, plugin_records  # noqa: E402
from algos.training import checkpoint as ckpt  # noqa: E402
from algos.training.loggers import RunLoggers, env_action_names, hydra_task_overrides  # noqa: E402
from algos.training.progress import RunProgress, rounds_budget  # noqa: E402
from algos.training.rollout import action_distribution, evaluate, run_episode  # noqa: E402
from agents_llm.redaction import redact  # noqa: E402
from algos.training.vector_rollout import evaluate_vectorized  # noqa: E402
from run_config import ConfigValueError, RolloutConfig, register_configs, validate_run_config  # noqa: E402

# Keys that may change when resuming a run; everything else comes from the checkpoint.
RESUMABLE_PREFIXES = ("train.", "logger.", "eval.", "rollout.", "device", "torch_threads")


def preload_plugins(argv: list[str]) -> None:
    """Import ``plugins=[...]`` from the command line before Hydra composes the config,
    so the algorithms they register can be selected with ``algo=<name>``."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    for arg in argv[1:]:
        if arg.lstrip("+~").startswith("plugins="):
            value = OverridesParser.create().parse_override(arg.lstrip("~")).value()
            if isinstance(value, str):
                value = [value]
            load_plugins(value or [])


def env_args(env_cfg: Any, *, evaluation: bool = False, output_dir: Path | None = None) -> tuple[str, dict]:
    """The registry name and factory arguments of the env a config names; an env that
    writes files (`output_dir: null` in its config) writes them under `output_dir`."""
    args = OmegaConf.to_container(env_cfg, resolve=True) if isinstance(env_cfg, DictConfig) else dict(env_cfg)
    name = args.pop("name")
    overrides = args.pop("eval_overrides", None) or {}
    if evaluation:
        args.update(overrides)
    if output_dir is not None and "output_dir" in args and args["output_dir"] is None:
        args["output_dir"] = str(output_dir)
    return name, args


def make_env(env_cfg: Any, *, evaluation: bool = False, output_dir: Path | None = None):
    """Build the env a config names (see :func:`env_args`)."""
    name, args = env_args(env_cfg, evaluation=evaluation, output_dir=output_dir)
    return envs.make(name, **args)


def check_rollout(rollout: Any) -> None:
    """Fail at start, naming the setting, on a rollout config that cannot run."""
    from algos.training.vector_rollout import check_positive

    check_positive("rollout.num_envs", rollout.num_envs)
    check_positive("rollout.workers", rollout.workers)
    if rollout.sync_every is not None:
        check_positive("rollout.sync_every", rollout.sync_every)
    if rollout.backend not in ("local", "ray"):
        raise ValueError(f"rollout.backend must be 'local' or 'ray', got {rollout.backend!r}")
    if rollout.backend == "local" and rollout.workers != 1:
        raise ValueError(f"rollout.workers={rollout.workers} needs rollout.backend=ray (local runs one process)")


def vectorized(rollout: Any) -> bool:
    """True when episodes run through the concurrent runner instead of the sequential loop
    (whose exploration draws from the algorithm's one random stream, not one per episode)."""
    return rollout.num_envs > 1 or rollout.backend == "ray" or rollout.sync_every is not None


def make_runner(cfg: DictConfig, algo: Any, spec: Any, env_cfg: Any, *, evaluation: bool, output_dir: Path, loop: Any,
                local: bool = False, algo_cfg: Any = None):
    """The concurrent episode runner a `rollout` config asks for (Ray's only when not `local`);
    `algo_cfg` is the config `algo` was built from (default `cfg.algo`)."""
    algo_cfg = cfg.algo if algo_cfg is None else algo_cfg
    name, args = env_args(env_cfg, evaluation=evaluation, output_dir=output_dir)
    if cfg.rollout.backend == "ray" and not local:
        from algos.training.ray_rollout import RayRollout

        return RayRollout(name, args, algo, spec, algo_name=algo_cfg.name,
                          algo_cfg=OmegaConf.to_container(algo_cfg, resolve=True), num_envs=cfg.rollout.num_envs, workers=cfg.rollout.workers,
                          max_rounds=cfg.train.max_rounds, address=cfg.rollout.ray_address,
                          worker_cpus=cfg.rollout.worker_cpus, episode_retries=cfg.rollout.episode_retries,
                          plugins=list(cfg.plugins), torch_threads=cfg.torch_threads)
    from algos.training.vector_rollout import VectorRollout

    return VectorRollout(lambda: envs.make(name, **args), algo, spec, num_envs=cfg.rollout.num_envs,
                         max_rounds=cfg.train.max_rounds, loop=loop)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class InterruptGuard:
    """Ctrl-C raises KeyboardInterrupt at once, except inside ``critical()`` or between
    ``enter()`` and ``leave()`` (observe, update, logs, evaluation, checkpoint), where it
    is deferred to the end so the learner's state stays consistent for the checkpoint."""

    def __init__(self) -> None:
        self.in_critical = False
        self.pending = False

    def install(self) -> None:
        try:
            signal.signal(signal.SIGINT, self._handler)
        except ValueError:  # not in the main thread (e.g. some launchers): keep the default
            pass

    def _handler(self, signum, frame) -> None:
        if self.in_critical:
            self.pending = True
        else:
            raise KeyboardInterrupt

    def enter(self) -> None:
        self.in_critical = True

    def leave(self) -> None:
        self.in_critical = False
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt

    @contextmanager
    def critical(self):
        self.enter()
        try:
            yield
        finally:
            self.in_critical = False
        self.leave()


def resume_config(cfg: DictConfig, saved: dict) -> DictConfig:
    """The saved run's config, with the command line's resumable overrides applied."""
    resumed = OmegaConf.create(saved)
    if "rollout" not in resumed:  # a run saved before the rollout settings existed: the sequential loop
        resumed.rollout = OmegaConf.structured(RolloutConfig)
    try:
        overrides = list(HydraConfig.get().overrides.task)
    except ValueError:
        overrides = []
    for ov in overrides:
        key = ov.split("=", 1)[0].lstrip("+~")
        if key in ("resume", "plugins"):
            continue
        if not key.startswith(RESUMABLE_PREFIXES):
            raise ValueError(
                f"cannot change {key!r} when resuming (the run's config is in its checkpoint); "
                f"only {', '.join(RESUMABLE_PREFIXES)} may be overridden"
            )
        OmegaConf.update(resumed, key, OmegaConf.select(cfg, key), force_add=True)
    resumed.resume = cfg.resume
    return resumed


def close_runners(runners: Any) -> None:
    if runners is not None:
        for runner in runners[:2]:
            runner.close()
        runners[2].close()


def _mean_dicts(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = set().union(*rows) if rows else set()
    return {k: float(np.mean([r[k] for r in rows if k in r])) for k in sorted(keys)}


class LLMFailureStop(RuntimeError):
    """Too many of an episode's LLM calls failed: training stops, keeping the last checkpoint."""


def llm_error_share(infos: dict[str, float]) -> float:
    calls = infos.get("llm_calls", 0.0)
    return infos.get("llm_errors", 0.0) / calls if calls else 0.0


def train(cfg: DictConfig, run_dir: Optional[Path] = None) -> dict[str, float]:
    """Train one run in ``run_dir`` (default: the Hydra job's output dir)."""
    load_plugins(cfg.plugins)
    run_dir = Path(run_dir) if run_dir is not None else Path(HydraConfig.get().runtime.output_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    ckpt_state = None
    if cfg.resume:
        ckpt_state = ckpt.load(cfg.resume)
        cfg = resume_config(cfg, ckpt_state["config"])
        load_checkpoint_plugins(ckpt_state)
    validate_run_config(cfg)
    check_rollout(cfg.rollout)
    torch.set_num_threads(cfg.torch_threads)
    seed_everything(cfg.seed)
    container = redact(OmegaConf.to_container(cfg, resolve=True))  # what is written: config.yaml, checkpoints, W&B
    OmegaConf.save(OmegaConf.create(container), run_dir / "config.yaml")

    try:
        env = make_env(cfg.env, output_dir=run_dir / "episodes")
        eval_env = make_env(cfg.env, evaluation=True, output_dir=run_dir / "eval_episodes")
    except ValueError as e:  # an env setting out of range (the env names it), or a backend refusing its config
        raise ConfigValueError(f"env: {e}") from None
    spec = algos.EnvSpec.from_env(env)
    algo = algos.build(cfg.algo.name, spec, cfg.algo, seed=cfg.seed, device=cfg.device)
    runners = None
    if vectorized(cfg.rollout):
        import asyncio

        loop = asyncio.Runner()  # one loop for the run: clients built once stay usable
        runners = (make_runner(cfg, algo, spec, cfg.env, evaluation=False, output_dir=run_dir / "episodes", loop=loop),
                   make_runner(cfg, algo, spec, cfg.env, evaluation=True, output_dir=run_dir / "eval_episodes", loop=loop, local=True),
                   loop)
    algo.check_budget(cfg.train.episodes)
    check_learned_state(algo, algo.state_dict(), when="training")  # before any episode is spent

    start_episode, t_env, wandb_id = 0, 0, None
    if ckpt_state is not None:
        check_learned_state(algo, ckpt_state["algo"], when="resuming")
        algo.load_state_dict(ckpt_state["algo"])
        start_episode = ckpt_state["progress"]["episode"]
        t_env = ckpt_state["progress"]["t_env"]
        wandb_id = ckpt_state.get("wandb_id")
        ckpt.set_rng_state(ckpt_state["rng"])
        print(f"Resuming {cfg.algo.name} on {cfg.env.name} from episode {start_episode} (t_env {t_env}) in {run_dir}", flush=True)

    loggers = RunLoggers(cfg, run_dir, wandb_id=wandb_id, job_type="train",
                         overrides=(ckpt_state or {}).get("overrides", hydra_task_overrides()),
                         action_names=env_action_names(env, spec.n_actions),
                         tables_every=cfg.train.eval_every or cfg.train.episodes, container=container)

    def payload(episode: int, interrupted: bool = False) -> dict[str, Any]:
        return {
            "version": 1,
            "algo_name": cfg.algo.name,
            "algo": algo.state_dict(),
            "progress": {"episode": episode, "t_env": t_env},
            "config": container,
            "rng": ckpt.rng_state(),
            "wandb_id": loggers.wandb_id,
            "overrides": (ckpt_state or {}).get("overrides", hydra_task_overrides()),
            "plugins": plugin_records(cfg.plugins),  # module, file and sys.path entry: re-imported on load
            "interrupted": interrupted,
            "time": time.time(),
        }

    total = cfg.train.episodes
    bar = RunProgress(cfg.logger.progress, total_episodes=total, initial=start_episode,
                      desc=f"{cfg.algo.name}@{cfg.env.name}", rounds_per_episode=rounds_budget(env))
    guard = InterruptGuard()
    guard.install()
    window_stats, window_updates, window_times = [], [], []
    completed = start_episode
    last_eval: dict[str, float] = {}
    t_start = time.perf_counter()
    def episode_seed(ep: int) -> int:
        return cfg.seed * 1_000_003 + ep

    episode_start_rng = None

    def episodes():
        """(episode number, Episode, stats, seconds) in order; Episode None = dropped.
        The concurrent runner collects `sync_every` episodes with the policy as it is,
        then hands them over one by one, as the sequential loop would have made them."""
        nonlocal episode_start_rng
        if runners is None:
            for ep in range(start_episode, total):
                # The RNGs as the episode starts: an interrupt inside it saves these, so a resumed
                # run replays the episode exactly (the learner itself changes only after it).
                episode_start_rng = (ckpt.rng_state(), copy.deepcopy(algo.rng.bit_generator.state))
                t0 = time.perf_counter()
                bar.begin_episode("train")
                episode, stats = run_episode(env, algo, spec, explore=True, seed=episode_seed(ep),
                                             max_rounds=cfg.train.max_rounds, on_round=bar.on_round)
                yield ep, episode, stats, time.perf_counter() - t0
            return
        block = cfg.rollout.sync_every or cfg.rollout.num_envs * (cfg.rollout.workers if cfg.rollout.backend == "ray" else 1)
        for first in range(start_episode, total, block):
            t0 = time.perf_counter()
            wanted = [(ep, episode_seed(ep)) for ep in range(first, min(first + block, total))]
            done = runners[0].run_episodes(wanted, explore=True)
            per_episode = (time.perf_counter() - t0) / len(wanted)
            if not done.results:
                raise RuntimeError(f"every episode of {wanted[0][0]}..{wanted[-1][0]} failed; first: {done.failures[0].reason}")
            by_index = {r.index: r for r in done.results}
            reasons = {f.index: f.reason for f in done.failures}
            for ep, _ in wanted:
                bar.begin_episode("train")
                if ep in by_index:
                    yield ep, by_index[ep].episode, by_index[ep].stats, per_episode
                else:
                    yield ep, None, reasons.get(ep, "lost"), per_episode

    failed = 0
    try:
        for ep, episode, stats, seconds in episodes():
            t0 = time.perf_counter() - seconds
            if episode is None:  # dropped by the concurrent runner: logged there, counted here
                failed += 1
                completed = ep + 1
                bar.end_episode()
                bar.write(f"episode {ep} dropped: {stats}")
                continue
            share = llm_error_share(stats.infos)
            if stats.infos.get("llm_errors") and share >= cfg.train.llm_error_share_stop:
                raise LLMFailureStop(
                    f"episode {ep + 1}: {int(stats.infos['llm_errors'])} of {int(stats.infos['llm_calls'])} LLM calls "
                    f"failed ({share:.0%} >= train.llm_error_share_stop={cfg.train.llm_error_share_stop:g}); "
                    f"cause: {llm_failure_cause(env)}")
            # From here to the end of the iteration an interrupt waits: the bookkeeping below
            # (update, logs, evaluation, checkpoint) either all happens or none of it.
            guard.enter()
            algo.observe(episode)
            t1 = time.perf_counter()
            upd = algo.update()
            t_env += len(episode)
            completed = ep + 1
            episode_start_rng = None
            window_times.append((time.perf_counter() - t0, time.perf_counter() - t1))  # episode = rollout share + learning
            window_stats.append(stats)
            if upd:
                window_updates.append(upd)
            bar.end_episode({"return": stats.ret, **{k: stats.infos[k] for k in ("report_score",) if k in stats.infos}})
            if completed % cfg.train.log_every == 0 or completed == total:
                row = {"t_env": float(t_env), "wall_s": time.perf_counter() - t_start}
                row.update(_mean_dicts([{"return": s.ret, "length": float(s.length), **s.infos, **({"q_chosen_mean": float(np.mean(s.q_values))} if s.q_values else {})} for s in window_stats]))
                row["time/episode_s"] = float(np.mean([a for a, _ in window_times]))
                row["time/update_s"] = float(np.mean([b for _, b in window_times]))
                row.update(action_distribution(sum(s.action_counts for s in window_stats), spec.agents))
                row.update(algo.metrics())
                row.update(_mean_dicts(window_updates))
                if window_updates:  # counters: the latest value, not the window mean
                    row.update({k: v for k, v in window_updates[-1].items() if k in ("updates", "target_updates")})
                loggers.log("train", row, completed)
                if failed:
                    row["rollout/failed_episodes"] = float(failed)
                window_stats, window_updates, window_times = [], [], []
            if (cfg.train.eval_every and completed % cfg.train.eval_every == 0) or completed == total:
                if runners is None:
                    last_eval = evaluate(eval_env, algo, spec, cfg.train.eval_episodes, seed=cfg.eval.seed, progress=bar)
                else:
                    last_eval = evaluate_vectorized(runners[1], spec, cfg.train.eval_episodes, seed=cfg.eval.seed)
                loggers.log("eval", {"t_env": float(t_env), **last_eval}, completed)
            if cfg.train.checkpoint_every and completed % cfg.train.checkpoint_every == 0 and completed != total:
                ckpt.save_periodic(payload(completed), run_dir, completed, cfg.train.keep_checkpoints)
            guard.leave()
    except KeyboardInterrupt:
        guard.in_critical = False
        bar.close()
        close_runners(runners)
        if episode_start_rng is not None:  # inside an episode: back to where it started
            ckpt.set_rng_state(episode_start_rng[0])
            algo.rng.bit_generator.state = episode_start_rng[1]
        path = ckpt.save_atomic(payload(completed, interrupted=True), run_dir / ckpt.CKPT_DIR / ckpt.LAST)
        loggers.close()
        print(f"\nInterrupted after {completed} episodes. Checkpoint: {path}\nResume with: python experiments/train.py resume={run_dir}", file=sys.stderr, flush=True)
        sys.exit(130)
    except LLMFailureStop as e:
        bar.close()
        close_runners(runners)
        if episode_start_rng is not None:  # the failed episode is not learned from: a resume replays it
            ckpt.set_rng_state(episode_start_rng[0])
            algo.rng.bit_generator.state = episode_start_rng[1]
        if window_stats:  # the episodes finished since the last log row are not lost
            loggers.log("train", {"t_env": float(t_env), **_mean_dicts([s.infos for s in window_stats])}, completed)
        path = ckpt.save_atomic(payload(completed), run_dir / ckpt.CKPT_DIR / ckpt.LAST)
        loggers.close()
        print(f"\ntrain.py: stopped, the LLM failed: {redact(str(e))}\nLast checkpoint (after {completed} episodes, "
              f"the failed one not learned from): {path}\nResume with: python experiments/train.py resume={run_dir}",
              file=sys.stderr, flush=True)
        sys.exit(1)
    except Exception as e:
        if runners is None:
            raise
        # The concurrent runner failed (e.g. every episode lost to a server that is down):
        # keep what was learnt, say how to go on, then fail.
        bar.close()
        close_runners(runners)
        path = ckpt.save_atomic(payload(completed, interrupted=True), run_dir / ckpt.CKPT_DIR / ckpt.LAST)
        loggers.close()
        print(f"\nStopped after {completed} episodes: {type(e).__name__}: {e}\nCheckpoint: {path}\n"
              f"Resume with: python experiments/train.py resume={run_dir}", file=sys.stderr, flush=True)
        raise
    bar.close()
    close_runners(runners)
    final = payload(completed)
    final_path = ckpt.save_atomic(final, run_dir / ckpt.CKPT_DIR / ckpt.FINAL)
    ckpt.save_atomic(final, run_dir / ckpt.CKPT_DIR / ckpt.LAST)
    loggers.close()

    print(f"\nTrained {cfg.algo.name} on {cfg.env.name} for {completed} episodes ({t_env} rounds) in {time.perf_counter() - t_start:.1f} s; greedy return {last_eval.get('return', float('nan')):.3f}")
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


def llm_failure_cause(env: Any) -> str:
    """The first LLM error of the env's last episode (its trace), or what the trace says ended it."""
    trace = getattr(getattr(env, "unwrapped", env), "trace", None)
    if trace is None:
        return "unknown (the env keeps no trace)"
    if trace.end.get("reason") == "llm_error":
        return trace.end.get("detail") or "llm_error"
    errors = [c["error"] for r in trace.rounds for c in r.get("calls", []) if c.get("llm_failed")]
    return errors[0] if errors else "unknown"


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> float:
    try:
        if cfg.sweep.seeds:  # a sweep trial: several seeds, one objective (experiments/sweep_objective.py)
            from sweep_objective import train_seeds

            return train_seeds(cfg, train, Path(HydraConfig.get().runtime.output_dir), hydra_task_overrides())
        result = train(cfg)
    except ConfigValueError as e:
        print(f"train.py: {redact(str(e))}", file=sys.stderr, flush=True)
        sys.exit(2)
    return result.get("return", float("nan"))


register_configs()

if __name__ == "__main__":
    preload_plugins(sys.argv)
    main()
