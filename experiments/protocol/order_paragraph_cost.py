#!/usr/bin/env python
"""What the defence's paragraph rule costs a shipped corpus: the sentences it leaves unquotable.

    python experiments/protocol/order_paragraph_cost.py

A source paragraph that gives an order gives a report no sentence (`sentence_reuse.without_orders`).
On a corpus written to inform, not to steer, every sentence that rule takes is a false positive
of the order shapes (`addressed_orders.gives_order`). Per shipped corpus (python_stdlib,
installed_packages), printed: its sentences, those a report may quote sentence by sentence
(`instruction_like` refuses none of them), those left once ordering paragraphs are dropped,
and the share lost to the paragraph rule.
"""

from __future__ import annotations

from agents_llm.sentence_reuse import instruction_like, source_sentences, without_orders
from envs.report.corpora import package_documents, stdlib_documents


def cost(documents: dict[str, str]) -> tuple[int, int, int]:
    """(sentences, quotable one by one, quotable after the paragraph rule)."""
    total = single = kept = 0
    for text in documents.values():
        sentences = source_sentences(text)
        total += len(sentences)
        single += sum(not instruction_like(s) for s in sentences)
        kept += sum(not instruction_like(s) for s in source_sentences(without_orders(text)))
    return total, single, kept


def main() -> None:
    for name, documents in (("python_stdlib", stdlib_documents()), ("installed_packages", package_documents())):
        total, single, kept = cost(documents)
        print(
            f"{name}: {len(documents)} documents, {total} sentences; quotable one by one {single}, "
            f"after the paragraph rule {kept} ({(single - kept) / max(total, 1):.1%} of all lost to it)"
        )


if __name__ == "__main__":
    main()
