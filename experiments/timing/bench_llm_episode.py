#!/usr/bin/env python
"""The LLM team's episodes against the model's own speed on this CPU, in one run.

1. llama.cpp's own speed through its low-level API on one thread: a 600-token prompt
   decoded in one pass (llama.cpp's default 512-token batches, and in the backend's
   aligned `llm.prompt_batch` batches), then 128 tokens generated one at a time.
2. Real 8-round episodes of the report env (the config train.py composes, `env.max_rounds=8`)
   with the equal-budget handcrafted pipeline and the shipped learned policy, each with prompt
   reuse off and on: wall time; prompt tokens sent, evaluated and reused (the episode's infos);
   model time (time inside llama.cpp's chat completion); tokens evaluated per second of model
   time; the share of the episode spent outside the model; and whether reuse on and off wrote
   the same report with the same score. The agents' calls are chats, as the report env's
   config has them (`env.engine.conversation`: each agent's later turns append only what is
   new); `--conversation off` plays every call stand-alone: other prompts, so another episode,
   not the same one faster.
3. The ratios: evaluated / sent prompt tokens per episode (target <= 0.4), and the episode's
   effective throughput over llama.cpp's own for the same tokens (the time llama.cpp's own
   prompt and generation speeds need for the episode's evaluated and generated tokens, over the
   episode's model time; target >= 0.8).

    python experiments/timing/bench_llm_episode.py                        # both policies, reuse off and on
    python experiments/timing/bench_llm_episode.py --policies handcrafted --reuse on
    python experiments/timing/bench_llm_episode.py --reuse on --conversation off,on   # stand-alone calls against chats
    python experiments/timing/bench_llm_episode.py --own-only             # step 1 alone (seconds)
    python experiments/timing/bench_llm_episode.py -- env.task_id=doctest # extra train.py overrides
    python experiments/timing/bench_llm_episode.py --traces-out DIR    # also keep each episode's trace.json
    python experiments/timing/bench_llm_episode.py --traces <run>/episodes/*/trace.json
        # no model run: recorded agent prompts through the reuse rule, evaluated/sent per trace

The machine is shared: state its load (printed) beside the figures, and repeat when noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

HANDCRAFTED = "handcrafted:rounds.planning=1;rounds.research=2;rounds.drafting=4;rounds.review=0;rounds.revision=0"
CHECKPOINT = ROOT / "checkpoints" / "qmix_report_writing_extractive" / "final.pt"
PROMPT_TEXT = (ROOT / "README.md").read_text()  # any prose: only its token count matters


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


# -- 1. llama.cpp's own speed ---------------------------------------------------------------
def own_speed(model_path: str, n_prompt: int, n_gen: int, batches: list[int]) -> dict[str, float]:
    """Prompt tokens/s (per batch size) and generation tokens/s, one thread, low-level API."""
    import llama_cpp as lc
    import numpy as np

    lc.llama_backend_init()
    mparams = lc.llama_model_default_params()
    model = lc.llama_model_load_from_file(model_path.encode(), mparams)
    vocab = lc.llama_model_get_vocab(model)
    text = PROMPT_TEXT.encode()
    buf = (lc.llama_token * (len(text) + 8))()
    n = lc.llama_tokenize(vocab, text, len(text), buf, len(buf), True, False)
    tokens = list(buf[:n])[:n_prompt]
    if len(tokens) < n_prompt:
        raise SystemExit(f"the prompt text has only {len(tokens)} tokens; {n_prompt} asked")
    n_vocab = lc.llama_vocab_n_tokens(vocab)
    out: dict[str, float] = {}
    for batch_size in batches:
        cparams = lc.llama_context_default_params()
        cparams.n_ctx, cparams.n_batch, cparams.n_ubatch = 2048, batch_size, batch_size
        cparams.n_threads = cparams.n_threads_batch = 1
        ctx = lc.llama_init_from_model(model, cparams)
        batch = lc.llama_batch_init(batch_size, 0, 1)

        def decode(toks: list[int], start: int) -> None:
            batch.n_tokens = len(toks)
            for i, t in enumerate(toks):
                batch.token[i], batch.pos[i], batch.n_seq_id[i] = t, start + i, 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = i == len(toks) - 1
            if lc.llama_decode(ctx, batch) != 0:
                raise RuntimeError("llama_decode failed")

        def prompt_pass() -> float:
            lc.llama_memory_clear(lc.llama_get_memory(ctx), True)
            t0 = time.perf_counter()
            for i in range(0, n_prompt, batch_size):
                decode(tokens[i : i + batch_size], i)
            return time.perf_counter() - t0

        prompt_pass()  # warm-up: pages the weights in, sizes the buffers
        best = min(prompt_pass() for _ in range(3))
        out[f"prompt_{batch_size}"] = n_prompt / best
        if batch_size == batches[0]:
            t0 = time.perf_counter()
            pos = n_prompt
            for _ in range(n_gen):
                logits = np.ctypeslib.as_array(lc.llama_get_logits_ith(ctx, -1), shape=(n_vocab,))
                decode([int(np.argmax(logits))], pos)
                pos += 1
            out["generate"] = n_gen / (time.perf_counter() - t0)
        lc.llama_batch_free(batch)
        lc.llama_free(ctx)
    lc.llama_model_free(model)
    return out


# -- recorded episodes: what reuse would evaluate of their prompts --------------------------
def replay_traces(paths: list[str], model_path: str, chunk: int, keep: int) -> None:
    """Prompt tokens sent and evaluated when the agent prompts of recorded traces (trace.json)
    go, in their order, through the backend's reuse rule (the longest aligned prefix among the
    last `keep` prompts): the model's tokenizer and chat template, no generation."""
    import llama_cpp
    import numpy as np
    from llama_cpp import llama_chat_format

    from agents_llm.backends.llama_prefix import common_prefix

    llm = llama_cpp.Llama(model_path, vocab_only=True, verbose=False)
    formatter = llama_chat_format.Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=llm.detokenize([llm.token_eos()]).decode(),
        bos_token=llm.detokenize([llm.token_bos()]).decode(),
    )
    for path in paths:
        doc = json.loads(Path(path).read_text())
        kept: list[Any] = []
        sent = evaluated = n = 0
        for rnd in doc["rounds"]:
            for call in rnd["calls"]:
                prompt = rnd["agents"].get(call["agent"], {}).get("prompt") if call["kind"] == "agent" else None
                if not prompt:
                    continue
                text = formatter(messages=prompt)
                ids = np.asarray(
                    llm.tokenize(text.prompt.encode(), add_bos=not text.added_special, special=True), dtype=np.int32
                )
                shared = max((common_prefix(k, ids) for k in kept), default=0)
                reused = max(0, min(shared, len(ids) - 1) // chunk * chunk)
                sent, evaluated, n = sent + len(ids), evaluated + len(ids) - reused, n + 1
                kept = ([k for k in kept if common_prefix(k, ids) < len(k)] + [ids])[-keep:]
        print(
            f"  {path}: {len(doc['rounds'])} rounds, {n} agent prompts, prompt tokens sent {sent:,}, "
            f"evaluated {evaluated:,} (evaluated/sent {evaluated / max(sent, 1):.2f}, batches of {chunk})"
        )


# -- 2. real episodes -----------------------------------------------------------------------
def policy_jobs(names: list[str], overrides: list[str]) -> list[tuple[str, Any, str | None]]:
    """(label, algo config, checkpoint) per policy."""
    from experiments.compare_policies import algo_config, parse_entry
    from omegaconf import OmegaConf
    from experiments.run_config import compose_run_config

    from algos.training import checkpoint as ckpt

    jobs = []
    for name in names:
        if name == "handcrafted":
            label, algo, entry_overrides = parse_entry(HANDCRAFTED)
            composed = compose_run_config([f"algo={algo}", *overrides])
            jobs.append(("handcrafted (1+2+4)", algo_config(algo, entry_overrides, composed.algo), None))
        elif name == "learned":
            trained = ckpt.load(ckpt.resolve_checkpoint(str(CHECKPOINT)))["config"]
            jobs.append(("learned (QMIX checkpoint)", OmegaConf.create(trained["algo"]), str(CHECKPOINT)))
        else:
            raise SystemExit(f"--policies: unknown policy {name!r} (handcrafted, learned)")
    return jobs


def run_one(
    label: str, algo_cfg: Any, checkpoint: str | None, overrides: list[str], seed: int, trace_path: Path | None = None
) -> dict[str, Any]:
    import algos
    from omegaconf import OmegaConf
    from experiments.run_config import compose_run_config

    from algos.training import checkpoint as ckpt
    from algos.training.env_configs import make_env
    from algos.training.rollout import run_episode

    cfg = compose_run_config(["algo=random", *overrides])
    env_cfg = OmegaConf.to_container(cfg.env, resolve=True)
    env_cfg.update(env_cfg.pop("eval_overrides", None) or {})
    env = make_env(env_cfg, evaluation=True)
    spec = algos.EnvSpec.from_env(env)
    algo = algos.build(algo_cfg["name"], spec, algo_cfg, seed=0)
    if checkpoint:
        algo.load_state_dict(ckpt.load(checkpoint)["algo"])
    base = env.unwrapped if hasattr(env, "unwrapped") else env
    llm = base.backend._llm  # the process-wide llama.cpp instance of this env
    model_s = [0.0]
    inner = llm.create_chat_completion

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            model_s[0] += time.perf_counter() - t0

    llm.create_chat_completion = timed
    try:
        t0 = time.perf_counter()
        _, st = run_episode(env, algo, spec, explore=False, seed=seed)
        wall = time.perf_counter() - t0
    finally:
        del llm.create_chat_completion
    if trace_path is not None:
        base.trace.save(trace_path)
    calls = [c for rnd in base.trace.rounds for c in rnd["calls"] if not c.get("cached")]
    # With engine.conversation on: how many later chat turns the state of their agent's last turn served.
    batch = int(getattr(base.backend, "prompt_batch", 1))
    last: dict[str, int] = {}
    chat_turns = served = restarts = 0
    for rnd in base.trace.rounds:
        for c in sorted(rnd["calls"], key=lambda c: c["start_s"]):
            chat = rnd["agents"].get(c["agent"], {}).get("chat") if c["kind"] == "agent" else None
            if chat is None or c.get("cached"):
                continue
            restarts += bool(chat["restarted"])
            if chat["turn"] > 1 and c["agent"] in last:
                chat_turns += 1
                served += c["prompt_tokens_reused"] >= last[c["agent"]] // batch * batch
            last[c["agent"]] = c["prompt_tokens"]
    sent = sum(c["prompt_tokens"] for c in calls)
    evaluated = sum(c.get("prompt_tokens_evaluated", c["prompt_tokens"]) for c in calls)
    reused = sum(c.get("prompt_tokens_reused", 0) for c in calls)
    return {
        "label": label,
        "task": base.task.id,
        "rounds": st.length,
        "wall_s": wall,
        "model_s": model_s[0],
        "calls": len(calls),
        "sent": sent,
        "evaluated": evaluated,
        "reused": reused,
        "generated": sum(c["completion_tokens"] for c in calls),
        "score": float(base._report_score),
        "by_kind": {
            kind: [
                sum(c["prompt_tokens"] for c in calls if c["kind"] == kind),
                sum(c.get("prompt_tokens_evaluated", c["prompt_tokens"]) for c in calls if c["kind"] == kind),
            ]
            for kind in sorted({c["kind"] for c in calls})
        },
        "chat_turns": chat_turns,
        "chat_turns_served": served,
        "chat_restarts": restarts,
        "report": base.report.to_markdown(),
    }


def show_episode(r: dict[str, Any], own: dict[str, float], batch: int) -> None:
    own_s = r["evaluated"] / own[f"prompt_{batch}"] + r["generated"] / own["generate"]
    done = r["evaluated"] + r["generated"]
    print(
        f"  {r['label']:<26} chat {r['conversation']:<3} reuse {r['reuse']:<3} {r['task']}: {r['rounds']} rounds, wall {r['wall_s']:6.1f} s, "
        f"score {r['score']:.3f}, {r['calls']} calls"
    )
    print(
        f"    prompt tokens sent {r['sent']:,}, evaluated {r['evaluated']:,}, reused {r['reused']:,} "
        f"(evaluated/sent {r['evaluated'] / max(r['sent'], 1):.2f}); generated {r['generated']:,}"
    )
    print(
        f"    model time {r['model_s']:6.1f} s ({r['model_s'] / r['wall_s']:.0%} of the episode; "
        f"{1 - r['model_s'] / r['wall_s']:.0%} outside the model); {done / r['model_s']:6.1f} tokens evaluated/s; "
        f"llama.cpp's own speed needs {own_s:5.1f} s for them: effective/own {own_s / r['model_s']:.2f}"
    )
    print(
        "    by call kind, prompt tokens sent/evaluated: "
        + ", ".join(f"{kind} {sent:,}/{ev:,}" for kind, (sent, ev) in r["by_kind"].items())
    )
    if r["chat_turns"] or r["chat_restarts"]:
        print(
            f"    chats: {r['chat_turns_served']} of {r['chat_turns']} later turns served from their agent's last "
            f"state; {r['chat_restarts']} chat(s) restarted past engine.conversation_max_chars"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policies", default="handcrafted,learned", help="comma-separated: handcrafted, learned")
    ap.add_argument("--reuse", default="off,on", help="prompt reuse settings to run, in order: off, on or both")
    ap.add_argument(
        "--conversation",
        default="on",
        help="engine.conversation settings to run, in order: on (the report env's default), off or both",
    )
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1_000_000, help="the episode seed (transfer.py's eval seed)")
    ap.add_argument("--prompt-tokens", type=int, default=600)
    ap.add_argument("--gen-tokens", type=int, default=128)
    ap.add_argument("--own-only", action="store_true", help="measure llama.cpp's own speed and stop")
    ap.add_argument(
        "--own",
        default=None,
        metavar="PROMPT,GEN",
        help="llama.cpp's own prompt and generation tokens/s measured before (skips step 1; for parallel runs)",
    )
    ap.add_argument(
        "--traces",
        nargs="+",
        default=None,
        help="instead: replay these recorded trace.json files' agent prompts through the reuse rule (no model run)",
    )
    ap.add_argument("--save", default=None, help="write every episode's figures and report to this JSON file")
    ap.add_argument("--traces-out", default=None, help="write every episode's trace.json into this folder")
    ap.add_argument("overrides", nargs="*", help="train.py overrides (after --)")
    args = ap.parse_args()

    from experiments.run_config import compose_run_config

    from agents_llm.backends.models import resolve_model

    overrides = ["env=report_writing", f"env.max_rounds={args.rounds}", *args.overrides]
    cfg = compose_run_config(["algo=random", *overrides])
    batch = int(cfg.env.llm.get("prompt_batch", 512))
    if args.traces:
        for chunk in sorted({batch, 32}, reverse=True):
            replay_traces(args.traces, str(resolve_model(cfg.env.llm.model)), chunk, int(cfg.env.llm.reuse_states))
        return
    print(f"machine: {load()}")
    if args.own:
        prompt_speed, gen_speed = (float(x) for x in args.own.split(","))
        own = {f"prompt_{batch}": prompt_speed, "generate": gen_speed}
    else:
        own = own_speed(
            str(resolve_model(cfg.env.llm.model)),
            args.prompt_tokens,
            args.gen_tokens,
            sorted({512, batch}, reverse=True),
        )
    print(f"llama.cpp's own speed, {cfg.env.llm.model}, 1 thread, low-level API:")
    for key, value in own.items():
        what = f"prompt ({args.prompt_tokens} tokens, batches of {key[7:]})" if key != "generate" else "generation"
        extra = f" ({args.gen_tokens} tokens)" if key == "generate" else ""
        print(f"  {what}{extra}: {value:7.1f} tokens/s")
    if args.own_only:
        return
    results = []
    for label, algo_cfg, ckpt_path in policy_jobs(args.policies.split(","), overrides):
        for conversation in args.conversation.split(","):
            chat = [f"env.engine.conversation={conversation == 'on'}"]
            by_reuse = {}
            for reuse in args.reuse.split(","):
                reuse_flag = [f"llm.prompt_reuse={reuse == 'on'}"] if "prompt_reuse" in cfg.env.llm else []
                trace_path = None
                if args.traces_out:
                    name = f"{label.split()[0]}-chat_{conversation}-reuse_{reuse}.trace.json"
                    trace_path = Path(args.traces_out) / name
                r = run_one(label, algo_cfg, ckpt_path, overrides + chat + reuse_flag, args.seed, trace_path)
                r["reuse"], r["conversation"] = (reuse if reuse_flag else "n/a"), conversation
                print(f"machine: {load()}")
                show_episode(r, own, batch)
                by_reuse[reuse] = r
                results.append(r)
                if args.save:  # after every episode: partial results survive
                    Path(args.save).write_text(json.dumps({"own": own, "episodes": results}, indent=1))
            if {"on", "off"} <= set(by_reuse):
                same = by_reuse["on"]["report"] == by_reuse["off"]["report"]
                same_score = by_reuse["on"]["score"] == by_reuse["off"]["score"]
                print(
                    f"  reuse on vs off: same report {same}, same score {same_score}; wall "
                    f"{by_reuse['off']['wall_s']:.1f} -> {by_reuse['on']['wall_s']:.1f} s "
                    f"({by_reuse['off']['wall_s'] / by_reuse['on']['wall_s']:.2f}x)"
                )


if __name__ == "__main__":
    main()
