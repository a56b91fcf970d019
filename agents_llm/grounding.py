"""Grounding the writer's prose sentence by sentence in the sources it cites.

Prose that the Collector keeps (`sentence_reuse.why_reuse`) is grounded sentence by sentence
(`ground_in_sources`): a larger model (qwen2.5-coder-0.5b) paraphrases, and a paraphrase that
merges the vocabulary of several chunks reads as supported by their union while no source says
it. Each sentence is measured against its best single source sentence: one close to it, naming
nothing that sentence does not, stays in the writer's words, one that only paraphrases it gives
way to that source sentence, and one that no source sentence supports is dropped. The writer
still chooses which facts, in which order; the words are the sources' wherever the writer's
are not.

With an embedding (`meaning=`, write_report's default), a sentence is also read by meaning,
as the judge reads it: one whose words differ from its source sentence stays in the
writer's words when it is as close in meaning to that one sentence as the judge's
grounding band calls fully grounded (`MeaningCheck.level`, the band's ceiling), shares at least
`SNAP_SHARE` of its content words with it, and every specific it names (a number, an
identifier, a command, a capitalised name) is in that sentence. Merging two sources or
changing a number still gives way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from .text.bands import GROUNDING_BANDS
from .text.split import sentences, words
from .sentence_reuse import (
    KEEP_SHARE,
    SNAP_SHARE,
    content_stems,
    instruction_like,
    is_prose,
    source_sentences,
    without_orders,
)


def _best_source_sentence(stems: set[str], candidates: Sequence[tuple[str, set[str]]]) -> tuple[float, str]:
    """(share of `stems` in the best candidate, that candidate's text); (0.0, "") when there is none."""
    best_share, best = 0.0, ""
    for text, cand in candidates:
        share = len(stems & cand) / len(stems)
        if share > best_share:
            best_share, best = share, text
    return best_share, best


@dataclass(frozen=True)
class MeaningCheck:
    """Reads sentences by meaning: `embed` maps texts to vectors (an `rag` embedding's
    `embed_documents`), and a written sentence whose cosine to one source sentence reaches
    `level` says what that sentence says."""

    embed: Callable[[Sequence[str]], np.ndarray]
    level: float

    @classmethod
    def for_embedding(cls, embedding: object) -> "MeaningCheck | None":
        """The check on the judge's terms for `embedding` (its identity names the model): the
        level is the top of the judge's grounding band for it; None for an embedding the judge
        has no band for."""
        identity = str(getattr(embedding, "identity", ""))
        kind = next((k for k in GROUNDING_BANDS if identity.startswith(k)), None)
        embed = getattr(embedding, "embed_documents", None)
        if kind is None or embed is None:
            return None
        return cls(embed=embed, level=GROUNDING_BANDS[kind][1])

    def cosines(self, said: Sequence[str], sources: Sequence[str]) -> np.ndarray:
        """(len(said), len(sources)) cosine similarities."""
        if not said or not sources:
            return np.zeros((len(said), len(sources)))
        a, b = (
            np.asarray(self.embed(list(said)), dtype=np.float64),
            np.asarray(self.embed(list(sources)), dtype=np.float64),
        )
        a /= np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
        b /= np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
        return a @ b.T


# What a sentence names that a paraphrase must not change: numbers, code and identifiers
# (digits, _ . / ( ) - = inside a word), and capitalised or all-caps names after the first word.
_SPECIFIC = re.compile(r"[\w.\-/=()]*\d[\w.\-/=()]*|[\w./=()-]*[_/=()][\w./=()-]*|\w+\.\w+[\w.]*")


def specifics(sentence: str) -> set[str]:
    """The specifics a sentence names (see `_SPECIFIC`), lower-cased, end punctuation off."""
    tokens = sentence.split()
    out = {m.group(0).strip(".,;:()").lower() for m in _SPECIFIC.finditer(sentence)}
    for t in tokens[1:]:
        w = t.strip(".,;:()\"'")
        if len(w) > 1 and (w.isupper() or (w[:1].isupper() and any(c.isupper() for c in w[1:]))):
            out.add(w.lower())
    return {x for x in out if x}


def names_only_what_it_says(sentence: str, source: str) -> bool:
    """Is every specific of `sentence` in `source` (case aside), as a whole token? A name is
    not found inside a longer one: "frac()" is not in "fractions", "3.1" not in "3.11"; a
    plural "s" after it is allowed ("UUID" in "UUIDs")."""
    said = source.lower()
    return all(re.search(rf"(?<![\w]){re.escape(x)}(?:e?s)?(?![\w]|\.\w)", said) for x in specifics(sentence))


def ground_in_sources(
    body: str, source_texts: Sequence[str], exclude: Iterable[str] = (), meaning: MeaningCheck | None = None
) -> tuple[str, str]:
    """`body` with every sentence grounded in one source sentence, and what changed ("" = nothing).

    Per paragraph, per sentence: kept when at least `KEEP_SHARE` of its content words are
    in one source sentence and every specific it names is too (`names_only_what_it_says`: a
    sentence that swaps a name or a number for another keeps most words); replaced by that
    sentence when the share is at least `SNAP_SHARE` and the source sentence reads as prose;
    dropped otherwise, and also when its source sentence is already in the section or in the
    report (`exclude`): the sentence restates a fact the report has. The body's last sentence, when it has no end
    punctuation (the writer ran out of tokens mid-sentence), is never kept in the writer's
    words: its source sentence stands in for it, or it is dropped. Paragraphs that are
    headings stay as they are when prose follows them; a heading left with no prose under
    it is dropped.
    """
    candidates = [  # an instruction in a source, or its paragraph, supports nothing: a sentence repeating it is dropped
        (src.strip(), content_stems(src))
        for text in source_texts
        for src in source_sentences(without_orders(text))
        if content_stems(src) and not instruction_like(src)
    ]
    seen = {" ".join(words(s)) for s in exclude}
    kept = replaced = dropped = by_meaning = 0
    paragraphs = []
    blocks = [p for p in re.split(r"\n\s*\n", body) if p.strip()]
    units = [None if p.lstrip().startswith("#") else _units(p) for p in blocks]
    closeness: dict[str, np.ndarray] = {}
    if meaning is not None and candidates:
        said_all = [x for us in units if us for _, u in us for x in sentences(u) if content_stems(x)]
        closeness = dict(zip(said_all, meaning.cosines(said_all, [c[0] for c in candidates])))
    for number, paragraph in enumerate(blocks):
        block_units = units[number]
        if block_units is None:
            paragraphs.append(paragraph.strip())
            continue
        lines_out = []
        for unit_index, (marker, unit) in enumerate(block_units):
            out = []
            said_sentences = sentences(unit)
            last_unit = number == len(blocks) - 1 and unit_index == len(block_units) - 1
            for position, sentence in enumerate(said_sentences):
                stems = content_stems(sentence)
                if not stems:
                    continue
                if len(words(sentence)) < MIN_SENTENCE_WORDS or _MARKUP_ONLY.match(sentence.strip()):
                    dropped += 1  # "</section>", "Overview.": no statement to ground
                    continue
                share, source = _best_source_sentence(stems, candidates)
                said = " ".join(words(source)) in seen  # the fact it states is already in the report
                cut_off = last_unit and position == len(said_sentences) - 1 and unfinished(sentence)
                close = _closest_in_meaning(sentence, stems, closeness.get(sentence), candidates, meaning)
                new = " ".join(words(sentence)) not in seen
                if (
                    share >= KEEP_SHARE
                    and not said
                    and not cut_off
                    and new
                    and names_only_what_it_says(sentence, source)
                ):
                    out.append(sentence.strip())
                    kept += 1
                elif close and not cut_off and " ".join(words(close)) not in seen and new:
                    out.append(sentence.strip())  # the writer's words, saying what one source sentence says
                    kept += 1
                    by_meaning += 1
                    source = close
                elif share >= SNAP_SHARE and not said and is_prose(source):
                    out.append(source)
                    replaced += 1
                else:
                    dropped += 1
                    continue
                seen.update({" ".join(words(out[-1])), " ".join(words(source))})
            if out:
                lines_out.append(marker + " ".join(out))
        if lines_out:
            paragraphs.append("\n".join(lines_out))
    dropped += _drop_dangling_intros(paragraphs)
    headings = 0
    while paragraphs and paragraphs[-1].startswith("#"):  # a heading with nothing under it
        paragraphs.pop()
        headings += 1
    for i in range(len(paragraphs) - 2, -1, -1):  # a heading followed straight by another
        if paragraphs[i].startswith("#") and paragraphs[i + 1].startswith("#"):
            del paragraphs[i]
            headings += 1
    if not replaced and not dropped and not headings and not by_meaning:
        return body, ""
    total = kept + replaced + dropped
    note = f"{replaced} of {total} sentences replaced by the source sentence they paraphrase, {dropped} unsupported dropped"
    if by_meaning:
        note += f", {by_meaning} kept in the writer's words by meaning"
    if headings:
        note += f", {headings} heading(s) with no prose under them dropped"
    return "\n\n".join(paragraphs), note


MIN_SENTENCE_WORDS = 3  # a shorter "sentence" ("Overview.", "</section>") states nothing to ground
_MARKUP_ONLY = re.compile(r"^(?:</?[A-Za-z][\w-]*[^>]*>\s*)+$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def _drop_dangling_intros(paragraphs: list[str]) -> int:
    """Drop, in place, each line that ends a paragraph on a colon with no list after it ("The
    following are the standard entry types:"): it promises what the section does not hold.
    Returns how many lines went."""
    gone = 0
    for i in range(len(paragraphs) - 1, -1, -1):
        if paragraphs[i].startswith("#"):
            continue
        list_follows = i + 1 < len(paragraphs) and bool(_LIST_ITEM.match(paragraphs[i + 1]))
        lines = paragraphs[i].split("\n")
        while lines and lines[-1].rstrip().endswith(":") and not list_follows:
            lines.pop()
            gone += 1
        if lines:
            paragraphs[i] = "\n".join(lines)
        else:
            del paragraphs[i]
    return gone


def _units(paragraph: str) -> list[tuple[str, str]]:
    """(marker, text) units of a paragraph: each item of a list on its own, with its marker
    ("- ", "2. "), and the lines around the items, so that grounding keeps a list a list;
    a paragraph without items is one unit."""
    lines = [ln for ln in paragraph.splitlines() if ln.strip()]
    if not any(_LIST_ITEM.match(ln) for ln in lines):
        return [("", paragraph)]
    units: list[tuple[str, str]] = []
    prose: list[str] = []  # lines before, between or after the items: one unit each run
    for line in lines:
        m = _LIST_ITEM.match(line)
        if m is None:
            prose.append(line)
            continue
        if prose:
            units.append(("", " ".join(prose)))
            prose = []
        units.append((m.group(0).strip() + " ", line[m.end() :]))
    if prose:
        units.append(("", " ".join(prose)))
    return units


def _closest_in_meaning(
    sentence: str,
    stems: set[str],
    cosines: np.ndarray | None,
    candidates: Sequence[tuple[str, set[str]]],
    meaning: MeaningCheck | None,
) -> str:
    """The source sentence `sentence` says in other words, or "": the closest in meaning, when
    it reaches `meaning.level`, shares `SNAP_SHARE` of the sentence's content words and holds
    every specific the sentence names."""
    if meaning is None or cosines is None or not len(cosines):
        return ""
    best = int(np.argmax(cosines))
    text, cand = candidates[best]
    if (
        cosines[best] >= meaning.level
        and len(stems & cand) / len(stems) >= SNAP_SHARE
        and names_only_what_it_says(sentence, text)
    ):
        return text
    return ""


def unfinished(sentence: str) -> bool:
    """A sentence with no end punctuation (closing quotes and brackets aside): cut off mid-way."""
    return not re.search(r"[.!?:;][\"'\u201d\u2019)\]]*\s*$", sentence.strip())
