"""Does a judge order reports as a reader would? The validity suite, per judge.

For every good report of agents_llm/judges/validity (twelve topics of the default corpus)
and its named degradations, each judge scores every report. Printed per judge: the time
per report, the scores per topic (`prefix`: the best of the good report's prefixes); the
pairwise ordering accuracy (the share of required pairs it orders right: good above each
degradation, good + a good section above good, good above good + a duplicated section,
no prefix above the whole), overall and per degradation kind; the highest junk
score; then the agreement between judges (Kendall's tau over all scored reports) and
what each judge cannot see by construction.

    python experiments/protocol/bench_judge.py                              # reference (MiniLM, hashing) + LLM judge
    python experiments/protocol/bench_judge.py --judges reference-hashing   # seconds
    python experiments/protocol/bench_judge.py --llm-model qwen2.5-coder-0.5b --llm-topics 2
    python experiments/protocol/bench_judge.py --episodes outputs/validation/episodes   # + the LLM team's reports

The LLM judge runs on the embedded llama.cpp backend (`--llm-model`, default the best
local model installed); on CPU it costs minutes per report, so `--llm-topics` bounds it.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time


from agents_llm.judges import make_judge  # noqa: E402
from experiments.protocol.episode_reports import load_episode_reports  # noqa: E402
from agents_llm.judges.validity import (
    BLIND_SPOTS,
    DEGRADATIONS,
    JUNK,
    JUNK_CEILING,
    load_good_reports,  # noqa: E402
    load_heldout_2_reports,
    load_heldout_3_reports,
    load_heldout_4_reports,
    load_heldout_reports,
    score_suite,
    violations,
)

LLM_CANDIDATES = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m")


def reference(embedding: str):
    judge = make_judge({"kind": "reference", "embedding": embedding})
    return lambda report: judge.score_sync(report).score


def llm_judge(model: str, timeout_s: float = 300.0, cache: bool = False):
    from agents_llm.backends import make_backend

    from envs.report.corpora import cache_root

    where = str(cache_root() / "llm_responses.sqlite")  # the response cache every run shares
    llm = {"backend": "llamacpp", "model": model, "timeout_s": timeout_s, "cache": {"enabled": cache, "path": where}}
    backend = make_backend(llm)
    judge = make_judge({"kind": "llm"}, backend=backend)
    flagged, reasons = [], []

    def score(report):
        result = asyncio.run(judge.score(report))
        flagged.append(result.flagged)
        if result.reason and result.flagged:
            reasons.append(result.reason)
        return result.score

    score.flagged, score.reasons = flagged, reasons
    return score


def pairs(results):
    """(kind, good score, other score) for every ordering the suite requires; the first must be higher."""
    for r in results:
        for kind, value in r.degraded.items():
            yield kind, r.good, value
        yield "append_good_section (must rise)", r.appended_good, r.good
        yield "append_duplicate_section (must fall)", r.good, r.appended_duplicate
        if r.appended_synonym is not None:
            yield "append_synonym_section (must rise)", r.appended_synonym, r.good
        for name, value in r.prefixes.items():
            yield "prefix (must not score more)", r.good + 1e-12, value  # a tie is allowed


def keyed_scores(results) -> dict:
    """{(topic, report): score} of every report a judge scored (the LLM judge may score a subset)."""
    out = {}
    for r in results:
        out[(r.task_id, "good")], out[(r.task_id, "+good")], out[(r.task_id, "+dup")] = (
            r.good,
            r.appended_good,
            r.appended_duplicate,
        )
        out.update({(r.task_id, k): v for k, v in r.degraded.items()})
    return out


def discordant(ka: dict, kb: dict, keys: list) -> list:
    """Report pairs the two judges order oppositely, the widest joint disagreement first, each
    pair as (the one judge a ranks higher, the other) -- the pairs to read to side with a judge."""
    out = []
    for k1, k2 in itertools.combinations(keys, 2):
        da, db = ka[k1] - ka[k2], kb[k1] - kb[k2]
        if da * db < 0:
            out.append(((k1, k2) if da > 0 else (k2, k1), min(abs(da), abs(db))))
    return sorted(out, key=lambda item: -item[1])


def report_episodes(name: str, episodes, scores: dict, seconds: float) -> None:
    print(f"\n== {name} on the LLM team's reports  ({seconds:.0f} s, {len(episodes)} reports)")
    print(f"{'report':44s} {'chars':>6s} {'score':>6s} {'env':>6s}")
    for e in episodes:
        recorded = "" if e.recorded_score is None else f"{e.recorded_score:6.3f}"
        print(f"{e.label:44s} {e.state.chars:6d} {scores[(e.task_id, f'episode {e.label}')]:6.3f} {recorded:>6s}")


def referee_table(reports) -> None:
    """Which referee flags fire on the sections of each degradation (hashing grounder), appended one a round."""
    from collections import Counter

    from agents_llm.judges.validity import other_report
    from agents_llm.referee import Referee, RefereeConfig
    from agents_llm.report_state import ReportState

    grounder = make_judge({"kind": "reference", "embedding": "hashing"})
    print("\n== referee (hashing grounder): share of sections flagged, and the flag kinds fired")
    states = {"good": lambda g, o: g.state(list(g.sections) + [g.extra_section]), **DEGRADATIONS}
    for kind, make in states.items():
        flagged = total = 0
        fired: Counter = Counter()
        for i, good in enumerate(reports):
            state = make(good, other_report(reports, i))
            ref, report = Referee(RefereeConfig(penalize=True), grounder=grounder), ReportState(state.topic)
            for sec in state.sections:
                added = report.append(sec.title, sec.content, list(sec.sources))
                flags = ref.review_round(report, changed_section=added.id)
                total += 1
                flagged += bool(flags)
                fired.update({f.kind for f in flags})
        share = f"{flagged}/{total}" if total else "0/0"
        print(f"  {kind:22s} {share:>7s}  {dict(sorted(fired.items()))}")


def report_judge(name, results, seconds):
    scored = sum(len(r.degraded) + 3 + len(r.prefixes) for r in results)
    print(f"\n== {name}  ({seconds:.0f} s, {scored} reports, {1000 * seconds / scored:.0f} ms per report)")
    kinds = list(results[0].degraded)
    print(
        f"{'topic':22s} {'good':>6s} "
        + " ".join(f"{k[:9]:>9s}" for k in kinds)
        + f" {'+good':>6s} {'+dup':>6s} {'prefix':>6s}"
    )
    for r in results:
        print(
            f"{r.task_id:22s} {r.good:6.3f} "
            + " ".join(f"{r.degraded[k]:9.3f}" for k in kinds)
            + f" {r.appended_good:6.3f} {r.appended_duplicate:6.3f} {max(r.prefixes.values(), default=0.0):6.3f}"
            + ("" if r.appended_synonym is None else f" {r.appended_synonym:6.3f}")
        )
    by_kind: dict[str, list[bool]] = {}
    for kind, high, low in pairs(results):
        by_kind.setdefault(kind, []).append(high > low)
    total = [ok for oks in by_kind.values() for ok in oks]
    print(f"pairwise ordering accuracy: {sum(total) / len(total):.3f} ({sum(total)}/{len(total)} pairs)")
    for kind, oks in by_kind.items():
        print(f"  {kind:38s} {sum(oks) / len(oks):.2f}")
    junk = [r.degraded[k] for r in results for k in JUNK if k in r.degraded]
    if junk:  # a judge asked for a subset of degradations may have scored no junk
        print(f"highest junk score ({', '.join(JUNK)}): {max(junk):.3f} (ceiling {JUNK_CEILING})")
    problems = violations(results)
    print(f"suite: {'PASS' if not problems else f'{len(problems)} violation(s)'}")
    for p in problems[:20]:
        print(f"  - {p}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--judges",
        nargs="+",
        default=["reference-minilm", "reference-hashing", "llm"],
        choices=["reference-minilm", "reference-hashing", "llm"],
    )
    parser.add_argument("--llm-model", default=None, help=f"default: the first installed of {LLM_CANDIDATES}")
    parser.add_argument("--llm-topics", type=int, default=1, help="topics the (slow) LLM judge scores")
    parser.add_argument("--llm-timeout", type=float, default=300.0, help="seconds per LLM judge call (CPU: long)")
    parser.add_argument(
        "--llm-kinds",
        nargs="+",
        default=None,
        choices=list(DEGRADATIONS),
        help="degradations the LLM judge scores (default: all); the good report and the two appends are always scored",
    )
    parser.add_argument("--no-referee", action="store_true", help="skip the referee's flags per degradation")
    parser.add_argument(
        "--episodes",
        nargs="+",
        default=[],
        help="folders of episode traces (trace.json) whose final reports every judge also scores "
        "(experiments/protocol/episode_reports.py says how a report is rebuilt from a trace)",
    )
    parser.add_argument(
        "--llm-cache",
        action="store_true",
        help="keep the LLM judge's answers in the response cache: a rerun after an interrupt replays them",
    )
    parser.add_argument(
        "--llm-episodes",
        type=int,
        default=None,
        help="episode reports the (slow) LLM judge scores: the first N in task order, whole tasks first (default: all)",
    )
    parser.add_argument("--disagreements", type=int, default=10, help="discordant report pairs printed per judge pair")
    parser.add_argument(
        "--part",
        choices=["suite", "heldout", "heldout_2", "heldout_3", "heldout_4"],
        default="suite",
        help="the suite's twelve topics, or a held-out part: six topics outside the corpus (heldout and heldout_2: "
        "written blind to the judge's rules, read since while it was mended, so dev parts now; heldout_3: its violation lines read, "
        "texts not; heldout_4: blind)",
    )
    args = parser.parse_args(argv)

    reports = {
        "suite": load_good_reports,
        "heldout": load_heldout_reports,
        "heldout_2": load_heldout_2_reports,
        "heldout_3": load_heldout_3_reports,
        "heldout_4": load_heldout_4_reports,
    }[args.part]()
    episodes = sorted(load_episode_reports(args.episodes), key=lambda e: (e.task_id, e.label)) if args.episodes else []
    if episodes:
        rebuilt = sum(not e.exact for e in episodes)
        print(f"episode reports: {len(episodes)} ({rebuilt} rebuilt from Markdown and their cited files)")
    print(f"validity suite: {len(reports)} topics x ({len(DEGRADATIONS)} degradations + good + 2 appends)")
    print("degradations: " + ", ".join(DEGRADATIONS))
    scored: dict = {}
    episode_scores: dict[str, dict] = {}
    for name in args.judges:
        subset = reports
        if name == "llm":
            score = None
            for model in [args.llm_model] if args.llm_model else LLM_CANDIDATES:
                try:
                    score = llm_judge(model, args.llm_timeout, args.llm_cache)
                    break
                except Exception as error:  # a model that is not installed: say so, try the next
                    print(f"\nLLM judge: {model} unavailable ({type(error).__name__}: {str(error)[:160]})")
            if score is None:
                continue
            name = f"llm ({model})"
            subset = reports[: args.llm_topics]
            kinds = args.llm_kinds or list(DEGRADATIONS)
            print(
                f"\nLLM judge on {model}: {len(subset)} topic(s) ({', '.join(r.task_id for r in subset)}), "
                f"{len(kinds)} degradation(s): {', '.join(kinds)}"
            )
        else:
            score = reference(name.split("-", 1)[1])
        started = time.perf_counter()
        results = score_suite(score, subset, kinds if name.startswith("llm") else None)
        scored[name] = results
        report_judge(name, results, time.perf_counter() - started)
        if episodes:
            started = time.perf_counter()
            mine = episodes[: args.llm_episodes] if name.startswith("llm") else episodes
            episode_scores[name] = {(e.task_id, f"episode {e.label}"): score(e.state) for e in mine}
            report_episodes(name, mine, episode_scores[name], time.perf_counter() - started)
        if getattr(score, "flagged", None):
            print(f"flagged (fallback) judgments: {sum(score.flagged)}/{len(score.flagged)}")
            for reason in score.reasons[:10]:
                print(f"  - {reason[:300]}")

    if len(scored) > 1:
        print("\n== agreement (Kendall's tau over the reports both judges scored)")
        try:
            from scipy.stats import kendalltau
        except ImportError:
            kendalltau = None
            print("scipy is not installed: no Kendall's tau")
        for a, b in itertools.combinations(scored, 2):
            ka = {**keyed_scores(scored[a]), **episode_scores.get(a, {})}
            kb = {**keyed_scores(scored[b]), **episode_scores.get(b, {})}
            common = sorted(set(ka) & set(kb))
            x, y = [ka[k] for k in common], [kb[k] for k in common]
            if kendalltau is not None:
                tau, p = kendalltau(x, y)
                print(f"  {a} vs {b}: tau {tau:.3f} (p {p:.2g}, {len(x)} reports)")
                real = [k for k in common if k[1].startswith("episode ")]
                if len(real) > 2:
                    tau, p = kendalltau([ka[k] for k in real], [kb[k] for k in real])
                    print(f"    on the LLM team's reports alone: tau {tau:.3f} (p {p:.2g}, {len(real)} reports)")
            for (k1, k2), gap in discordant(ka, kb, common)[: args.disagreements]:
                print(f"    {a} puts {k1} ({ka[k1]:.3f}) above {k2} ({ka[k2]:.3f}); {b}: {kb[k1]:.3f} vs {kb[k2]:.3f}")
    if not args.no_referee:
        referee_table(reports)
    print("\n== what a judge cannot tell, by construction")
    for judge, spots in BLIND_SPOTS.items():
        for what, why in spots.items():
            print(f"  {judge}: {what}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
