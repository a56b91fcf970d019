"""What a prompt injection looks like: the guard's patterns (`rag.guard`), each matched
on the normalised view of untrusted text (`rag.text_view.matching_view`), and for each
the words one of which must occur for it to match at all."""

from __future__ import annotations

import re
from typing import List, Tuple

# A device's own error, warning and status messages are no instructions ("Ignore previous error messages
# once the fault is fixed").
_INSTRUCTION_NOUNS = (
    r"(?:instructions?|prompts?|rules|directions|guidelines|directives|context|"
    r"(?<!\berror )(?<!\bwarning )(?<!\bfault )(?<!\bstatus )(?<!\balarm )messages?|"
    r"commands?|orders|tasks?|everything)"
)
_EARLIER = r"(?:previous|prior|above|earlier|preceding|foregoing|former)"
# A manual tells its reader "Do not forget to read the instructions" and "never ignore the
# warnings": a negated override verb, or one followed by "to", urges the reader to follow them.
# The view has one space between words, so fixed-width look-behinds see every negation.
_NOT_NEGATED = r"(?<!\bnot )(?<!\bnever )(?<!n't )(?<!\bdont )"

# (kind, pattern), matched on the normalised view. Each match becomes a marker that no
# pattern matches.
INJECTION_PATTERNS: List[Tuple[str, re.Pattern]] = [
    (
        "instruction_override",
        re.compile(
            _NOT_NEGATED
            + r"\b(?:ignore|disregard|forget|override|bypass|skip|drop|discard)\b(?!\s+to\b)[^.\n]{0,40}?\b"
            r"(?:" + _EARLIER + r"|all|any|your|system|original|the)\b[^.\n]{0,40}?\b" + _INSTRUCTION_NOUNS + r"\b",
            re.IGNORECASE,
        ),
    ),
    (
        # "Ignore the above." / "forget everything before this": an override that names
        # no noun. Only when the clause ends there, so "ignore the above-mentioned
        # noise term" stays prose.
        "instruction_override",
        re.compile(
            _NOT_NEGATED + r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|everything\s+|anything\s+)?(?:of\s+)?"
            r"(?:the\s+|what(?:\s+is|'s)?\s+(?:written\s+|said\s+)?|that\s+)?"
            r"(?:" + _EARLIER + r"|before\s+this|so\s+far)(?=\s*(?:[.,;:!?\"')\]]|and\b|then\b|$))",
            re.IGNORECASE,
        ),
    ),
    (
        "new_instructions",
        re.compile(
            r"\b(?:new|updated|real|actual|true|revised|your\s+new|your\s+real)\s+(?:system\s+)?"
            r"(?:" + _INSTRUCTION_NOUNS + r"|task|goal|role|objective|orders)\s*:",
            re.IGNORECASE,
        ),
    ),
    (
        "role_override",
        re.compile(
            r"\byou\s+are\s+now\b[^.\n]{0,60}|\bfrom\s+now\s+on,?\s+(?:you|respond|answer|reply|only)\b[^.\n]{0,60}|"
            r"\bpretend\s+(?:to\s+be|you\s+are)\b[^.\n]{0,60}|"
            r"\bact\s+as\s+(?:an?\s+)?(?:unfiltered|unrestricted|jailbroken|evil|uncensored)\b[^.\n]{0,40}",
            re.IGNORECASE,
        ),
    ),
    (
        "prompt_exfiltration",
        re.compile(
            r"\b(?:reveal|print|show|repeat|output|leak|disclose|tell\s+me)\b[^.\n]{0,30}?\b"
            r"(?:system\s+prompt|hidden\s+(?:instructions|prompt)|your\s+(?:instructions|prompt|rules))\b",
            re.IGNORECASE,
        ),
    ),
    (
        "jailbreak",
        re.compile(r"\b(?:developer\s+mode|jailbreak(?:ing)?|do\s+anything\s+now|DAN\s+mode)\b", re.IGNORECASE),
    ),
    (
        "chat_markup",
        re.compile(
            r"<\|[a-z_ ]{2,30}\|>|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|user|tool)>|<\|?(?:im[_ ]start|im[_ ]end)\|?>",
            re.IGNORECASE,
        ),
    ),
    (
        # A role label that opens a line, a markdown heading, a sentence or an HTML
        # comment ("<!-- SYSTEM: ..."), in any case; or an all-caps one anywhere: chat
        # templates speak so.
        "role_prefix",
        re.compile(
            r"(?im:(?:^|(?<=[.!?;]\s)|(?<=<!--)|\|)[#>* \t]*(?:system|assistant|developer)[ \t]*(?:message|prompt)?[ \t]*:)"
            r"|\b(?:SYSTEM|ASSISTANT|DEVELOPER)[ \t]*:",
        ),
    ),
    (
        # Letter-spaced words closed up in the view glue an override into one word.
        "instruction_override",
        re.compile(
            r"(?:ignore|disregard|forget)(?:all|any|the|your|of)*(?:previous|prior|above|earlier|preceding|"
            r"system)(?:instructions?|prompts?|rules|messages?)?",
            re.IGNORECASE,
        ),
    ),
    (
        # Other languages: an override verb, then (within the clause) instructions and "previous".
        "instruction_override",
        re.compile(
            _NOT_NEGATED
            + r"(?<!\bno )\b(?:ignor\w*|oubli\w*|vergiss\w*|missachte\w*|olvid\w*|dimentic\w*|esquec\w*|negeer\w*)\b"
            r"[^.\n]{0,50}?\b(?:instruc\w*|istruz\w*|anweisung\w*|consigne\w*|befehl\w*|indicaciones|"
            r"instructies|regles|regeln|reglas|regole)\b",
            re.IGNORECASE,
        ),
    ),
    (
        # Paraphrased overrides: set aside / pay no attention to / stop following what came before.
        "instruction_override",
        re.compile(
            r"\b(?:set\s+aside|pay\s+no\s+attention\s+to|no\s+longer\s+(?:follow|obey)|stop\s+(?:following|obeying)|"
            r"do\s+not\s+(?:follow|obey)|don'?t\s+(?:follow|obey)|throw\s+out|abandon)\b[^.\n]{0,40}?\b"
            r"(?:told|instructions?|rules|guidelines|directions|prompts?|orders|before|earlier|previously|so\s+far)\b",
            re.IGNORECASE,
        ),
    ),
    (
        # An order about the output addressed to whoever reads the text: "write only X",
        # "in every section write X", "the assistant must now ...".
        "output_order",
        re.compile(
            r"\b(?:write|output|respond|reply|answer|say|print|return|type)\s+(?:only|just|nothing\s+but|exactly)\b"
            r"[^.\n]{0,60}|\b(?:in|for|into)\s+(?:every|each|all(?:\s+the)?|your)\s+(?:sections?|answers?|responses?|"
            r"replies|outputs?|reports?)\b,?\s+(?:write|say|output|include|insert|put|respond|add)\b[^.\n]{0,60}|"
            r"\b(?:the\s+)?(?:model|assistant|ai|llm|chatbot|language\s+model|agents?|writer)s?\s+"
            r"(?:must|should|shall|has\s+to|needs?\s+to|is\s+to)\s+(?:now\s+)?(?:write|output|respond|reply|say|"
            r"ignore|include|insert|append|stop|obey|follow|only)\b[^.\n]{0,60}",
            re.IGNORECASE,
        ),
    ),
    (
        # A fake teammate or instruction block: "Message from LeadArchitect:", "### Instruction:",
        # a role name that opens a line or a table cell.
        "fake_message",
        re.compile(
            r"(?i:\b(?:message|note|update|memo|instructions?|orders?|directive)\s+from\s+(?:the\s+|your\s+)?"
            r"[A-Za-z][\w-]{2,30}(?:\s+[A-Za-z][\w-]{2,30})?\s*:)"
            r"|(?im:^[ \t|>*]*#{1,6}[ \t]*(?:instruction|instructions|response|system|input|prompt|human|assistant|"
            r"user)\b[^\n]{0,20}:?)"
            r"|(?im:(?:^|\|)[ \t#>*]*(?:lead[ \t]*architect|researcher|data[ \t]*analyst|reviewer|collector|teammate|"
            r"team[ \t]*lead|coordinator|orchestrator|supervisor|user|human)[ \t]*(?:says|said|writes|here)?[ \t]*:)",
        ),
    ),
    # Prompt delimiters (ours and the usual ones): untrusted text must not be able to
    # close its data block and speak outside it.
    ("delimiter", re.compile(r"<{3,}|>{3,}|<\s*/?\s*data\b[^>]*>", re.IGNORECASE)),
]

# A pattern can only match where one of its words occurs (in the lower-cased view):
# checking that first with `in` skips the regex for almost all benign text.
_OVERRIDE_VERBS = ("ignor", "disregard", "forget", "overrid", "bypass", "skip", "drop", "discard")
PATTERN_WORDS: Tuple[Tuple[str, ...], ...] = (
    _OVERRIDE_VERBS,
    _OVERRIDE_VERBS,
    ("new ", "updated ", "real ", "actual ", "true ", "revised "),
    ("you are now", "from now on", "pretend", "act as"),
    ("system prompt", "hidden instructions", "hidden prompt", "your instructions", "your prompt", "your rules"),
    ("developer mode", "jailbreak", "do anything now", "dan mode"),
    ("<|", "inst]", "<<sys", "<</sys", "system>", "assistant>", "user>", "tool>", "im start", "im end"),
    ("system", "assistant", "developer"),
    _OVERRIDE_VERBS,
    ("ignor", "oubli", "vergiss", "missacht", "olvid", "dimentic", "esquec", "negeer"),
    (
        "set aside",
        "no attention",
        "no longer",
        "stop follow",
        "stop obey",
        "not follow",
        "not obey",
        "n't follow",
        "n't obey",
        "dont follow",
        "dont obey",
        "throw out",
        "abandon",
    ),
    (
        "write",
        "output",
        "respond",
        "reply",
        "answer",
        "say",
        "print",
        "return",
        "type",
        "must",
        "should",
        "shall",
        "has to",
        "need",
        "is to",
    ),
    (
        " from ",
        "#",
        "architect",
        "researcher",
        "analyst",
        "reviewer",
        "collector",
        "teammate",
        "team",
        "coordinator",
        "orchestrator",
        "supervisor",
        "user",
        "human",
    ),
    ("<<<", ">>>", "data"),
)
assert len(PATTERN_WORDS) == len(INJECTION_PATTERNS)

# Patterns whose `^` means "a line starts here": matched on the view with its line breaks.
LINE_ANCHORED_KINDS = frozenset({"role_prefix", "fake_message"})
