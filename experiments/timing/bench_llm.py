"""Overhead of our llamacpp backend over calling llama_cpp directly, on the same prompts.

    python experiments/timing/bench_llm.py [--rounds 3] [--max-tokens 96] [--model smollm2-135m]

Both paths use the same loaded model, greedy decoding and a fresh context per call (prompt
reuse off), and
alternate call by call so machine noise hits both alike. Prints the wall-time ratio
(ours / direct, in total and as the median of per-call pairs; target <= 1.02) and decode tokens/s. Texts must match exactly, so the
two paths do the same work.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

PROMPTS = [
    "Explain in a paragraph what a value-decomposition method in multi-agent RL does.",
    "Write three sentences on why reports need cited sources.",
    "Describe a communication graph between four agents.",
    "Summarise the trade-off between broadcast and selective queries in a team.",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="passes over the prompt set")
    ap.add_argument("--max-tokens", type=int, default=96, help="completion tokens per call")
    ap.add_argument("--model", default="smollm2-135m")
    args = ap.parse_args()

    from agents_llm.backends.llamacpp import LlamaCppBackend

    # Prompt reuse off on both paths: each call evaluates its whole prompt, so the paths do the
    # same work (bench_llm_episode.py measures what reuse saves).
    backend = LlamaCppBackend(args.model, n_ctx=2048, n_threads=1, prompt_reuse=False)
    llm = backend._llm  # the same process-wide instance the backend uses

    def direct(prompt: str) -> tuple[str, int]:
        llm.reuse = False
        llm.reset()
        out = llm.create_chat_completion(
            [{"role": "user", "content": prompt}], max_tokens=args.max_tokens, temperature=0.0, seed=0
        )
        return out["choices"][0]["message"]["content"], out["usage"]["completion_tokens"]

    def ours(prompt: str) -> tuple[str, int]:
        r = asyncio.run(
            backend.chat([{"role": "user", "content": prompt}], max_tokens=args.max_tokens, temperature=0.0, seed=0)
        )
        return r.text, r.completion_tokens

    direct(PROMPTS[0]), ours(PROMPTS[0])  # warm-up: page the weights in, build the thread pool
    t_direct = t_ours = 0.0
    tok_direct = tok_ours = 0
    paired: list[float] = []  # ours/direct per prompt: robust to a noisy neighbour's spikes
    for _ in range(args.rounds):
        for i, p in enumerate(PROMPTS):
            # alternate which path goes first, so neither always gets the warmer cache
            order = (("direct", direct), ("ours", ours)) if i % 2 == 0 else (("ours", ours), ("direct", direct))
            texts, times = {}, {}
            for name, fn in order:
                t0 = time.perf_counter()
                text, n = fn(p)
                dt = time.perf_counter() - t0
                texts[name], times[name] = text, dt
                if name == "direct":
                    t_direct += dt
                    tok_direct += n
                else:
                    t_ours += dt
                    tok_ours += n
            paired.append(times["ours"] / times["direct"])
            if texts["direct"] != texts["ours"]:
                raise SystemExit(f"outputs differ for prompt {i}: the paths are not doing the same work")
    calls = args.rounds * len(PROMPTS)
    print(f"model={args.model} calls/path={calls} max_tokens={args.max_tokens} completion_tokens/path={tok_ours}")
    print(f"direct llama_cpp : {t_direct:7.2f} s  {tok_direct / t_direct:6.1f} tok/s")
    print(f"our backend      : {t_ours:7.2f} s  {tok_ours / t_ours:6.1f} tok/s")
    print(
        f"wall-time ratio ours/direct = {t_ours / t_direct:.3f} total, {statistics.median(paired):.3f} median "
        f"of per-call pairs  (target <= 1.02)"
    )
    print(f"overhead per call = {(t_ours - t_direct) / calls * 1000:.1f} ms")


if __name__ == "__main__":
    main()
