#!/usr/bin/env python
"""Episodes per hour with many episodes in flight (algos.training.vector_rollout).

    python experiments/timing/bench_rollout.py standin                  # N = 1, 4, 16, 64 vs the stand-in at 0.5 s/request
    python experiments/timing/bench_rollout.py standin --latency 0.5 --envs 1 4 16 64 --episodes-per-env 1
    python experiments/timing/bench_rollout.py llamacpp-server --envs 1 2   # the real llama_cpp.server with SmolLM2
    python experiments/timing/bench_rollout.py ray --workers 1 2          # the extractive team, Ray 1 vs 2 workers
    python experiments/timing/bench_rollout.py memory --envs 1 16         # resident memory per episode in flight
    python experiments/timing/bench_rollout.py llamacpp-batch             # batched decode / a process per core vs one call

standin: the report env (4 agents, 3 rounds, hashing embedding and reference judge) over
the OpenAI-compatible backend against agents_llm/backends/batching_standin.py (a TEST DOUBLE modelling
a batching GPU server: fixed latency per request up to its slots). Prints episodes/hour
and the speed-up over N = 1 as a share of the ideal N x.

ray: a CPU-bound workload, by default the extractive team (agents_llm/extractive: no LLM;
retrieval, rule work, token counting and judging are the CPU work) on the report env with
the hashing embedding; ``--env-override`` (Hydra-style ``key=value`` on the env config)
selects another, e.g. ``--env-override llm.backend=scripted``. Ray and the in-process
runner give the same episodes; only the wall time differs.

Figures measured on a busy machine are inflated by the other load: compare ratios
measured in one run.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

os.environ.setdefault("OMP_NUM_THREADS", "1")

HASHING_RAG = {"embedding": {"backend": "hashing"}}
HASHING_JUDGE = {"kind": "reference", "embedding": "hashing"}


def report_env_kwargs(llm: dict, max_rounds: int) -> dict:
    return dict(
        llm=llm, rag=HASHING_RAG, judge=HASHING_JUDGE, max_rounds=max_rounds, min_rounds_before_terminate=max_rounds
    )


def run_episodes(
    env_name: str,
    env_kwargs: dict,
    num_envs: int,
    episodes: int,
    *,
    backend_obj=None,
    workers: int = 0,
    algo_name: str = "preset",
    algo_cfg: dict | None = None,
) -> tuple[float, int]:
    """Wall seconds and finished episodes for `episodes` greedy episodes, `num_envs` in flight
    (on `workers` Ray actors when > 0)."""
    import algos
    import envs
    from algos.training.vector_rollout import VectorRollout

    algo_cfg = algo_cfg if algo_cfg is not None else {"topology": "chain", "append_every": 1}
    extra = {"backend": backend_obj} if backend_obj is not None else {}
    probe = envs.make(env_name, **env_kwargs, **extra)
    spec = algos.EnvSpec.from_env(probe)
    algo = algos.build(algo_name, spec, algo_cfg, seed=0)
    if workers:
        from algos.training.ray_rollout import RayRollout

        runner = RayRollout(
            env_name, env_kwargs, algo, spec, algo_name=algo_name, algo_cfg=algo_cfg, num_envs=num_envs, workers=workers
        )
        runner.run_episodes([(10_000 + i, 10_000 + i) for i in range(workers)], explore=False)  # warm the actors
    else:
        runner = VectorRollout(lambda: envs.make(env_name, **env_kwargs, **extra), algo, spec, num_envs=num_envs)
        runner.run_episodes([(10_000, 10_000)], explore=False)  # warm: store, judge, client
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        done = runner.run_episodes([(i, i) for i in range(episodes)], explore=False)
        seconds = time.perf_counter() - t0
        print(f"  ({(time.process_time() - c0) / max(episodes, 1):.2f} CPU s per episode in this process)", flush=True)
        if backend_obj is not None and not workers:
            runner.loop.run(backend_obj.aclose())
    finally:
        runner.close()
    if done.failures:
        print(f"  warning: {len(done.failures)} episodes dropped, first: {done.failures[0].reason}", file=sys.stderr)
    return seconds, len(done.results)


def table(rows: list[tuple], base_rate: float) -> None:
    print(f"{'N':>4} {'episodes':>8} {'seconds':>8} {'episodes/h':>11} {'speed-up':>9} {'of ideal N x':>12}")
    for n, eps, secs in rows:
        rate = eps / secs * 3600
        speedup = rate / base_rate
        print(f"{n:>4} {eps:>8} {secs:>8.1f} {rate:>11.0f} {speedup:>8.2f}x {speedup / n:>11.0%}")


def bench_server(
    url: str,
    model: str,
    envs_list: list[int],
    per_env: int,
    max_rounds: int,
    min_episodes: int,
    slots: int | None = None,
) -> None:
    from agents_llm.backends.openai_compat import OpenAIBackend

    rows = []
    for n in envs_list:
        backend = OpenAIBackend(model, base_url=url, json_mode="json_object_schema", max_concurrent_requests=slots)
        episodes = max(n * per_env, min_episodes)
        secs, done = run_episodes(
            "report_writing_v0", report_env_kwargs({"backend": "openai"}, max_rounds), n, episodes, backend_obj=backend
        )
        rows.append((n, done, secs))
        print(f"  N={n}: {done} episodes in {secs:.1f} s; most requests in flight {backend.max_in_flight}", flush=True)
    table(rows, rows[0][1] / rows[0][2] * 3600)


def cmd_standin(a) -> None:
    from agents_llm.backends.batching_standin import BatchingServer

    with BatchingServer(latency_s=a.latency, slots=a.slots) as server:
        print(
            f"stand-in batching server: {a.latency} s per request, {a.slots} slots; report env, {a.rounds} rounds, "
            f"preset chain policy"
        )
        bench_server(server.url, "stand-in", a.envs, a.episodes_per_env, a.rounds, a.min_episodes)
        print(f"server: {server.stats()}")


def cmd_llamacpp_server(a) -> None:
    import subprocess

    import httpx

    from agents_llm.backends.models import resolve_model
    from agents_llm.backends.batching_standin import free_port

    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(resolve_model("smollm2-135m")),
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--n_threads",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 120
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise SystemExit("llama_cpp.server did not start")
            time.sleep(0.5)
        print(f"llama_cpp.server (SmolLM2-135M, 1 thread) on {url}; report env, {a.rounds} rounds")
        bench_server(url, "smollm2", a.envs, a.episodes_per_env, a.rounds, a.min_episodes)
    finally:
        proc.terminate()
        proc.wait(10)


def parse_override(text: str):
    import yaml

    key, _, value = text.partition("=")
    return key, yaml.safe_load(value)


def cmd_ray(a) -> None:
    llm = {"backend": "extractive"}
    kwargs = report_env_kwargs(llm, a.rounds)
    for ov in a.env_override:
        key, value = parse_override(ov)
        node = kwargs
        *path, last = key.split(".")
        for p in path:
            node = node.setdefault(p, {})
        node[last] = value
    print(
        f"CPU-bound team: report_writing_v0 with {kwargs['llm']} (hashing embedding, reference judge), "
        f"{a.rounds} rounds, {a.num_envs} env(s) per worker, {a.episodes} episodes"
    )
    rows = []
    local_secs, local_done = run_episodes("report_writing_v0", kwargs, a.num_envs, a.episodes)
    print(f"  in-process: {local_done} episodes in {local_secs:.1f} s", flush=True)
    for w in a.workers:
        secs, done = run_episodes("report_writing_v0", kwargs, a.num_envs, a.episodes, workers=w)
        rows.append((w, done, secs))
        print(f"  Ray {w} worker(s): {done} episodes in {secs:.1f} s", flush=True)
    import ray

    ray.shutdown()
    print("(N below = Ray workers)")
    table(rows, rows[0][1] / rows[0][2] * 3600)


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cmd_memory(a) -> None:
    """Resident memory with N report envs and their episodes in flight, per episode."""
    import algos
    import envs
    from algos.training.vector_rollout import VectorRollout

    kwargs = report_env_kwargs({"backend": "scripted"}, a.rounds)
    spec = algos.EnvSpec.from_env(envs.make("report_writing_v0", **kwargs))
    algo = algos.build("qmix", spec, {}, seed=0)
    with VectorRollout(lambda: envs.make("report_writing_v0", **kwargs), algo, spec, num_envs=1) as warm:
        warm.run_episodes([(0, 0)], explore=True)  # the store, judge and torch are loaded
    base = rss_mb()
    print(
        f"resident memory after warm-up: {base:.0f} MB (qmix learner, scripted TEST DOUBLE backend, {a.rounds} rounds)"
    )
    for n in a.envs:
        runner = VectorRollout(lambda: envs.make("report_writing_v0", **kwargs), algo, spec, num_envs=n)
        runner.run_episodes([(i, i) for i in range(n)], explore=True)
        now = rss_mb()
        print(f"  N={n:>3}: {now:.0f} MB, +{now - base:.1f} MB, {(now - base) / n:.2f} MB per episode in flight")
        runner.close()


def batched_decode_tokens_per_s(model_path: str, sequences: int, new_tokens: int, threads: int = 1) -> float:
    """Greedy decode of `sequences` prompts together in one llama.cpp context (one
    llama_batch per step holding one token of every sequence); decode tokens/s."""
    import ctypes

    import llama_cpp as L

    L.llama_backend_init()
    mparams = L.llama_model_default_params()
    model = L.llama_model_load_from_file(model_path.encode(), mparams)
    cparams = L.llama_context_default_params()
    cparams.n_ctx, cparams.n_seq_max, cparams.n_batch = 512 * sequences, sequences, 512
    cparams.n_threads = cparams.n_threads_batch = threads
    ctx = L.llama_init_from_model(model, cparams)
    vocab = L.llama_model_get_vocab(model)
    n_vocab = L.llama_vocab_n_tokens(vocab)
    prompts = [
        f"Write one sentence about topic number {i}: sorting networks and parallel agents." for i in range(sequences)
    ]
    toks = []
    for text in prompts:
        buf = (L.llama_token * 256)()
        n = L.llama_tokenize(vocab, text.encode(), len(text.encode()), buf, 256, True, False)
        toks.append(list(buf[:n]))
    batch = L.llama_batch_init(512 * sequences, 0, sequences)

    def fill(items):  # items: (token, pos, seq, wants_logits)
        batch.n_tokens = len(items)
        for i, (tok, pos, seq, logit) in enumerate(items):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = tok, pos, 1
            batch.seq_id[i][0], batch.logits[i] = seq, 1 if logit else 0

    items = [(t, p, s, p == len(tk) - 1) for s, tk in enumerate(toks) for p, t in enumerate(tk)]
    fill(items)
    assert L.llama_decode(ctx, batch) == 0
    out_index = [i for i, it in enumerate(items) if it[3]]
    pos = [len(tk) for tk in toks]
    t0 = time.perf_counter()
    for _ in range(new_tokens):
        nxt = []
        for s, idx in enumerate(out_index):
            logits = L.llama_get_logits_ith(ctx, idx)
            arr = np.ctypeslib.as_array(ctypes.cast(logits, ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,))
            nxt.append(int(arr.argmax()))
        fill([(nxt[s], pos[s], s, True) for s in range(sequences)])
        assert L.llama_decode(ctx, batch) == 0
        out_index = list(range(sequences))
        pos = [p + 1 for p in pos]
    seconds = time.perf_counter() - t0
    L.llama_batch_free(batch)
    L.llama_free(ctx)
    L.llama_model_free(model)
    return sequences * new_tokens / seconds


def _one_process(args) -> float:
    path, tokens = args
    return batched_decode_tokens_per_s(path, 1, tokens)


def cmd_llamacpp_batch(a) -> None:
    """Can the in-process llama.cpp backend gain from concurrency on this CPU?"""
    import multiprocessing as mp

    from agents_llm.backends.models import resolve_model

    path = str(resolve_model("smollm2-135m"))
    print(f"SmolLM2-135M, 1 thread per context, greedy decode of {a.tokens} tokens per sequence")
    base = batched_decode_tokens_per_s(path, 1, a.tokens)
    print(f"  one sequence (what the llamacpp backend does, one call at a time): {base:.1f} tokens/s")
    for k in a.sequences:
        rate = batched_decode_tokens_per_s(path, k, a.tokens)
        print(f"  {k} sequences in one llama_batch per step: {rate:.1f} tokens/s in all ({rate / base:.2f}x)")
    with mp.get_context("spawn").Pool(a.processes) as pool:
        t0 = time.perf_counter()
        rates = pool.map(_one_process, [(path, a.tokens)] * a.processes)
        wall = time.perf_counter() - t0
    print(
        f"  {a.processes} model processes at once (one per core): {sum(rates):.1f} tokens/s in all "
        f"({sum(rates) / base:.2f}x; {wall:.1f} s wall with loading)"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("standin")
    s.add_argument("--latency", type=float, default=0.5)
    s.add_argument("--slots", type=int, default=64)
    s.add_argument("--envs", type=int, nargs="+", default=[1, 4, 16, 64])
    s.add_argument("--episodes-per-env", type=int, default=1)
    s.add_argument("--min-episodes", type=int, default=2)
    s.add_argument("--rounds", type=int, default=3)
    s = sub.add_parser("llamacpp-server")
    s.add_argument("--envs", type=int, nargs="+", default=[1, 2])
    s.add_argument("--episodes-per-env", type=int, default=1)
    s.add_argument("--min-episodes", type=int, default=2)
    s.add_argument("--rounds", type=int, default=1)
    s = sub.add_parser("ray")
    s.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    s.add_argument("--num-envs", type=int, default=4)
    s.add_argument("--episodes", type=int, default=200)  # enough that Ray's start-up and warm-up are not the figure
    s.add_argument("--rounds", type=int, default=8)
    s.add_argument("--env-override", action="append", default=[], help="key=value on the env config, repeatable")
    s = sub.add_parser("llamacpp-batch")
    s.add_argument("--sequences", type=int, nargs="+", default=[2, 4])
    s.add_argument("--processes", type=int, default=2)
    s.add_argument("--tokens", type=int, default=48)
    s = sub.add_parser("memory")
    s.add_argument("--envs", type=int, nargs="+", default=[1, 16, 64])
    s.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    import torch

    torch.set_num_threads(1)
    {
        "standin": cmd_standin,
        "llamacpp-server": cmd_llamacpp_server,
        "ray": cmd_ray,
        "memory": cmd_memory,
        "llamacpp-batch": cmd_llamacpp_batch,
    }[a.cmd](a)


if __name__ == "__main__":
    main()
