"""Does a source say what a claim says? Agreement, not closeness, between a claim and its source.

Two sentences can be as close as embeddings go and say opposite things ("the left ventricle
pumps blood to the lungs" / "the right ventricle ..."). `check_agreement(claim, source)` reads each
clause of the claim against the source clause it restates and names the first conflict (`reason`): ``number`` (a quantity the source nowhere states), ``name`` (an underscored
code name the source never writes), ``negation`` (one side denies what the other asserts, or the
negation moved: "not the farmer" / "not the roaster"), ``antonym`` (a curated lexicon of opposites),
``quantifier`` ("most" / "few"), ``roles`` (two words swapped around the words between them).

No model made for the job (natural-language inference) installs offline from a pinned package here, so
these are rules: each is a conflict a reader names in one word, and `reason` says which. They see no
paraphrase of a mechanism into another that shares no words with the source. Measured on agents_llm/judges/validity/contradictions.json by experiments/protocol/agreement_eval.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..text.terms import STOPWORDS, stem
from ..text.split import sentences

__all__ = ["Agreement", "check_agreement", "REASONS"]

REASONS = ("number", "name", "negation", "antonym", "quantifier", "roles")
ALIGN_MIN_SHARED = 2  # a claim clause is read against a source clause sharing at least this many content words
ALIGN_MIN_OVERLAP = 0.3  # ... and this share of the content words either holds
ROLES_MIN_OVERLAP = 0.6  # a swap counts between texts that share this share of their content words


@dataclass(frozen=True)
class Agreement:
    """Whether a claim agrees with its source; if not, the kind of conflict (`reason`, one of REASONS)
    and the words that conflict (`detail`)."""

    agrees: bool
    reason: str = ""
    detail: str = ""


_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[A-Za-z]+(?:'[a-z]+)?")
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000, "million": 1_000_000,
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
}  # fmt: skip
_ORDINAL_DIGITS = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
# "one" as a pronoun or article ("one of", "no one", "each one") is no quantity; "second" is also a unit.
_NOT_A_QUANTITY = {"one", "first", "second"}
_ERA = {"bc", "bce", "ad", "ce"}

_NEGATIONS = {"not", "no", "non", "never", "none", "nor", "neither", "nothing", "without", "cannot", "n't", "nobody"}
_NEGATIONS |= {"rather-than", "instead-of"}
_SKIP_AFTER_NEGATION = STOPWORDS | {"be", "been", "being", "any", "anything", "only", "just", "so", "too", "even"}
# Two-word cues, read as one negation of what follows ("the roaster rather than the farmer").
_NEGATION_PHRASES = {("rather", "than"): "rather-than", ("instead", "of"): "instead-of"}

# Opposites a reader names at once; each pair is symmetric. Words are matched by stem.
_OPPOSITES = """
more less | more fewer | higher lower | high low | larger smaller | large small | largest smallest
greater smaller | greatest smallest | biggest smallest | big small | increase decrease | increases decreases
increased decreased | rise fall | rises falls | rose fell | raise lower | raises lowers | raised lowered
gain lose | gains loses | gained lost | add remove | adds removes | added removed | absorb release
absorbs releases | warm cool | warmer cooler | warms cools | heat cool | hot cold | hotter colder
thick thin | thicker thinner | dense light | denser lighter | heavy light | heavier lighter | fast slow
faster slower | fastest slowest | quick slow | early late | earlier later | first last | oldest newest
old new | oldest youngest | before after | north south | east west | inside outside | upward downward
up down | easy hard | easily hardly | wet dry | long short | longer shorter | lengthen shorten
lengthens shortens | lengthened shortened | extend shorten | extended shortened | gently steeply
allow prevent | allows prevents | allowed prevented | let prevent | lets prevents | lets traps | escape trap
accept reject | attract repel | attracts repels | defend abandon | join leave | open close | include exclude
strengthen weaken | strengthens weakens | strong weak | stronger weaker | safe dangerous | safety danger
success failure | win lose | wins loses | gain waste | gains wastes | majority minority | most least
popular unpopular | cheaper dearer | cheap expensive | rich poor | richer poorer | dark light | darker lighter
dark pale | light heavy | reflect absorb | reflects absorbs | present absent | alive dead | live die
true false | correct wrong | same different | similar different | agree disagree | maximum minimum
often rarely | always never | frequently rarely | tolerate suppress | sweet sour | odd even | wider narrower
widen narrow | widened narrowed | full empty | fill empty | start stop | starts stops | begin end | inner outer
lower upper | underground above-ground | lightweight heavyweight | produce remove | produces removes | reduce increase | reducing increasing | half twice | add subtract | add cancel | together apart
amplify damp | amplify dampen | accelerate slow | accelerates slows | speeds slows | speed slow | help hinder
protect damage | protects damages | good bad | better worse | best worst | positive negative | direct indirect
alternating direct | useful useless | rise decline | rises declines | increases declines | grow shrink
grows shrinks | expand contract | expands contracts | advance retreat | advances retreats | gentle violent
gentle explosive | violent gentle | quiet loud | silent audible | visible invisible | clean dirty
cleaner dirtier | moist dry | damp dry | fertile sterile | male female | queen worker
"""
_QUANTIFIER_HIGH = {"most", "majority", "all", "every", "almost", "nearly", "mostly", "many", "both"}
_QUANTIFIER_LOW = {"few", "minority", "none", "only", "rarely", "hardly"}


def _opposites() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for pair in _OPPOSITES.replace("\n", "|").split("|"):
        if not pair.strip():
            continue
        a, b = pair.split()
        sa, sb = stem(a), stem(b)
        table.setdefault(sa, set()).add(sb)
        table.setdefault(sb, set()).add(sa)
    return {k: frozenset(v) for k, v in table.items()}


_OPPOSITE = _opposites()


def _tokens(text: str) -> list[str]:
    return list(_token_tuple(text))


@lru_cache(maxsize=20_000)
def _token_tuple(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for tok in _TOKEN.findall(text.replace("\u2019", "'")):
        low = tok.lower()
        if tok == "None" and out:
            out.append("none-value")  # Python's None mid-sentence is a value, not a negation
            continue
        if low in {"st", "nd", "rd", "th"} and out and out[-1][0].isdigit():
            continue  # "3rd": the digits already say it
        if low.endswith("n't"):
            out += [low[:-3] or "not", "n't"]
        elif low == "than" and len(out) >= 2 and out[-2] in {"no", "not"} and out[-1] in {"more", "less", "fewer"}:
            out[-2:] = ["at", "most" if out[-1] == "more" else "least"]  # "no more than": a bound, no negation
        elif out and (out[-1], low) in _NEGATION_PHRASES:
            out[-1] = _NEGATION_PHRASES[(out[-1], low)]
        else:
            out.append(low)
    return tuple(out)


def _value(token: str) -> float | None:
    if token[0].isdigit():
        match = _ORDINAL_DIGITS.match(token)
        digits = match.group(1) if match else token.replace(",", "")
        try:
            return float(digits)
        except ValueError:
            return None
    return _NUMBER_WORDS.get(token)


def _quantities(tokens: list[str], *, generous: bool = False) -> set[str]:
    """The quantities a text states, normalised ("3rd"/"third" -> "3", "twenty" -> "20", an era kept:
    "312 bc"), with number words joined ("forty five" -> 45, "two thousand" -> 2000). `generous`
    also reads "one", "first" and "second" as numbers: a source's "one millisiemens" supports a
    claim's "1 mS/cm", while a claim's "one of the" states no quantity to check."""
    out: set[str] = set()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        value = _value(tok)
        if value is None or (not generous and tok in _NOT_A_QUANTITY and not tok[0].isdigit()):
            i += 1
            continue
        j = i + 1
        while j < len(tokens) and not tokens[j][0].isdigit() and tokens[j] in _NUMBER_WORDS:
            nxt = _NUMBER_WORDS[tokens[j]]
            if nxt >= 100:
                value *= nxt  # "two thousand"
            elif value >= 20 and value % 10 == 0 and nxt < 10:
                value += nxt  # "forty five"
            else:
                break  # "sixteen, two": two quantities
            j += 1
        era = tokens[j] if j < len(tokens) and tokens[j] in _ERA else ""
        era = {"bce": "bc", "ce": "ad"}.get(era, era)
        if not era and j + 1 < len(tokens) and tokens[j] in {"century", "centuries"} and tokens[j + 1] in _ERA:
            era = {"bce": "bc", "ce": "ad"}.get(tokens[j + 1], tokens[j + 1])
        out.add(f"{value:g}{' ' + era if era else ''}")
        i = j
    return out


def _content(tokens: list[str]) -> list[str]:
    return [stem(t) for t in tokens if t not in STOPWORDS and t not in _NEGATIONS and not t[0].isdigit()]


def _negated(tokens: list[str]) -> set[str]:
    """Stems of the content words a negation covers: the first content word after each cue."""
    out: set[str] = set()
    for i, tok in enumerate(tokens):
        if tok not in _NEGATIONS:
            continue
        for nxt in tokens[i + 1 : i + 5]:
            if nxt in _NEGATIONS or nxt[0].isdigit():
                break
            if nxt not in _SKIP_AFTER_NEGATION:
                out.add(stem(nxt))
                break
    return out


def _moved_negation(
    c_tokens: list[str], s_tokens: list[str], c_stems: list[str], s_stems: list[str]
) -> tuple[str, str] | None:
    """A negation on a word the other text asserts, while the other negates a word this one asserts, the
    two words in opposite order ("A, not B" / "B, not A"); in the same order it is a rephrasing ("does not
    waste water" / "wastes no water")."""
    c_neg, s_neg = _negated(c_tokens), _negated(s_tokens)
    for a in (c_neg - s_neg) & set(s_stems):
        for b in (s_neg - c_neg) & set(c_stems):
            if a != b and (c_stems.index(a) < c_stems.index(b)) != (s_stems.index(a) < s_stems.index(b)):
                return a, b
    return None


def _flipped_negation(
    c_tokens: list[str], s_tokens: list[str], c_set: set[str], s_set: set[str], denied: frozenset[str] = frozenset()
) -> str:
    """A word negated on the side with the extra negation that the other side asserts, or ""."""
    if _negation_count(c_tokens) % 2 == _negation_count(s_tokens) % 2:
        return ""
    c_neg, s_neg = _negated(c_tokens), _negated(s_tokens)
    flipped = sorted((c_neg - s_neg - denied) & s_set | (s_neg - c_neg) & c_set)
    return flipped[0] if flipped else ""


def _negation_count(tokens: list[str]) -> int:
    return sum(t in _NEGATIONS for t in tokens)


def _passive(tokens: list[str]) -> bool:
    return (
        any(
            t in {"is", "are", "was", "were", "be", "been", "being"}
            and i + 1 < len(tokens)
            and tokens[i + 1].endswith("ed")
            for i, t in enumerate(tokens)
        )
        or "by" in tokens
    )


def _transposed(claim: list[str], source: list[str]) -> tuple[str, str] | None:
    """Two content words whose exchange turns the claim's order of shared words into the source's, with
    words between them ("from the well to the tank" / "from the tank to the well")."""
    once_c = {s for s in claim if claim.count(s) == 1}
    once_s = {s for s in source if source.count(s) == 1}
    shared = once_c & once_s
    in_c = [s for s in claim if s in shared]
    in_s = [s for s in source if s in shared]
    differ = [i for i, (a, b) in enumerate(zip(in_c, in_s)) if a != b]
    if len(differ) == 2:
        i, j = differ
        if in_c[i] == in_s[j] and in_c[j] == in_s[i]:
            return in_s[i], in_s[j]
    return None


def _coordinated(tokens: list[str], a: str, b: str) -> bool:
    """Whether only "and"/"or" stand between the words of stems a and b: a list in another order says the same."""
    where = [i for i, t in enumerate(tokens) if stem(t) in (a, b)]
    return len(where) >= 2 and set(tokens[where[0] + 1 : where[-1]]) <= {"and", "or"}


def _slots_exchanged(c_tokens: list[str], s_tokens: list[str], a: str, b: str) -> bool:
    """Whether a and b took each other's places: the word before each in the claim is the word before the
    other in the source ("from the well to the tank" / "from the tank to the well"); a sentence recast
    around them ("the right ventricle pumps blood" / "blood goes from the right ventricle") is no swap."""

    def before(tokens: list[str], target: str) -> str:
        where = next(i for i, t in enumerate(tokens) if stem(t) == target)
        return tokens[where - 1] if where else ""

    return before(c_tokens, a) == before(s_tokens, b) and before(c_tokens, b) == before(s_tokens, a)


def _quantifier(tokens: list[str]) -> str:
    """The first quantifier word of a text ("at most" is a bound and "the most compact" a superlative,
    not "most")."""
    for i, tok in enumerate(tokens):
        if tok in _QUANTIFIER_HIGH | _QUANTIFIER_LOW and not (tok == "most" and i and tokens[i - 1] in {"at", "the"}):
            return tok
    return ""


@lru_cache(maxsize=50_000)
def check_agreement(claim: str, source: str) -> Agreement:
    """Whether `source` (a sentence or a passage) says what `claim` says, or the first conflict found.

    Numbers are checked against the whole source. The other rules read each clause of the claim
    against the clause of the source that shares most content words with it, and only where the two
    say enough of the same (`ALIGN_MIN_SHARED` words, `ALIGN_MIN_OVERLAP` of their words): a clause
    the source does not speak to is no conflict."""
    c_tokens = _tokens(claim)
    missing = _quantities(c_tokens) - _source_quantities(source)
    if missing:
        return Agreement(False, "number", ", ".join(sorted(missing)))
    unknown = _unknown_names(claim, source)
    if unknown:
        return Agreement(False, "name", ", ".join(sorted(unknown)))
    source_clauses = _source_clauses(source)
    denied = _source_denied(source)
    for clause in _clauses(claim):
        result = _clause_agreement(clause, source_clauses, denied)
        if not result.agrees:
            return result
    return Agreement(True)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z]\w*_\w+")
_NAME_TOKEN = re.compile(r"\w+")


def _unknown_names(claim: str, source: str) -> set[str]:
    """Underscored names (keep_blank_values, QUOTE_ALL) the claim writes and a source that writes such
    names never does: one thing swapped for another. Dotted names are left alone: a report may qualify a name its source does not."""
    names = {n.lower() for n in _IDENTIFIER.findall(claim) if "." not in n}
    if not names or not any("." not in n for n in _IDENTIFIER.findall(source)):
        return set()  # a source that names nothing in code cannot be contradicted by a name
    return names - {t.lower() for t in _NAME_TOKEN.findall(source)}


_ASIDE = re.compile(r"\([^()]*\)")
_CLAUSE_BREAK = re.compile(r"\s*[;:]\s+|,\s+(?=(?:and|but|while|whereas|so|yet|although|though)\s)")


def _clauses(text: str) -> list[str]:
    """`text` cut at semicolons, colons and the conjunctions that join two statements; a piece with fewer
    than two content words stays with the one before it."""
    out: list[str] = []
    for sent in sentences(text) or [text]:
        for piece in _CLAUSE_BREAK.split(sent):
            if out and len(_content(_tokens(piece))) < 2:
                out[-1] = f"{out[-1]} {piece}"
            elif piece.strip():
                out.append(piece)
    return out


@lru_cache(maxsize=5_000)
def _source_quantities(source: str) -> frozenset[str]:
    return frozenset(_quantities(_tokens(source), generous=True))


@lru_cache(maxsize=5_000)
def _source_denied(source: str) -> frozenset[str]:
    return frozenset(_negated(_tokens(source)))


@lru_cache(maxsize=5_000)
def _source_clauses(source: str) -> tuple[tuple[str, frozenset[str]], ...]:
    pieces = list(dict.fromkeys(_clauses(source)))
    return tuple((p, frozenset(_content(_tokens(p)))) for p in pieces)


def _same_course(claim: list[str], source: list[str], word: str, clash: str) -> bool:
    """Both sides name the same two poles in the same order, in other words ("rises at first and then
    falls" / "first increases and then declines"): `word` and one of its opposites in the claim, `clash`
    and one of its opposites in the source, with the claim's `word` where the source has the pole
    opposite `clash`. The reverse order ("falls at first and then rises") stays a conflict."""
    word_at, clash_at = claim.index(word), source.index(clash)
    for other in _OPPOSITE.get(word, frozenset()) & set(claim):
        for opposite in _OPPOSITE.get(clash, frozenset()) & set(source):
            if (word_at < claim.index(other)) == (source.index(opposite) < clash_at):
                return True
    return False


def _clause_agreement(
    claim: str, source_clauses: tuple[tuple[str, frozenset[str]], ...], denied: frozenset[str] = frozenset()
) -> Agreement:
    """`check_agreement` for one clause; `denied`: the words the whole source negates somewhere (a claim
    negating one of them says what the source says, in another of its sentences)."""
    c_tokens = _tokens(claim)
    c_stems = _content(c_tokens)
    c_set = set(c_stems)
    if not c_set or not source_clauses:
        return Agreement(True)
    best, s_set_f = max(source_clauses, key=lambda item: len(c_set & item[1]) / (len(c_set | item[1]) or 1))
    shared = len(c_set & s_set_f)
    if shared < ALIGN_MIN_SHARED or shared < ALIGN_MIN_OVERLAP * len(c_set | s_set_f):
        return Agreement(True)  # the source says nothing this clause restates
    s_tokens = _tokens(best)
    s_stems = _content(s_tokens)
    s_set = set(s_stems)

    # A negation one side lacks, on a word the other side asserts ("does not need a signal" / "needs a
    # signal"); a negated aside the other side leaves out ("a cautious (not minimal) way") is an omission,
    # and a negation rephrased ("does not need a signal" / "without a signal") is neither.
    # An aside in parentheses ("the values (not the keys!) can be anything") contrasts more than it denies:
    # a conflict must stand with the asides read and with them left out.
    flipped = _flipped_negation(c_tokens, s_tokens, c_set, s_set, denied)
    aside_free = _tokens(_ASIDE.sub(" ", claim)), _tokens(_ASIDE.sub(" ", best))
    if flipped and _flipped_negation(*aside_free, c_set, s_set, denied):
        return Agreement(False, "negation", f"not {flipped}")
    moved = _moved_negation(c_tokens, s_tokens, c_stems, s_stems)
    if moved:
        return Agreement(False, "negation", f"not {moved[0]} / not {moved[1]}")

    for word in c_set - s_set:
        clash = _OPPOSITE.get(word, frozenset()) & (s_set - c_set)
        if clash and not any(_same_course(c_stems, s_stems, word, other) for other in clash):
            swap = _transposed(c_stems, s_stems)
            if swap and _slots_exchanged(c_tokens, s_tokens, *swap):
                return Agreement(True)  # "A is half of B" = "B is twice A": a converse
            return Agreement(False, "antonym", f"{word} / {', '.join(sorted(clash))}")

    c_q, s_q = _quantifier(c_tokens), _quantifier(s_tokens)
    if c_q and s_q and (c_q in _QUANTIFIER_HIGH) != (s_q in _QUANTIFIER_HIGH):
        return Agreement(False, "quantifier", f"{c_q} / {s_q}")

    if _passive(c_tokens) == _passive(s_tokens) and len(c_set & s_set) >= ROLES_MIN_OVERLAP * len(c_set | s_set):
        swap = _transposed(c_stems, s_stems)
        if swap and not _coordinated(c_tokens, *swap) and _slots_exchanged(c_tokens, s_tokens, *swap):
            return Agreement(False, "roles", f"{swap[0]} <-> {swap[1]}")
    return Agreement(True)
