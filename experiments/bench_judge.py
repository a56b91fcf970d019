"""Does a judge order reports as a reader would? The validity suite, per judge.

For every good report of agents_llm/judges/validity (six topics of the default corpus)
and its named degradations, each judge scores every report. Printed per judge: the
scores per topic; the pairwise ordering accuracy (the share of required pairs it
orders right: good above each degradation, good + a good section above good, good
above good + a duplicated section), overall and per degradation kind; the highest junk
score; then the agreement between judges (Kendall's tau over all scored reports) and
what each judge cannot see by construction.

    python experiments/bench_judge.py                              # reference (MiniLM, hashing) + LLM judge
    python experiments/bench_judge.py --judges reference-hashing   # seconds
    python experiments/bench_judge.py --llm-model qwen2.5-coder-0.5b --llm-topics 2

The LLM judge runs on the embedded llama.cpp backend (`--llm-model`, default the best
local model installed); on CPU it costs minutes per report, so `--llm-topics` bounds it.
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents_llm.judges import make_judge  # noqa: E402
from agents_llm.judges.validity import (BLIND_SPOTS, DEGRADATIONS, JUNK, JUNK_CEILING, load_good_reports,  # noqa: E402
                                        score_suite, violations)

LLM_CANDIDATES = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m")


def reference(embedding: str):
    judge = make_judge({"kind": "reference", "embedding": embedding})
    return lambda report: judge.score_sync(report).score


def llm_judge(model: str):
    from agents_llm.backends import make_backend

    backend = make_backend({"backend": "llamacpp", "model": model})
    judge = make_judge({"kind": "llm"}, backend=backend)
    flagged = []

    def score(report):
        result = asyncio.run(judge.score(report))
        flagged.append(result.flagged)
        return result.score
    score.flagged = flagged
    return score


def pairs(results):
    """(kind, good score, other score) for every ordering the suite requires; the first must be higher."""
    for r in results:
        for kind, value in r.degraded.items():
            yield kind, r.good, value
        yield "append_good_section (must rise)", r.appended_good, r.good
        yield "append_duplicate_section (must fall)", r.good, r.appended_duplicate


def flat_scores(results):
    return [v for r in results for v in [r.good, *r.degraded.values(), r.appended_good, r.appended_duplicate]]


def report_judge(name, results, seconds):
    print(f"\n== {name}  ({seconds:.0f} s)")
    kinds = list(results[0].degraded)
    print(f"{'topic':22s} {'good':>6s} " + " ".join(f"{k[:9]:>9s}" for k in kinds) + f" {'+good':>6s} {'+dup':>6s}")
    for r in results:
        print(f"{r.task_id:22s} {r.good:6.3f} " + " ".join(f"{r.degraded[k]:9.3f}" for k in kinds)
              + f" {r.appended_good:6.3f} {r.appended_duplicate:6.3f}")
    by_kind: dict[str, list[bool]] = {}
    for kind, high, low in pairs(results):
        by_kind.setdefault(kind, []).append(high > low)
    total = [ok for oks in by_kind.values() for ok in oks]
    print(f"pairwise ordering accuracy: {sum(total) / len(total):.3f} ({sum(total)}/{len(total)} pairs)")
    for kind, oks in by_kind.items():
        print(f"  {kind:38s} {sum(oks) / len(oks):.2f}")
    junk = max(r.degraded[k] for r in results for k in JUNK if k in r.degraded)
    print(f"highest junk score ({', '.join(JUNK)}): {junk:.3f} (ceiling {JUNK_CEILING})")
    problems = violations(results)
    print(f"suite: {'PASS' if not problems else f'{len(problems)} violation(s)'}")
    for p in problems[:20]:
        print(f"  - {p}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judges", nargs="+", default=["reference-minilm", "reference-hashing", "llm"],
                        choices=["reference-minilm", "reference-hashing", "llm"])
    parser.add_argument("--llm-model", default=None, help=f"default: the first installed of {LLM_CANDIDATES}")
    parser.add_argument("--llm-topics", type=int, default=1, help="topics the (slow) LLM judge scores")
    args = parser.parse_args(argv)

    reports = load_good_reports()
    print(f"validity suite: {len(reports)} topics x ({len(DEGRADATIONS)} degradations + good + 2 appends)")
    print("degradations: " + ", ".join(DEGRADATIONS))
    scored = {}
    for name in args.judges:
        subset = reports
        if name == "llm":
            score = None
            for model in ([args.llm_model] if args.llm_model else LLM_CANDIDATES):
                try:
                    score = llm_judge(model)
                    break
                except Exception as error:  # a model that is not installed: say so, try the next
                    print(f"\nLLM judge: {model} unavailable ({type(error).__name__}: {str(error)[:160]})")
            if score is None:
                continue
            name = f"llm ({model})"
            subset = reports[:args.llm_topics]
        else:
            score = reference(name.split("-", 1)[1])
        started = time.perf_counter()
        results = score_suite(score, subset)
        scored[name] = results
        report_judge(name, results, time.perf_counter() - started)
        if getattr(score, "flagged", None):
            print(f"flagged (fallback) judgments: {sum(score.flagged)}/{len(score.flagged)}")

    if len(scored) > 1:
        print("\n== agreement (Kendall's tau over the reports both judges scored)")
        try:
            from scipy.stats import kendalltau
        except ImportError:
            kendalltau = None
            print("scipy is not installed: no Kendall's tau")
        for a, b in itertools.combinations(scored, 2):
            n = min(len(scored[a]), len(scored[b]))
            x, y = flat_scores(scored[a][:n]), flat_scores(scored[b][:n])
            if kendalltau is not None:
                tau, p = kendalltau(x, y)
                print(f"  {a} vs {b}: tau {tau:.3f} (p {p:.2g}, {len(x)} reports)")
    print("\n== what a judge cannot tell, by construction")
    for judge, spots in BLIND_SPOTS.items():
        for what, why in spots.items():
            print(f"  {judge}: {what}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
