"""The portable llama.cpp build against another build (e.g. -march=native), on this CPU.

    python experiments/timing/bench_llama_build.py --other-wheel PATH [--rounds 5] [--prompt-tokens 600]

PATH is a llama-cpp-python wheel built with other flags, e.g. the native one::

    CMAKE_ARGS="-DLLAVA_BUILD=OFF" pip wheel --no-deps --no-cache-dir --no-binary llama-cpp-python \\
        llama-cpp-python==0.3.36 -w /tmp/native

It is unpacked into a temporary folder that shadows the installed package for its runs
only. Each measurement is a fresh process (one thread): a prompt of --prompt-tokens
tokens through the low-level API in batches, then --gen-tokens greedy tokens one at a
time. The two builds alternate, and which one goes first alternates each round, so
machine noise hits both alike. Prints prompt and generation tokens/s per build (median
over rounds) and the ratio portable / other.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import zipfile

# The child: load SmolLM2, time one batched prompt evaluation and one greedy generation.
CHILD = r"""
import json, sys, time, llama_cpp
from agents_llm.backends.models import resolve_model
n_prompt, n_gen = int(sys.argv[1]), int(sys.argv[2])
llm = llama_cpp.Llama(model_path=str(resolve_model("smollm2-135m")), n_ctx=n_prompt + n_gen + 16,
                      n_threads=1, n_threads_batch=1, n_batch=512, verbose=False)
words = ("the team writes a sourced report from retrieved evidence and reviews each claim "
         "against its source before the section is appended ").split()
tokens = []
i = 0
while len(tokens) < n_prompt:
    tokens = llm.tokenize(" ".join(words[j % len(words)] for j in range(i)).encode(), add_bos=True)
    i += 16
tokens = tokens[:n_prompt]
t0 = time.perf_counter(); llm.eval(tokens); t_prompt = time.perf_counter() - t0
t0 = time.perf_counter()
for _ in range(n_gen):
    tok = llm.sample(temp=0.0)
    llm.eval([tok])
t_gen = time.perf_counter() - t0
info = llama_cpp.llama_print_system_info().decode()
print(json.dumps({"prompt_tps": n_prompt / t_prompt, "gen_tps": n_gen / t_gen, "system_info": info,
                  "module": llama_cpp.__file__, "model": llm.model_path.rsplit("/", 1)[-1]}))
"""


def measure(site: str | None, n_prompt: int, n_gen: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if site is not None:
        env["PYTHONPATH"] = site + os.pathsep + os.getcwd()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(n_prompt), str(n_gen)], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise SystemExit(
            f"benchmark child ({site or 'installed build'}) exited {done.returncode}: {done.stderr[-800:]}"
        )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--other-wheel", required=True, help="a llama-cpp-python wheel built with other flags")
    ap.add_argument("--other-name", default="native", help="what to call that build in the table")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (one process per build per round)")
    ap.add_argument("--prompt-tokens", type=int, default=600)
    ap.add_argument("--gen-tokens", type=int, default=128)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="llama-other-") as site:
        with zipfile.ZipFile(args.other_wheel) as wheel:
            wheel.extractall(site)
        builds = {"portable": None, args.other_name: site}
        runs: dict[str, list[dict]] = {name: [] for name in builds}
        for r in range(args.rounds):
            order = list(builds) if r % 2 == 0 else list(reversed(builds))
            for name in order:
                runs[name].append(measure(builds[name], args.prompt_tokens, args.gen_tokens))
            print(
                f"round {r + 1}: "
                + "  ".join(f"{n} {runs[n][-1]['prompt_tps']:.0f}/{runs[n][-1]['gen_tps']:.1f}" for n in order),
                flush=True,
            )

    model = runs["portable"][0]["model"]
    print(f"\n{args.prompt_tokens}-token prompt, {args.gen_tokens} generated tokens, 1 thread, {model}")
    print(f"{'build':<10} {'prompt tok/s':>13} {'gen tok/s':>10}  llama.cpp reports")
    med = {}
    for name, rs in runs.items():
        med[name] = (statistics.median(x["prompt_tps"] for x in rs), statistics.median(x["gen_tps"] for x in rs))
        feats = [p.strip() for p in rs[0]["system_info"].split("|") if p.strip().endswith("= 1")]
        print(f"{name:<10} {med[name][0]:>13.0f} {med[name][1]:>10.1f}  {' '.join(f.split(' =')[0] for f in feats)}")
    other = args.other_name
    print(
        f"portable / {other}: prompt {med['portable'][0] / med[other][0]:.2f}x, "
        f"generation {med['portable'][1] / med[other][1]:.2f}x (median of {args.rounds} rounds)"
    )


if __name__ == "__main__":
    main()
