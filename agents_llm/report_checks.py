"""What a reader trips over in a report, found sentence by sentence against its sources.

Five kinds of fault, each a `Finding`:

- ``repeated``: a sentence the report already said (same words, case and punctuation aside);
- ``glued``: a heading of the sources run into a sentence ("EXAMPLES The program below ...",
  "Naming of core dump files By default, ...");
- ``cut``: a sentence cut at a line wrap or an end-of-line hyphen ("/proc/sys/ker- nel", a
  sentence opening in the middle of a word);
- ``dangling``: a sentence that leans on text the report left out: it opens with "So", "This",
  "These", "The following", ... and the source sentence before it is not earlier in its section,
  or it points "below"/"above" at text that is not there, or speaks of "these X" with no X before,
  or it only sends the reader elsewhere, or it speaks of its own document ("this manual page");
- ``false``: a sentence whose closest source sentence does not say the same (`default_agreement`).

`SourceText` holds the documents' sentences in order and the lines that head their parts, so
a report sentence can be traced to the sentence before and after it in its document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

from rag.headings import CONTINUATION
from rag.sentences import blocks, split_sentences

from .sentence_reuse import gives_orders, instruction_like

from .text.terms import STOPWORDS, stem
from .text.split import words

KINDS = ("repeated", "glued", "cut", "dangling", "false")
MATCH_SHARE = 0.7  # a report sentence is a source sentence's when this share of its content stems is in it
MAX_HEADING_WORDS = 8
MAX_NEW_WORDS = 1  # content words of a claim its source lacks: two say something the source does not

# An opening that leans on the sentence before it.
_LEANS = re.compile(
    r"^(?:So|Thus|Hence|Therefore|Consequently|Otherwise|However|Instead|Also|Then|"
    r"This|These|Those|That|Such|It|They|Its|Their|The following|In this case|In that case|"
    r"For (?:this|that) reason|"
    # a conjunction or an exception continues the sentence before it ("Or it can make ...",
    # "An exception are hooks triggered during a push ...")
    r"Or|And|But|Nor|An exception|Another exception|The exceptions?)\b",
)
# An aside in parentheses, the whole sentence: it comments on the sentence before it ("(If nothing
# else, the group should be configurable.)").
_ASIDE = re.compile(r"^\([^()]*(?:\([^()]*\)[^()]*)*\)[.!?]?$")
# A sentence that only sends the reader elsewhere: "See Debian Policy for further details."
_ONLY_POINTS = re.compile(
    r"^(?:see|refer\s+to|consult|read)\b[^.;:]{0,60}?\b(?:for|about)\s+"
    r"(?:(?:further|more|additional|full|the\s+full|the|its)\s+)?(?:details?|information|discussion|explanation)\W*$",
    re.IGNORECASE,
)
# A sentence about the text it sits in, not its topic: "When the rest of this document refers to
# 'default hooks' it's talking about ...", "This manual page documents ...".
_ABOUT_ITS_TEXT = re.compile(
    r"\b(?:this|the\s+rest\s+of\s+this|the\s+present)\s+(?:document|manual\s+page|man\s+page|manual|page)\b",
    re.IGNORECASE,
)
# A list item's mark: "- ", "* ", "\u2022 ", "3. ", "2) ".
ITEM_MARK = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+")
# A pointer at text that comes after it.
_POINTS_ON = re.compile(r"\b(?:below|as follows|the following|what follows)\b|:\s*$", re.IGNORECASE)
_POINTS_BACK = re.compile(r"\b(?:see|described|shown|listed|given|mentioned|noted)\b[^.]{0,40}\babove\b", re.I)
_THESE = re.compile(r"(?<=\w )(?:[Tt]his|[Tt]hese|[Tt]hose)\s+([a-z][a-z-]+)")  # "... onto this lock"
# "ker- nel", "ker\u2010 nel": a word broken at a line end and joined with a space.
_BROKEN_WORD = re.compile(
    r"\b([A-Za-z]{2,})[-\u2010\u00ad] ([a-z]{2,})\b|"
    # "EA\u2010 GAIN": a word in capitals broken by groff's hyphen (an ASCII one may join a compound name)
    r"\b([A-Z]{2,})[\u2010\u00ad] ([A-Z]{2,})(?![a-z])"
)
_NOT_BROKEN = frozenset({"and", "or", "nor", "to", "as", "than"})  # "pre- and post-processing"
_CAPS_HEADING = re.compile(r"^([A-Z][A-Z0-9_]{2,}(?:\s+[A-Z][A-Z0-9_]+)*)\s+(?=[A-Z][a-z]|[A-Z]\s)")
_NEGATION = frozenset({"not", "no", "never", "none", "nothing", "neither", "nor", "cannot", "without"})
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)*\b")


@dataclass(frozen=True)
class Finding:
    kind: str
    section: str
    sentence: str
    detail: str = ""


@dataclass(frozen=True)
class Agreement:
    agrees: bool
    reason: str = ""


def key(sentence: str) -> str:
    """A sentence's words, lower case: two spellings of one sentence share it."""
    return " ".join(words(sentence))


def stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if len(w) >= 3 and w not in STOPWORDS}


def _negated(text: str) -> bool:
    lowered = text.lower()
    return bool(_NEGATION & set(words(lowered))) or "n't" in lowered


def rule_agreement(claim: str, source: str) -> Agreement:
    """Whether ``source`` says what ``claim`` says, by its words: the claim's numbers all in the
    source, the same polarity (a "not" on one side only reverses it), and its content words in
    the source but for one (a merged or invented part is words the source lacks)."""
    if key(claim) == key(source):
        return Agreement(True, "the same sentence")
    missing = set(_NUMBER.findall(claim)) - set(_NUMBER.findall(source))
    if missing:
        return Agreement(False, f"numbers not in the source: {', '.join(sorted(missing))}")
    if _negated(claim) != _negated(source):
        return Agreement(False, "negated on one side only")
    claim_stems = stems(claim)
    if claim_stems:
        absent = claim_stems - stems(source)
        share = 1 - len(absent) / len(claim_stems)
        if share < MATCH_SHARE or len(absent) > MAX_NEW_WORDS:
            return Agreement(False, f"words the source does not have: {', '.join(sorted(absent))}")
    return Agreement(True, "same numbers, polarity and content words")


AgreementCheck = Callable[[str, str], Agreement]


def default_agreement() -> AgreementCheck:
    """The agreement check in use: the judges' (`agents_llm.judges.agreement`: numbers, negation
    scope, opposites, quantifiers, swapped roles), and then `rule_agreement`, whose word support
    catches what a claim adds to its source (a merged or invented part), which the judges' check
    leaves alone."""
    from .judges.agreement import check_agreement

    def both(claim: str, source: str) -> Agreement:
        judged = check_agreement(claim, source)
        if not judged.agrees:
            return Agreement(False, f"{judged.reason}: {judged.detail}")
        return rule_agreement(claim, source)

    return both


def _as_agreement(result: object) -> Agreement:
    return Agreement(bool(getattr(result, "agrees", result)), str(getattr(result, "reason", "")))


@dataclass
class SourceText:
    """The documents' sentences in reading order (one list per document) and their headings."""

    documents: List[List[str]] = field(default_factory=list)
    headings: set[str] = field(default_factory=set)
    # Terms a man page tags its indented paragraphs with ("PATH   The sequence of ...", "LOGNAME" over
    # its description): a description glued to one is about it, so the term stays as its subject.
    terms: set[str] = field(default_factory=set)
    starts: set[Tuple[int, int]] = field(default_factory=set)  # sentences that open a part under a heading
    # Sentences no report may quote: an order or no language, or a sentence of a paragraph that
    # gives an order (`sentence_reuse.without_orders`: its statements carry the order's marker).
    refused: set[str] = field(default_factory=set)  # by `key`
    _where: dict[str, Tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, raw_texts: Iterable[str], loaded_texts: Optional[Iterable[str]] = None) -> "SourceText":
        """``raw_texts``: the files as written (their heading lines are read from them);
        ``loaded_texts``: as the loaders give them (sentences), the raw texts when not given."""
        raw = list(raw_texts)
        loaded = list(loaded_texts) if loaded_texts is not None else raw
        out = cls()
        for text in raw:
            out.headings |= heading_lines(text)
            out.terms |= term_lines(text)
        for d, text in enumerate(loaded):
            sentences: List[str] = []
            for b in blocks(text):
                if b.kind == "heading" or (b.kind == "prose" and b.text.strip() in out.headings):
                    out.starts.add((d, len(sentences)))
                elif b.kind in ("prose", "item"):
                    # A list item's sentences are the document's too (a man page's options, a FAQ's
                    # points): without them a sentence quoted from a list reads as unsupported.
                    found = split_sentences(ITEM_MARK.sub("", b.text) if b.kind == "item" else b.text)
                    # A term the loader glued to its indented description ("lp Print jobs are owned
                    # by this user") opens its part: its "this user" is the term.
                    # Two letters ("lp") count here: a false match only ends an antecedent chain.
                    if found and _glued_term(found[0], out.headings, min_chars=2):
                        out.starts.add((d, len(sentences)))
                    ordering = gives_orders(b.text)
                    out.refused |= {key(x) for x in found if ordering or instruction_like(x)}
                    sentences.extend(found)
            out.documents.append(sentences)
        for d, sentences in enumerate(out.documents):
            for i, s in enumerate(sentences):
                out._where.setdefault(key(s), (d, i))
        return out

    def locate(self, sentence: str) -> Optional[Tuple[int, int]]:
        """(document, index) of the source sentence ``sentence`` is, word for word or mostly."""
        found = self._where.get(key(sentence))
        if found is not None:
            return found
        best = self.closest(sentence)
        return best[0] if best and best[1] >= MATCH_SHARE else None

    def closest(self, sentence: str) -> Optional[Tuple[Tuple[int, int], float]]:
        """The source sentence sharing most of ``sentence``'s content stems, with that share."""
        mine = stems(sentence)
        if not mine:
            return None
        best: Optional[Tuple[Tuple[int, int], float]] = None
        for d, sentences in enumerate(self.documents):
            for i, s in enumerate(sentences):
                share = len(mine & stems(s)) / len(mine)
                if best is None or share > best[1]:
                    best = ((d, i), share)
        return best

    def refuses(self, sentence: str) -> bool:
        """Whether ``sentence`` is one the documents hold but no report may quote: an order, no
        language, or a sentence of a paragraph that gives an order; or an order of its own."""
        return key(sentence) in self.refused or instruction_like(sentence)

    def sentence(self, where: Tuple[int, int]) -> str:
        return self.documents[where[0]][where[1]]

    def unnamed_term(self, sentence: str) -> Optional[str]:
        """The term a sentence speaks of as "the <noun>" without naming it, or None. In a part
        that opens with a term over its description ("commit-msg This hook is invoked by ..."),
        a later "The hook is allowed to edit the message file" means that term; quoted apart from
        the opening, it could be any of the page's hooks."""
        where = self.locate(sentence)
        if where is None:
            return None
        d, i = where
        j = i
        while j > 0 and (d, j) not in self.starts:
            j -= 1
        if j == i:
            return None
        opening = _TERM_OPENING.match(self.documents[d][j])
        if opening is None or opening.group(1) in sentence:
            return None
        term, noun = opening.groups()
        return term if re.match(rf"^\W*the\s+{re.escape(noun)}\b", sentence, re.IGNORECASE) else None

    def neighbour(self, where: Tuple[int, int], step: int) -> Optional[str]:
        """The sentence ``step`` before or after the one at ``where`` in its document, under the
        same heading; None at a document's or a part's edge."""
        d, i = where
        j = i + step
        if (d, max(i, j)) in self.starts:
            return None
        return self.documents[d][j] if 0 <= j < len(self.documents[d]) else None


# A term glued to its description, which names it by a noun: "commit-msg This hook is invoked by ...".
# (The first of a man page's subsections follows its section's line, not a blank one, so it is in no
# heading list: the shape alone is read.)
_TERM_OPENING = re.compile(r"^([a-z][\w.+-]*[\w+])\s+(?:This|The)\s+([a-z][a-z-]+)\b")


MAX_SUBSECTION_INDENT = 4  # a man page's subsection titles stand at column 3, its body and tags at 7
_TAGGED = re.compile(r"^( +)([A-Za-z_][\w./+-]*)(?:( +)\S|$)")


def term_lines(text: str) -> set[str]:
    """The terms of a raw text's tagged paragraphs: one word, indented as body text, over its
    description indented deeper ("LOGNAME" / "The name of ..."; a subsection's title stands less
    indented, "   BUGS"), or on the same line as its description after a
    run of spaces, the lines after it aligned with the description ("USER   The name of the ..." /
    "grams)."); a term in capitals may stand on a one-line entry ("TERM   The terminal type ...").
    A justified line's double spaces ("The  sequence  of") have no such alignment."""
    lines = text.replace("\r\n", "\n").split("\n")
    out: set[str] = set()
    for i, line in enumerate(lines):
        tagged = _TAGGED.match(line)
        if tagged is None:
            continue
        indent, term = len(tagged.group(1)), tagged.group(2)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        nxt_indent = len(nxt) - len(nxt.lstrip())
        if tagged.group(3) is None:  # the term alone on its line, at the body's indent, not a subsection's
            if indent > MAX_SUBSECTION_INDENT and nxt.strip() and nxt_indent > indent:
                out.add(term)
            continue
        column = indent + len(term) + len(tagged.group(3))
        # One space when the term fills the tag's column ("LPDEST The queue ..."); then only the
        # next line's alignment tells a tag from a paragraph's first word.
        spaced = len(tagged.group(3)) >= 2
        if (nxt.strip() and nxt_indent == column) or (
            spaced and not nxt.strip() and not any(c.islower() for c in term)
        ):
            out.add(term)
    return out


def heading_lines(text: str) -> set[str]:
    """The lines of a raw text that head a part: short, no end punctuation, after a blank line,
    and followed by a blank line (capitalised) or by lines indented deeper (a man page's NAME, its
    indented subsections, a term over its description, a plain-text note's own headings)."""
    lines = text.replace("\r\n", "\n").split("\n")
    out: set[str] = set()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or (i > 0 and lines[i - 1].strip()) or re.search(r"[.,;:!?]$", stripped):
            continue
        if len(stripped.split()) > MAX_HEADING_WORDS:
            continue
        nxt = next((x for x in lines[i + 1 :] if x.strip()), None)
        following_blank = i + 1 < len(lines) and not lines[i + 1].strip()
        indent = len(line) - len(line.lstrip())
        over_indented = nxt is not None and not following_blank and len(nxt) - len(nxt.lstrip()) > indent
        # A lower-case line heads a part only as a term over its indented description ("bin",
        # "sync" in a list of accounts); a title is capitalised.
        if (stripped[:1].isupper() and following_blank) or over_indented:
            out.add(stripped.lstrip("#").strip())
    return out


def _glued_term(sentence: str, headings: Iterable[str], min_chars: int = 3) -> Optional[str]:
    """The longest of ``headings`` (``min_chars`` or more) run into the start of ``sentence``,
    glued to a capitalised word, or None."""
    for heading in sorted(headings, key=len, reverse=True):
        if (
            len(heading) >= min_chars
            and sentence.startswith(heading + " ")
            and sentence[len(heading) + 1 : len(heading) + 2].isupper()
        ):
            return heading
    return None


def glued_heading(sentence: str, headings: Iterable[str] = ()) -> Optional[str]:
    """The heading run into the start of ``sentence``, or None."""
    found = _glued_term(sentence, headings)
    if found is not None:
        return found
    caps = _CAPS_HEADING.match(sentence)
    return caps.group(1) if caps else None


def mend_broken_words(sentence: str) -> str:
    """``sentence`` with each word broken at a line end joined again ("ker- nel" -> "kernel")."""
    return _BROKEN_WORD.sub(
        lambda m: m.group(0) if _halves(m)[1].lower() in _NOT_BROKEN else "".join(_halves(m)), sentence
    )


def _halves(m: "re.Match[str]") -> tuple[str, str]:
    """The two halves of a broken word `_BROKEN_WORD` matched, in lower case or in capitals."""
    return (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))


def broken_word(sentence: str) -> Optional[str]:
    """A word cut at a line end and left apart ("ker- nel"), or None."""
    for m in _BROKEN_WORD.finditer(sentence):
        if _halves(m)[1].lower() not in _NOT_BROKEN:
            return m.group(0)
    return None


def cut_sentence(sentence: str, sources: Optional["SourceText"] = None) -> Optional[str]:
    """Why ``sentence`` reads as cut at a line wrap or hyphen, or None. One opening in lower case
    is a fragment unless it is a whole sentence of ``sources`` ("dpkg --configure runs ...")."""
    broken = broken_word(sentence)
    if broken:
        return f"a word broken at a line end: {broken!r}"
    first = sentence.split(maxsplit=1)[0] if sentence.split() else ""
    whole = sources is not None and key(sentence) in sources._where
    if first[:1].islower() and first.rstrip(",;:").isalpha() and (not whole or CONTINUATION.match(sentence)):
        # A source's "sentence" that opens on "to" or "which" is the rest of one a display cut.
        return f"opens mid-sentence with {first!r}"
    return None


def leans(sentence: str) -> bool:
    return bool(_LEANS.match(sentence) or _ASIDE.match(sentence.strip()))


def missing_antecedent(sentence: str, before: Sequence[str], sources: SourceText) -> Optional[str]:
    """The source sentence ``sentence`` leans on ("So ...", "This ...", "these X") when it is
    not among ``before``, the sentences before it in its section; None otherwise."""
    where = sources.locate(sentence)
    if where is None or not (leans(sentence) or _THESE.search(sentence)):
        return None
    previous, at = sources.neighbour(where, -1), where
    # A pointer between them ("See Debian Policy for further details.") is no antecedent: what
    # the sentence leans on is the one before it, in the same part of the document.
    for _ in range(2):
        if previous is None or not _ONLY_POINTS.match(previous.strip()):
            break
        at = (at[0], at[1] - 1)
        previous = sources.neighbour(at, -1)
    return previous if previous is not None and key(previous) not in {key(s) for s in before} else None


def dangling(sentence: str, before: Sequence[str], after: Sequence[str], sources: SourceText) -> Optional[str]:
    """Why ``sentence`` leans on text its section does not hold, or None. ``before``/``after``:
    the sentences of its section before and after it."""
    where = sources.locate(sentence)
    these = [m.group(1) for m in _THESE.finditer(sentence)]
    previous = missing_antecedent(sentence, before, sources)
    if previous is not None:
        return f"leans on the source sentence before it, left out: {previous[:60]!r}"
    if where is None:
        if leans(sentence) and not before:
            return "leans on a sentence before it, and opens its section"
        said = stems(" ".join(before))
        for noun in these:
            if stem(noun) not in said | stems(sentence.split(noun)[0]):
                return f"speaks of 'these {noun}' with none before"
    if _POINTS_ON.search(sentence):
        following = sources.neighbour(where, 1) if where else None
        if not after or following is None or key(following) != key(after[0]):
            return "points at text below it that the report does not hold"
    if _POINTS_BACK.search(sentence) and not before:
        return "points at text above it that the report does not hold"
    if _ONLY_POINTS.match(sentence.strip()):
        return "only sends the reader elsewhere for details"
    if _ABOUT_ITS_TEXT.search(sentence):
        return "speaks of the document it was quoted from, not of its topic"
    term = sources.unnamed_term(sentence)
    if term is not None and not any(term in s for s in before):
        return f"speaks of {term!r} without naming it"
    return None


def check_sections(
    sections: Sequence[Tuple[str, Sequence[str]]],
    sources: SourceText,
    agreement: Optional[AgreementCheck] = None,
) -> List[Finding]:
    """Every finding in a report given as (section title, its sentences in order)."""
    agree = agreement or default_agreement()
    seen: set[str] = set()
    found: List[Finding] = []
    for title, sentences in sections:
        for i, s in enumerate(sentences):
            k = key(s)
            if k in seen:
                found.append(Finding("repeated", title, s))
            seen.add(k)
            heading = glued_heading(s, sources.headings)
            if heading:
                found.append(Finding("glued", title, s, heading))
            cut = cut_sentence(s, sources)
            if cut:
                found.append(Finding("cut", title, s, cut))
            why = dangling(s, sentences[:i], sentences[i + 1 :], sources)
            if why:
                found.append(Finding("dangling", title, s, why))
            wrong = false_sentence(s, sources, agree)
            if wrong:
                found.append(Finding("false", title, s, wrong))
    return found


def false_sentence(sentence: str, sources: SourceText, agree: AgreementCheck) -> Optional[str]:
    """Why ``sentence`` is not what its closest source sentence says, or None (a word broken
    at a line end is a cut, counted apart, not a falsehood)."""
    sentence = mend_broken_words(sentence)
    if len(words(sentence)) < 4 or sources.locate(sentence) and key(sentence) in sources._where:
        return None
    best = sources.closest(sentence)
    if best is None:
        return "no source sentence shares its words"
    source = sources.sentence(best[0])
    verdict = agree(sentence, source)
    return None if verdict.agrees else f"{verdict.reason} (closest: {source[:80]!r})"
