"""The LLM judge on the embedded SmolLM2-135M: it must run end to end without crashing.

A 135M model is no judge of quality; what this checks is the plumbing on a real model
(grammar-constrained schema output, context sizes, fallback) and it records whether the
model's answers were schema-valid.
"""

import asyncio
import time

import pytest

from agents_llm.backends import TokenLedger, make_backend
from agents_llm.judges import make_judge, make_reward_tracker
from agents_llm.report_state import ReportState, SourceRef

SECTIONS = [
    (
        "Solid electrolytes",
        "Garnet-type LLZO electrolytes reach ionic conductivities near one millisiemens per centimetre at room "
        "temperature. Sulfide electrolytes conduct even better but react with moisture and release hydrogen "
        "sulfide, so they must be processed in dry rooms.",
        [
            SourceRef(
                "review.pdf",
                4,
                "c1",
                "LLZO garnets reach about 1 mS/cm at 25 C; sulfides exceed 10 mS/cm but are moisture sensitive.",
            )
        ],
    ),
    (
        "Lithium metal anodes",
        "A lithium metal anode raises the energy density of a cell because it replaces the graphite host. "
        "Dendrites can still grow along grain boundaries of the electrolyte at high current densities.",
        [
            SourceRef(
                "anodes.pdf",
                2,
                "c7",
                "Dendrites penetrate ceramic electrolytes along grain boundaries above a critical current density.",
            )
        ],
    ),
    (
        "Outlook for electric vehicles",
        "Automakers plan pilot lines before large-scale production. Cost, manufacturing yield and cycle life "
        "decide when solid-state packs reach mass-market electric vehicles.",
        [],
    ),
]


@pytest.mark.slow
def test_llm_judge_on_smollm2_scores_a_small_report_without_crashing(record_property):
    backend = make_backend(
        {
            "backend": "llamacpp",
            "model": "smollm2-135m",
            "n_threads": 1,
            "timeout_s": 120.0,
            "retry": {"max_attempts": 2, "backoff_s": 0.0},
        }
    )
    judge = make_judge({"kind": "llm"}, backend=backend)
    grounder = make_judge({"kind": "reference", "embedding": "hashing"})  # measures the supported length
    tracker = make_reward_tracker(judge, {"kind": "llm"}, grounder=grounder)
    report = ReportState("Solid-state batteries for electric vehicles")
    ledger = TokenLedger()

    for title, content, sources in SECTIONS[:2]:
        report.append(title, content, sources)
    asyncio.run(tracker.after_append(report, ledger))
    report.append(*SECTIONS[2])
    micro_before = judge.micro_calls
    t0 = time.perf_counter()
    step = asyncio.run(tracker.after_append(report, ledger))
    elapsed = time.perf_counter() - t0

    result = step.judge
    assert 0.0 <= result.score <= 1.0 and 0.0 <= step.report_score <= 1.0
    assert judge.micro_calls - micro_before >= 1  # the new section's chunk, and none of the cached ones
    assert judge.micro_calls - micro_before <= 1 + judge.judge_retries
    record_property("schema_valid", not result.flagged)
    record_property("reason", result.reason)
    record_property("score", result.score)
    record_property("append_scoring_seconds", round(elapsed, 2))
    record_property("judge_tokens", ledger.total.total)
    print(
        f"\nSmolLM2 judge: score={result.score:.3f} flagged={result.flagged} reason={result.reason!r} "
        f"components={result.components} append scoring {elapsed:.1f} s, tokens={ledger.total.total}"
    )
