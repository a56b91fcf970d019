"""The extractive team: the report env's roles with no language model, where who talks to
whom changes the report.

Selected with `llm=extractive` (its `backend` is `extractive`; there is no model). Same
env API, actions, masks, observations, state, judges, trace and viewer as the LLM team:
`ExtractiveEngine` subclasses the LLM team's `RoundEngine`, so plans, edge timing, the
topological order, memory (an agent's previous output), the SourceBuffer, the token
budget and the trace records are the same code. What differs is only what each agent
says, which follows fixed rules from what it actually has: its messages (the inbox),
its own previous output, and what every LLM prompt shows (topic, current objective,
section titles, progress summary). A round takes milliseconds (retrieval and the
judge's embeddings are the cost; retrievals are memoised, the store does not change).

It is a cheap proxy of the LLM team for algorithm work, not a test double: results on
it are results on the proxy, and transfer to the LLM team is measured, not assumed.

The rules are versioned (``env.extractive.version``, ``settings.ExtractiveSettings``):
v2, the default, has each role do what the LLM role is asked to do from what it has
(``rules_v2``; docs/extractive_team.md, "Proxy v2", lists what differs from v1); v1,
below, stays runnable by name (``env=report_writing_extractive_v1``).

The v1 rules (fixed before any learner was trained on it; a change means rerunning every
policy, fixed ones included, and saying why):

* Researcher (the only role that retrieves). Queries: the deficiencies it received
  (`DEFICIENCIES:` lines), then the headings it received (`OBJECTIVE:` and `- ` outline
  lines), then the current objective; each not sharing a word with the topic gets the
  topic appended; at most `engine.max_queries`; the topic alone when it has none of
  these. Output: sentences of the retrieved chunks' running text (hard-wrapped lines
  joined; headings, lists, tables, code and badges left out) that are prose (6-60
  words, no code, links or markup), ranked by how many query terms they share (then chunk rank,
  then position), preferring ones not already in its previous output or its inbox, no
  near-duplicates, one per line, each ending `[source: file, p. N]`. Nothing retrieved:
  `[RESEARCH_EXHAUSTED] nothing relevant found for: ...`, as in the LLM team. Every
  retrieved chunk goes into the SourceBuffer.
* LeadArchitect. Key terms seen: the deficiencies it received, then the most frequent
  content words (4+ letters, not stopwords, not topic words; ties to the longer word)
  of the sentences of its messages and, once anything arrived, of the progress summary. Output: `OBJECTIVE: <first term not yet a
  section title>` and up to three `- <term>` outline lines. With nothing received:
  the generic outline (Background, Core concepts, Applications, Limitations). Its
  objective line sets the current team objective (as in the LLM team).
* DataAnalyst. The quantitative (a digit) and definitional ("is a", "refers to",
  "defined as", "consists of", "known as", "provides", ...) sentences of its messages
  and previous output, sources kept, near-duplicates removed; nothing when none.
* Reviewer. The sentences of its messages and previous output without near-duplicates
  (word-set Jaccard >= 0.8), preceded by `DEFICIENCIES: a; b` listing up to four terms
  of the brief that neither its messages, the section titles nor the progress summary
  cover. The brief: the task's key terms, then the headings it received.
* Collector. The appended sentences (meta lines dropped, sources tags stripped,
  near-duplicates of each other and of the previous section removed), under the
  current objective as heading (`Section N` without one), through the report filter;
  pending sources flush into the section (references), as in the LLM team. The
  Summarizer's summary: the section titles so far and the new section's first
  sentence. Revisions (handcrafted plans) replace the section's text.
* Gate checks (handcrafted `llm_gatecheck`): YES when the agent has a previous output.
* Every output is cut to whole lines within the call's token budget (`engine.*_max_tokens`),
  as a capped generation would be. Rules do not depend on the plan's phase label;
  prompts (hence token costs) do, exactly as in the LLM team.

Token cost: each call the LLM team would make (Researcher: query + answer; others:
one; Collector: prose + summary; gate) is charged the tokens of the prompt the LLM
team would have sent, built by the same prompt builders (`agents_llm.prompts`,
`agents_llm.phase_prompts`), plus the output's tokens, with SmolLM2's tokenizer
(`llm.tokenizer_model`). Broadcasting puts one output into every receiver's prompt,
so it costs what it would cost the LLM team.

What it models: who receives whose output, and that an agent can only work from what
reached it; retrieval driven by what the Researcher was told; the cost of prompts;
repetition when the same material is appended twice; grounding when retrieved text
reaches the report (and its absence when it does not). What it does not model: an
LLM's paraphrase, synthesis or hallucination (every sentence is a source sentence, so
grounding is high whenever sources are attached), prompt-following failures, output
quality varying with prompt length, latency, or the LLM judge (use `judge=reference`).
The Reviewer's checklist includes the task's key terms, which LLM prompts do not show.
"""

from __future__ import annotations

import importlib
from typing import Any

# Loaded on first use (PEP 562), so that a role importing `extractive.rules_v2` does not run
# the engine and its Collector, which import the prompts and through them the roles: importing
# a submodule runs this file first.
_EXPORTS = {
    "ExtractiveCollector": ".collector",
    "ExtractiveEngine": ".engine",
    "ExtractiveSettings": ".settings",
    "TokenCounter": ".tokens",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)


__all__ = ["ExtractiveCollector", "ExtractiveEngine", "ExtractiveSettings", "TokenCounter"]
