"""The top-level structured config shared by train.py and evaluate.py.

``register_configs()`` stores the schemas in Hydra's ConfigStore and registers the
resolvers used in ``conf/config.yaml``. Every field is typed, so ``algo.lr=abc`` or an
unknown key fails when the config is composed, naming the key.

Groups and their schemas:
* ``algo``: each algorithm's dataclass (``base_qmix``, ``base_vdn``, ...), stored by
  ``algos.register``; ``conf/algo/<name>.yaml`` starts with ``defaults: [base_<name>, _self_]``.
* ``env``: the env schemas (``envs.configs.EnvConfig`` subclasses), stored as
  ``base_<env>`` by ``envs.register(..., config_class=...)``; an env config has ``name``
  (the ``envs`` registry name), the factory's keyword arguments, and optionally
  ``eval_overrides``. An env without a schema may ship a plain yaml (its keys then form it).
* ``logger``: :class:`LoggerConfig`.
* ``rollout``: :class:`RolloutConfig` (episodes in flight, Ray workers).
* ``llm``, ``judge``, ``rag``: owned by ``agents_llm``/``rag``; untyped here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, List, Optional

from hydra.core.config_store import ConfigStore
from hydra.experimental.callback import Callback
from omegaconf import MISSING, DictConfig, OmegaConf

import envs
from envs.configs import EnvConfig, OneStep3x3EnvConfig, TwoStepEnvConfig, store_env_config  # noqa: F401  (re-exported)


@dataclass
class LoggerConfig:
    # CSV (<run dir>/train.csv, eval.csv) is always written.
    tensorboard: bool = False  # <run dir>/tensorboard
    wandb: bool = True  # <run dir>/wandb
    wandb_mode: str = "offline"  # offline | online | disabled; offline never touches the network
    wandb_project: str = "qmix-report-gym"
    wandb_entity: Optional[str] = None
    # auto (bars on a terminal, plain lines otherwise) | bar (episodes + the current
    # episode's rounds, tokens, score, ETA) | plain (a line every 15 s, for log files) |
    # quiet (nothing but the summary at the end: CI). See algos/training/progress.py.
    progress: str = "auto"


@dataclass
class TrainConfig:
    episodes: int = 500  # training episodes (one episode = one report in the report env)
    log_every: int = 10  # write a metrics row every N episodes (averaged over the window)
    eval_every: int = 100  # greedy evaluation every N episodes (0: only at the end)
    eval_episodes: int = 5  # episodes per evaluation during training
    checkpoint_every: int = 100  # periodic checkpoint every N episodes (0: only the final one)
    keep_checkpoints: int = 3  # periodic checkpoints kept besides last.pt and final.pt
    max_rounds: int = 10_000  # safety cap on rounds per episode
    # Stop training (exit 1, last checkpoint kept) when at least this share (0-1] of one
    # episode's LLM calls failed (server down, timeouts, malformed answers): such an
    # episode measures the server, not the policy. 1.0: only when every call failed.
    llm_error_share_stop: float = 0.5


@dataclass
class EvalConfig:
    # evaluate.py: greedy episodes on the holdout env. None: one repetition of its held-out tasks on a
    # task env (each task once: 12 on the report env), 20 on others. More repetitions: a multiple of the tasks.
    episodes: Optional[int] = None
    seed: int = 1_000_000  # base seed of evaluation episodes (disjoint from training seeds)
    out: Optional[str] = None  # metrics JSON path (default: <hydra run dir>/metrics.json)
    # Policies to compare on the same episodes, e.g. [handcrafted, preset:ring, random]; writes
    # comparison.json and comparison.md (experiments/compare_policies.py). Empty: evaluate `algo` alone.
    compare: List[str] = field(default_factory=list)


@dataclass
class RolloutConfig:
    """How episodes are collected (README "Scaling up"). The defaults are the sequential
    loop: one episode at a time through the synchronous ``env.step``."""

    # Episodes in flight in one process, on one event loop (one batched policy forward per
    # round, every episode's astep awaited together). 1 = the sequential loop.
    num_envs: int = 1
    # Episodes collected with one frozen policy before the learner observes them (in
    # episode order, one update each, as the sequential loop does). Results depend on it and
    # on the seeds, never on num_envs or workers. null = num_envs * workers.
    sync_every: Optional[int] = None
    backend: str = "local"  # local: in this process | ray: `workers` Ray actors (extra .[ray])
    workers: int = 1  # Ray actors, each running num_envs episodes at once (backend=ray)
    ray_address: Optional[str] = (
        None  # attach to a running Ray cluster ("auto", "ray://host:10001"); null = start a local one
    )
    worker_cpus: float = 1.0  # CPUs Ray reserves for each actor
    episode_retries: int = 1  # an episode lost with its worker is re-run this many times, then dropped (logged)
    # evaluate.py: two or more episodes of the in-process llama.cpp team (one thread) with the rollout at
    # its defaults run on two single-thread model processes (backend=ray, workers=2) when Ray is installed
    # and the machine has two cores (algos.training.runners.model_processes); false keeps one process.
    auto_workers: bool = True


@dataclass
class SweepConfig:
    """Several seeds per job, for sweeps (the Optuna presets in conf/hydra/sweeper/ set it)."""

    seeds: List[int] = field(default_factory=list)  # seeds trained per job (<job dir>/seed_<s>); empty: `seed` only
    objective: str = "iqm"  # iqm | mean over seeds of `metric` (experiments/sweep_objective.py)
    metric: str = "auto"  # auto: report_score where the env has one (the benchmark's), else return; or a metric name
    algo: Optional[str] = None  # the algorithm a preset's search space is for; another algo= fails at start


@dataclass
class RunConfig:
    algo: Any = MISSING
    env: Any = MISSING
    logger: LoggerConfig = field(default_factory=LoggerConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    sweep: SweepConfig = field(default_factory=SweepConfig)
    llm: Any = None  # the llm group (agents_llm), when composed
    judge: Any = None
    rag: Any = None
    seed: int = 0
    device: str = "cpu"
    torch_threads: int = 1  # torch intra-op threads; 1 is fastest on a busy 2-core machine
    plugins: List[str] = field(default_factory=list)  # modules/.py files imported first; they may register algos/envs
    resume: Optional[str] = None  # train.py: a run dir to continue (same dir, same counters)
    checkpoint: Optional[str] = None  # evaluate.py: a checkpoint file or run dir to evaluate
    # train.py: start a new run from this checkpoint's learner (fine-tuning, e.g. a proxy-trained
    # policy on the LLM team): its whole learner state (networks, optimiser, counters, a replay
    # buffer if saved); the run's own episode count, RNGs and env. Not with resume.
    init: Optional[str] = None


class ConfigValueError(ValueError):
    """A setting outside its range, or one that must not be written down; the message names the key."""


WANDB_MODES = ("offline", "online", "disabled")
SEED_MAX = 2**32 - 1  # numpy's legacy seeding takes [0, 2**32)


def _int_at_least(cfg: Any, key: str, low: int) -> None:
    value = OmegaConf.select(cfg, key)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigValueError(f"{key} must be an integer >= {low}, got {value!r}")


def validate_run_config(cfg: DictConfig) -> None:
    """Range-check every numeric training setting, and the algorithm's own config, before
    anything is built. Raises ConfigValueError naming the key."""
    for key, low in (
        ("train.episodes", 1),
        ("train.log_every", 1),
        ("train.eval_every", 0),
        ("train.eval_episodes", 1),
        ("train.checkpoint_every", 0),
        ("train.keep_checkpoints", 1),
        ("train.max_rounds", 1),
        ("eval.seed", 0),
        ("seed", 0),
        ("torch_threads", 1),
    ):
        _int_at_least(cfg, key, low)
    if OmegaConf.select(cfg, "eval.episodes") is not None:  # None: evaluate.py picks one repetition of the tasks
        _int_at_least(cfg, "eval.episodes", 1)
    if cfg.seed > SEED_MAX:
        raise ConfigValueError(f"seed must be <= {SEED_MAX}, got {cfg.seed}")
    share = cfg.train.llm_error_share_stop
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
        raise ConfigValueError(f"train.llm_error_share_stop must be in (0, 1], got {share!r}")
    from algos.training.progress import MODES as PROGRESS_MODES

    if str(cfg.logger.progress) not in PROGRESS_MODES:
        raise ConfigValueError(
            f"logger.progress must be one of {', '.join(PROGRESS_MODES)}, got {cfg.logger.progress!r}"
        )
    if cfg.logger.wandb_mode not in WANDB_MODES:
        raise ConfigValueError(
            f"logger.wandb_mode must be one of {', '.join(WANDB_MODES)}, got {cfg.logger.wandb_mode!r}"
        )
    if cfg.get("llm") is not None:  # the LLM's token limits and call settings, whichever env uses them
        from agents_llm.backends import LLMConfigError
        from agents_llm.backends.config import check_llm_settings

        try:
            check_llm_settings(OmegaConf.to_container(cfg.llm, resolve=True))
        except LLMConfigError as e:
            raise ConfigValueError(str(e)) from None
    from algos.registry import to_config

    algo_cfg = to_config(cfg.algo.name, cfg.algo)
    try:
        algo_cfg.validate()
    except ValueError as e:
        raise ConfigValueError(str(e)) from None


# -- credentials never reach a written config -------------------------------------------
def _strings(node: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(dotted key, value) of every string in a plain container."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _strings(v, f"{prefix}[{i}]")
    elif isinstance(node, str):
        yield prefix, node


def _leaves(node: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every scalar in a plain container."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, f"{prefix}[{i}]")
    else:
        yield prefix, node


def secret_argument_problem(args: List[str]) -> Optional[str]:
    """Why a command line gives a secret where it would be written (`llm.api_key=K`,
    `+llm.api_key=K`, a key as the value of `llm.api_key_env`), or None. Checked before Hydra
    parses the line: Hydra writes it to .hydra/ and echoes a bad override with its value."""
    from agents_llm.redaction import KEY_DOOR, secret_setting_problem
    from report_protocol.url_policy import url_credential_problem

    for arg in args:
        if "=" not in arg or arg.startswith("-"):
            continue
        key, value = arg.split("=", 1)
        key = key.lstrip("+~")
        problem = secret_setting_problem(key, value.strip().strip("'\""))
        if problem:
            return problem
        in_url = url_credential_problem(value)
        if in_url:
            return f"{key} must not carry credentials, but it has {in_url}; {KEY_DOOR}"
    return None


def refuse_secret_arguments(argv: List[str]) -> None:
    """Exit 2 with one line (the key, never its value) when the command line gives a secret
    anywhere but its environment variable: the entry points call it before Hydra runs."""
    import sys

    problem = secret_argument_problem(list(argv[1:]))
    if problem:
        print(f"{Path(argv[0]).name}: {problem}", file=sys.stderr, flush=True)
        raise SystemExit(2)


def check_no_credentials(cfg: DictConfig) -> None:
    """Refuse a URL with `user:password@` or a secret-looking query parameter (`?key=`,
    `access_token=`, `sig=`, ...) anywhere in the config or the command line, before Hydra
    writes `.hydra/*.yaml` (and before config.yaml, checkpoints, W&B and traces). The one
    credential policy of every entry point (conf/*.yaml: hydra.callbacks.credential_guard)."""
    from agents_llm.redaction import credential_problem

    # Unresolved: interpolations stay text, and the values they point at are checked where they are set.
    plain = OmegaConf.to_container(cfg, resolve=False)
    if isinstance(plain, dict):
        plain.pop("hydra", None)  # Hydra's own node; of it only the command line is user input (below)
    from agents_llm.redaction import secret_setting_problem

    for key, value in _leaves(plain):  # a secret's one door is its environment variable
        if problem := secret_setting_problem(key, value):
            raise ConfigValueError(problem)
    found = [(k, problem) for k, v in _strings(plain) if (problem := credential_problem(v))]
    overrides = OmegaConf.select(cfg, "hydra.overrides.task", default=None) or []
    found += [
        (str(o).split("=", 1)[0].lstrip("+~"), problem) for o in overrides if (problem := credential_problem(str(o)))
    ]
    if found:
        key, problem = found[0]
        raise ConfigValueError(
            f"{key} must not carry credentials, but {problem}; URLs are written to configs, checkpoints, "
            "logs and traces, so put an API key in the environment variable named by llm.api_key_env "
            "(or the server's own setting) instead"
        )


class CredentialGuard(Callback):
    """Hydra callback (conf/config.yaml: hydra.callbacks) that runs `check_no_credentials`
    before a run or sweep writes anything, and exits with status 2 and the (redacted) reason.
    Hydra turns an exception in a callback into a warning and carries on, so this exits
    instead of raising. A sweep value is only known per job, after Hydra saved that job's
    .hydra/ files: those files are scrubbed before the job exits."""

    @staticmethod
    def _refuse(error: ConfigValueError) -> None:
        import sys

        print(f"{Path(sys.argv[0]).name}: {error}", file=sys.stderr, flush=True)
        raise SystemExit(2)

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            check_no_credentials(config)
        except ConfigValueError as e:
            self._refuse(e)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        self.on_run_start(config)

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            check_no_credentials(config)
        except ConfigValueError as e:
            from agents_llm.redaction import redact_text

            subdir = OmegaConf.select(config, "hydra.output_subdir")
            if subdir is not None:
                for saved in (Path(config.hydra.runtime.output_dir) / subdir).glob("*.yaml"):
                    saved.write_text(redact_text(saved.read_text()))
            self._refuse(e)


class RunConfigGuard(Callback):
    """Hydra callback (conf/config.yaml: hydra.callbacks) that runs `validate_run_config` on
    a single run's composed config before Hydra creates the run folder: a misspelt choice
    (``algo.mixer=qmixx``, ``logger.progress=bars``) or an out-of-range value exits 2
    naming the key, with nothing written. Sweep jobs are checked in train.py, per job."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        import sys

        if OmegaConf.select(config, "algo.name") is None or OmegaConf.select(config, "resume"):
            return  # not a train/evaluate config, or a resume: train.py checks the resumed config
        try:
            validate_run_config(config)
        except ConfigValueError as e:
            print(f"{Path(sys.argv[0]).name}: {e}", file=sys.stderr, flush=True)
            raise SystemExit(2) from None


def register_env_config(name: str, cls: type) -> None:
    """Store an env schema as ``env/base_<name>`` (``envs.register(..., config_class=cls)`` does this)."""
    store_env_config(name, cls)


def _run_dir(resume: Optional[str], default: str) -> str:
    return str(resume) if resume else default


def _hydra_subdir(resume: Optional[str]) -> str:
    # On resume the run dir is reused: keep the original .hydra/ config untouched.
    from datetime import datetime

    return f".hydra/resume-{datetime.now():%Y%m%d-%H%M%S}" if resume else ".hydra"


_MAX_SUBDIR_CHARS = 160  # well under the 255 bytes a file name may have


def _job_subdir(num: Any, override_dirname: str) -> str:
    """``<num>_<overrides>`` for a sweep job's folder; an Optuna trial's overrides (long
    floats, many keys) would exceed a file name's limit, so a long one is cut and ends with
    a hash of the whole (still unique, still readable)."""
    import hashlib

    name = f"{num}_{override_dirname}" if override_dirname else str(num)
    if len(name) <= _MAX_SUBDIR_CHARS:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:10]
    return f"{name[: _MAX_SUBDIR_CHARS - 12]}..{digest}"


def register_configs() -> None:
    import algos  # noqa: F401  (stores base_qmix, base_vdn, base_iql, base_random)
    from agents_llm.backends.config import register_configs as register_llm_configs
    from agents_llm.judges import register_configs as register_judge_configs
    from rag.config import register_configs as register_rag_configs

    register_llm_configs()
    register_judge_configs()
    register_rag_configs()

    cs = ConfigStore.instance()
    cs.store(name="run_config", node=RunConfig)
    envs.store_configs()  # the registered env schemas (stored on registration; again, in case the store was cleared)
    # A short random id, cached like ${now:} so every job of one sweep shares it.
    OmegaConf.register_new_resolver("run_id", lambda: uuid.uuid4().hex[:6], use_cache=True, replace=True)
    OmegaConf.register_new_resolver("run_dir", _run_dir, use_cache=True, replace=True)
    OmegaConf.register_new_resolver("hydra_subdir", _hydra_subdir, use_cache=True, replace=True)
    OmegaConf.register_new_resolver("job_subdir", _job_subdir, replace=True)


def compose_run_config(overrides: List[str]) -> DictConfig:
    """The config `train.py` composes from conf/ with these overrides, outside a Hydra app
    (benchmark scripts that build envs and policies themselves)."""
    from hydra import compose, initialize_config_dir

    register_configs()
    conf = Path(__file__).resolve().parents[1] / "conf"
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))
