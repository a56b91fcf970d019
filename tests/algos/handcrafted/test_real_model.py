"""The handcrafted pipeline on the embedded model (SmolLM2-135M through llama.cpp).

Slow: a few minutes on a 2-core CPU with short phases and small token budgets. It checks
what a real run must deliver whatever the small model says: a report with sections and
a references section from the retrieved sources, exported files, and a trace whose rounds
follow the phases.
"""

from __future__ import annotations

import asyncio
import json

import pytest

pytestmark = pytest.mark.slow

DOCS = {
    "sorting.md": (
        "# Sorting networks\n\nA sorting network is a fixed sequence of compare-and-swap operations on "
        "pairs of wires. Batcher's odd-even merge sort builds networks of depth O(log^2 n). The AKS "
        "network reaches depth O(log n) with large constants. Because the comparisons do not depend on "
        "the data, sorting networks suit hardware and GPUs.\n"
    ),
    "bitonic.md": (
        "# Bitonic sort\n\nBitonic sort, introduced by Ken Batcher in 1968, first builds a bitonic "
        "sequence and then merges it with half-cleaners. A bitonic network for n inputs has depth "
        "(log n)(log n + 1)/2. Its total work is O(n log^2 n), more than merge sort, so on one CPU core a "
        "comparison sort such as merge sort is usually faster.\n"
    ),
}
ROUNDS = {"planning": 1, "research": 2, "drafting": 4, "review": 1, "revision": 2}


def test_real_run_writes_a_report_with_sections_references_and_trace(tmp_path):
    pytest.importorskip("llama_cpp")
    from report_app import write_report

    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text)
    result = asyncio.run(
        write_report(
            "Sorting networks for parallel hardware",
            docs,
            data_root=tmp_path / "data",
            output_root=tmp_path / "out",
            algo={"rounds": ROUNDS},
            rag={"embedding": {"backend": "hashing"}},
            judge={"kind": "reference", "embedding": "hashing"},
            engine={
                "agent_max_tokens": 64,
                "query_max_tokens": 24,
                "collector_max_tokens": 160,
                "summary_max_tokens": 48,
            },
        )
    )
    report = result.report
    print(
        f"\nreal run: {result.seconds:.0f} s, {result.rounds} rounds, {result.tokens['total_tokens']} tokens, "
        f"{len(report.sections)} sections, {report.chars} chars, references {len(report.all_sources())}"
    )
    assert report.sections, "the pipeline wrote no section"
    assert all(s.content.strip() for s in report.sections)
    labels = {r.source for r in report.all_sources()}
    assert labels and labels <= set(DOCS), labels
    md = (result.output_dir / "report.md").read_text()
    assert "## References" in md and any(f". {name}" in md for name in DOCS)
    assert (result.output_dir / "report.tex").exists()
    assert result.tokens["total_tokens"] > 0 and result.tokens["completion_tokens"] > 0

    trace = json.loads((result.output_dir / "trace.json").read_text())
    phases = [r["phase"] for r in trace["rounds"]]
    order = [p for i, p in enumerate(phases) if i == 0 or phases[i - 1] != p]
    assert order[:3] == ["planning", "research", "drafting"], phases
    assert all(phases.count(p) <= n for p, n in ROUNDS.items())
    assert trace["end"]["reason"] == "terminated"
    appended = [r for r in trace["rounds"] if r["collector"]["status"] == "appended"]
    assert appended and all(r["phase"] == "drafting" for r in appended)
