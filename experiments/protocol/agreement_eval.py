"""How well does the agreement check tell a faithful restatement from a contradiction?

Scores `agents_llm.judges.agreement.check_agreement` on the labelled set
agents_llm/judges/validity/contradictions.json (sentence pairs from ten hand-written documents outside
the validity suite; half contradictions). Printed: balanced accuracy, precision and recall of
"contradicts", per split (`dev`: documents looked at while writing the rules; `heldout`: never looked
at, the figure to quote) and per kind of contradiction; `--errors` lists the pairs it gets wrong.

    python experiments/protocol/agreement_eval.py
    python experiments/protocol/agreement_eval.py --split dev --errors
    python experiments/protocol/agreement_eval.py --against document   # each claim against its whole document
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from importlib import resources


from agents_llm.judges.agreement import check_agreement  # noqa: E402


def load_pairs() -> tuple[dict, list[dict]]:
    raw = json.loads((resources.files("agents_llm.judges.validity") / "contradictions.json").read_text("utf-8"))
    return raw["documents"], raw["pairs"]


def figures(rows: list[tuple[dict, bool]]) -> str:
    tp = sum(p["label"] == "contradicts" and flagged for p, flagged in rows)
    fn = sum(p["label"] == "contradicts" and not flagged for p, flagged in rows)
    tn = sum(p["label"] == "entails" and not flagged for p, flagged in rows)
    fp = sum(p["label"] == "entails" and flagged for p, flagged in rows)
    recall = tp / (tp + fn) if tp + fn else float("nan")
    specificity = tn / (tn + fp) if tn + fp else float("nan")
    precision = tp / (tp + fp) if tp + fp else float("nan")
    return (
        f"balanced accuracy {(recall + specificity) / 2:.3f}  (contradictions caught {tp}/{tp + fn} = {recall:.3f}, "
        f"restatements kept {tn}/{tn + fp} = {specificity:.3f}, precision {precision:.3f}; {len(rows)} pairs)"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["dev", "heldout", "all"], default="all")
    parser.add_argument("--errors", action="store_true", help="print the pairs it gets wrong")
    parser.add_argument(
        "--against",
        choices=["sentence", "document"],
        default="sentence",
        help="check each claim against its source sentence (the labelled pair), or against the whole document "
        "(harder: the check must find the sentence, and a number stated elsewhere in the document passes)",
    )
    args = parser.parse_args(argv)
    documents, pairs = load_pairs()
    by_split: dict[str, list] = defaultdict(list)
    for p in pairs:
        split = documents[p["doc"]]["split"]
        if args.split != "all" and split != args.split:
            continue
        source = p["source"] if args.against == "sentence" else documents[p["doc"]]["text"]
        result = check_agreement(p["claim"], source)
        by_split[split].append((p, not result.agrees))
        by_split["all"].append((p, not result.agrees))
        if args.errors and (p["label"] == "contradicts") == result.agrees:
            print(
                f"[{split} {p['label']}/{p['kind']} -> {result.reason or 'agrees'} {result.detail}]\n  S: {p['source']}\n  C: {p['claim']}"
            )
    print(f"claims checked against their source {args.against}")
    for split in ("dev", "heldout", "all"):
        if by_split.get(split):
            print(f"{split:8s} {figures(by_split[split])}")
    rows = by_split["all"]
    for kind in sorted({p["kind"] for p, _ in rows}):
        sub = [(p, f) for p, f in rows if p["kind"] == kind]
        right = sum((p["label"] == "contradicts") == f for p, f in sub)
        print(f"  {kind:12s} {right}/{len(sub)} right")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
