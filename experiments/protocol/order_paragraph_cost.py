#!/usr/bin/env python
"""What the defence's order rules cost documentation written to inform: the sentences they leave unquotable.

    python experiments/protocol/order_paragraph_cost.py                 # the shipped corpora
    python experiments/protocol/order_paragraph_cost.py --held-out      # and every other installed package
    python experiments/protocol/order_paragraph_cost.py --show          # print each refused order sentence

A source sentence that gives an order (`addressed_orders.gives_order`) is never quoted, and a
source paragraph that holds one gives a report no sentence (`sentence_reuse.without_orders`).
On documentation written to inform, not to steer, every sentence either rule takes is a false
positive of the order shapes. Per corpus, printed: its sentences, those refused one by one as
orders (per kind) and as no language, those a report may quote, those left once ordering
paragraphs are dropped, and the share of all sentences lost to orders (one by one and through
their paragraphs).

The shipped corpora (python_stdlib, installed_packages) are where the order rules' false
positives were read and fixed: a dev measurement. `--held-out` adds `other_packages`, the long
descriptions of every installed distribution outside the shipped corpus (read by no rule's
author; what is installed follows the project's pinned install), the figure to quote.
"""

from __future__ import annotations

import argparse
from collections import Counter
from importlib import metadata

from agents_llm.addressed_orders import gives_order
from agents_llm.sentence_reuse import instruction_like, source_sentences, without_orders
from envs.report.corpora import CORPUS_PACKAGES, package_documents, stdlib_documents


def other_package_documents() -> dict[str, str]:
    """Every installed distribution's long description outside the shipped corpus, by name."""
    shipped = {name.lower().replace("_", "-") for name in CORPUS_PACKAGES}
    names = sorted(
        {
            str(dist.metadata["Name"])
            for dist in metadata.distributions()
            if dist.metadata["Name"] and str(dist.metadata["Name"]).lower().replace("_", "-") not in shipped
        }
    )
    return package_documents(names)


def cost(documents: dict[str, str], show: bool = False) -> tuple[int, Counter[str], int, int]:
    """(sentences, refused orders per kind, quotable one by one, quotable after the paragraph rule)."""
    total = single = kept = 0
    orders: Counter[str] = Counter()
    for name, text in sorted(documents.items()):
        sentences = source_sentences(text)
        total += len(sentences)
        for sentence in sentences:
            kind = gives_order(sentence)
            if kind:
                orders[kind] += 1
                if show:
                    print(f"  {kind:20} {name}: {' '.join(sentence.split())[:160]}")
        single += sum(not instruction_like(s) for s in sentences)
        kept += sum(not instruction_like(s) for s in source_sentences(without_orders(text)))
    return total, orders, single, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--held-out", action="store_true", help="also every installed package outside the corpus")
    parser.add_argument("--show", action="store_true", help="print every sentence refused as an order")
    args = parser.parse_args()
    corpora = [("python_stdlib", stdlib_documents), ("installed_packages", package_documents)]
    if args.held_out:
        corpora.append(("other_packages", other_package_documents))
    for name, load in corpora:
        documents = load()
        total, orders, single, kept = cost(documents, show=args.show)
        n_orders = sum(orders.values())
        kinds = ", ".join(f"{kind} {n}" for kind, n in orders.most_common()) or "none"
        print(
            f"{name}: {len(documents)} documents, {total} sentences; refused as orders {n_orders} "
            f"({n_orders / max(total, 1):.2%}: {kinds}); quotable one by one {single}, after the paragraph rule "
            f"{kept}; lost to orders "
            f"{(n_orders + single - kept) / max(total, 1):.2%} of all"
        )


if __name__ == "__main__":
    main()
