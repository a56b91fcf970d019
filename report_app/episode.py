"""The run: the report env on the documents, played greedily by the chosen policy for one
episode, with the per-round display; what was written is kept when the episode breaks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from agents_llm.report_state import ReportState

from .documents import Documents
from .policy import ChosenPolicy


@dataclass
class Episode:
    env: Any  # envs.report.writing.ReportWritingEnv, with its trace and token ledger
    report: ReportState
    stats: Any  # algos.training.rollout's episode stats; None when the episode broke
    error: Optional[BaseException]  # what broke the episode, re-raised once the outputs are written
    llm_failure: Optional[str]  # why the LLM failed when the episode ended for that reason
    messages: list[str] = field(default_factory=list)


def play_episode(
    task: str,
    policy: ChosenPolicy,
    documents: Documents,
    *,
    max_rounds: int,
    llm: Any,
    judge: Any,
    rag: dict[str, Any],
    engine: dict[str, Any],
    out_dir: Path,
    seed: int,
    progress: str,
) -> Episode:
    """One greedy episode of the report env on ``task``; an exception is caught and returned in
    ``Episode.error`` so that the report so far can still be written."""
    import algos
    from algos.training.progress import RunProgress
    from algos.training.rollout import run_episode
    from envs.report.writing import ReportWritingEnv

    env = ReportWritingEnv(
        team=list(policy.team),
        max_rounds=max_rounds,
        min_rounds_before_terminate=1,
        tasks=[{"id": "write_report", "topic": task, "split": "train", "corpus": documents.corpus}],
        store_path=str(documents.store_path) if documents.store_path else None,
        llm=llm,
        judge=judge,
        rag=rag,
        engine=engine,
        resources=documents.resources,
        output_dir=str(out_dir),
    )
    spec = algos.EnvSpec.from_env(env)
    policy_obj = algos.build(policy.name, spec, policy.config, seed=seed)
    if policy.state is not None:
        policy_obj.load_state_dict(policy.state["algo"])
    error: Optional[BaseException] = None
    stats = None
    # The console speaks of writing ("writing round 3/25"), not of training.
    bar = RunProgress(
        progress, total_episodes=1, desc="write_report", rounds_per_episode=max_rounds, main_kind="writing"
    )
    bar.begin_episode("writing")
    try:
        _, stats = run_episode(
            env, policy_obj, spec, explore=False, seed=seed, max_rounds=max_rounds, on_round=bar.on_round
        )
        bar.end_episode({"score": stats.infos.get("report_score", 0.0)})
    except BaseException as e:  # keep what was written, then re-raise once the outputs are written
        error = e
    finally:
        bar.close()
    report = env.report if env.report is not None else ReportState(topic=task)
    end = env.trace.end if env.trace is not None else {}
    llm_failure = end.get("detail") if end.get("reason") == "llm_error" else None
    rounds_llm = [r.get("llm") or {} for r in (env.trace.rounds if env.trace is not None else [])]
    llm_calls, llm_errors = sum(r.get("calls", 0) for r in rounds_llm), sum(r.get("errors", 0) for r in rounds_llm)
    messages = []
    if llm_errors:
        messages.append(f"{llm_errors} of {llm_calls} LLM call(s) failed (see calls[].error in the trace)")
    return Episode(env, report, stats, error, llm_failure, messages)
