"""How long the trace viewer takes to load in headless Chromium (target: under 2 s).

    python experiments/timing/bench_viewer.py                    # 30 rounds, 5 agents, 5 loads
    python experiments/timing/bench_viewer.py --rounds 100 --repeats 3

Builds a synthetic trace, writes its HTML, then loads it `--repeats` times, each in a
fresh tab state (about:blank in between), and reports two figures per load:
`ready`: milliseconds from navigation start until BokehJS has built the page (the
DocumentReady event, read from `performance.now()` in the page), and `wall`: the
seconds Selenium waited from `get()` until that moment. The first is the load time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


from agents_llm.viz.headless_browser import browser_unavailable_reason, headless_chromium  # noqa: E402
from agents_llm.viz.synthetic_trace import make_trace  # noqa: E402
from agents_llm.viz.trace_steps import build_steps  # noqa: E402
from agents_llm.viz.trace_viewer import build_viewer_html  # noqa: E402

TARGET_S = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--agents", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--response-chars", type=int, default=1500, help="characters per agent response")
    args = parser.parse_args()
    reason = browser_unavailable_reason()
    if reason:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2

    doc = make_trace(rounds=args.rounds, n_agents=args.agents, seed=0, response_chars=args.response_chars)
    t0 = time.perf_counter()
    html = build_viewer_html(doc, "synthetic")
    build_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="bench-viewer-") as tmp:
        page = Path(tmp) / "viewer.html"
        page.write_text(html, encoding="utf-8")
        print(
            f"trace: {args.rounds} rounds, {args.agents} agents, {len(build_steps(doc))} steps; "
            f"HTML {page.stat().st_size / 1e6:.2f} MB built in {build_s:.2f} s"
        )
        ready_ms, wall_s = [], []
        with headless_chromium() as driver:
            for i in range(args.repeats):
                driver.get("about:blank")
                start = time.perf_counter()
                driver.get(page.as_uri())
                ready = None
                while ready is None and time.perf_counter() - start < 30:
                    ready = driver.execute_script("return window.__qmix_viewer_ready ?? null")
                    if ready is None:
                        time.sleep(0.01)
                if ready is None:
                    print(f"load {i + 1}: the page did not render within 30 s", file=sys.stderr)
                    return 1
                wall_s.append(time.perf_counter() - start)
                ready_ms.append(float(ready))
                print(f"load {i + 1}: ready {ready / 1000:.3f} s after navigation start (wall {wall_s[-1]:.3f} s)")
    median = statistics.median(ready_ms) / 1000
    print(
        f"median load time: {median:.3f} s (max {max(ready_ms) / 1000:.3f} s, median wall "
        f"{statistics.median(wall_s):.3f} s) -> {'under' if median < TARGET_S else 'OVER'} the {TARGET_S:.0f} s target"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
