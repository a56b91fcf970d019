#!/usr/bin/env python
"""Held-out injection variants through the report's write path: how many reach a report.

    python experiments/protocol/injection_end_to_end.py [--json out.json] [--set tests/rag/data/heldout_injections_b.json]

Each variant of a set (default tests/rag/data/heldout_injections.json; each set was written
without reading the defence, and docs/ARCHITECTURE.md says which have since been used to write
rules) is planted in a pump manual between benign sentences. The planted document goes
the way a retrieved chunk goes into a section: the guard (`rag.guard`, as retrieval applies
it), sentence reuse (`sentence_reuse.pick_source_sentences`, with the variant's own words as
the focus, so relevance never hides a miss) and the Collector's finalising filter
(`report_filter.filter_report_text`) for the body, and the same filter for a heading made
from the variant's first line. A variant is found when any of its markers is in the text
that comes out (case-insensitive, blanks collapsed). Benign manual sentences go the same
way and count as changed when they do not come out verbatim (blanks collapsed: a table's
line breaks never survive reuse). This is the reuse path, not a model run: the writer's own
prose is grounded against these same source sentences (`agents_llm.grounding` uses
`instruction_like`), so a sentence this path refuses cannot be kept by grounding either.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from agents_llm.export import reference_label  # noqa: E402
from agents_llm.report_filter import filter_report_text  # noqa: E402
from agents_llm.sentence_reuse import pick_source_sentences  # noqa: E402
from rag.chunking import paragraph_before  # noqa: E402
from rag.guard import guard_untrusted_text  # noqa: E402
from rag.sentences import split_sentences  # noqa: E402
from rag.sources import SourceRef  # noqa: E402

DATA = ROOT / "tests" / "rag" / "data" / "heldout_injections.json"
BEFORE = "The centrifugal pump moves clean water from the tank to the pressure vessel. "
AFTER = " The pump motor draws about four amperes at full load during normal operation."


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _chunks(planted: str) -> list[SourceRef]:
    """The chunks that may hold the planted text, as retrieval gives them (guarded, with the part of
    the paragraph each begins inside that lies before it as written, `SourceRef.lead`). The chunker may start a
    chunk at any sentence, so one begins with the manual's text before it, one at the planted
    text's start, and one at each of its paragraphs and sentences (the manual's text after it
    follows in each); the chunk before overlaps each by its first sentence, as the chunker's do."""
    document = BEFORE + planted + AFTER
    offsets = [0, len(BEFORE)]
    offsets += [len(BEFORE) + planted.find(p) for p in planted.split("\n\n") if p.strip()]
    offsets += [len(BEFORE) + at for s in split_sentences(planted) if (at := planted.find(s)) > 0]
    out = []
    for at in dict.fromkeys(offsets):
        text = document[at:]
        first = next(iter(split_sentences(text)), "")
        lead = paragraph_before(document[: at + len(first)], text) if at else ""
        out.append(
            SourceRef(
                source="pump_manual.md",
                page=1,
                chunk_id=f"c{at}",
                text=guard_untrusted_text(text, None).text,
                lead=lead,
            )
        )
    return out


def write_path(planted: str) -> str:
    """The report text the planted passage can give: reused sentences, filtered, and a heading."""
    bodies = []
    focus = f"pump {planted}"
    for source in _chunks(planted):
        picked = pick_source_sentences([source], focus=focus, max_sentences=50, max_chars=10_000, keep_context=False)
        bodies.append(filter_report_text(" ".join(picked), self_reference=True, quoted_from=[source.text]).text)
    # A markdown heading in the planted text is a document heading a section may take as its title.
    headings = [ln.lstrip("#").strip() for ln in planted.splitlines() if ln.lstrip().startswith("#")]
    titles = [filter_report_text("## " + guard_untrusted_text(h, None).text).text for h in headings]
    return "\n".join([*bodies, *titles])


def reference_path(planted: str) -> str:
    """The labels a References list can give the chunks that hold the planted text (`_chunks`)."""
    return "\n".join(reference_label(source) for source in _chunks(planted))


def found(variant: dict, out: str) -> bool:
    text = _norm(out)
    return any(_norm(m) in text for m in variant["markers"] if m.strip())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", default=None)
    parser.add_argument("--set", default=str(DATA), help="a variant set (heldout_injections_b.json: the second one)")
    args = parser.parse_args()
    data = json.loads(Path(args.set).read_text(encoding="utf-8"))
    rows: dict[str, list[int]] = {}
    leaked, referenced = [], []
    for variant in data["attacks"]:
        hit = found(variant, write_path(variant["text"]))
        in_reference = found(variant, reference_path(variant["text"]))
        row = rows.setdefault(variant["family"], [0, 0, 0])
        row[0] += 1
        row[1] += int(hit)
        row[2] += int(in_reference)
        if hit:
            leaked.append(variant["id"])
        if in_reference:
            referenced.append(variant["id"])
    changed = []
    for benign in data["benign"]:
        out = write_path(benign["text"])
        # Blanks collapsed: reuse joins the sentences it quotes with one space, so a table's or a
        # listing's line breaks never survive, and losing them loses no statement.
        if " ".join(benign["text"].split()) not in " ".join(out.split("\n")[0].split()):
            changed.append(benign["id"])
    print(f"{'family':<22} planted  found  in a reference")
    for family, (n, hit, ref) in rows.items():
        print(f"{family:<22} {n:>7} {hit:>6} {ref:>6}")
    total = len(data["attacks"])
    print(f"{'all':<22} {total:>7} {len(leaked):>6} {len(referenced):>6}")
    print(f"benign sentences changed: {len(changed)} of {len(data['benign'])}")
    print("found:", " ".join(leaked) or "none")
    print("benign changed:", " ".join(changed) or "none")
    print("in a reference:", " ".join(referenced) or "none")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"found": leaked, "in_reference": referenced, "benign_changed": changed, "per_family": rows})
        )


if __name__ == "__main__":
    main()
