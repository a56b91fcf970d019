"""Rubric prompts and JSON schemas of the LLM judges (reward code, not agent prompts).

The free-text field comes first in each schema: with constrained decoding the model
writes fields in schema order (the llamacpp backend builds its grammar from the schema
as written, key order kept; it sorts keys only to look a grammar up), so its reasoning
precedes the scores it justifies. It is called `assessment`, which also sorts before
every criterion, so a backend that sorted the keys would keep that order too. Scores are enums 0..5 rather than integer ranges because
llama.cpp's grammar converter ignores minimum/maximum. The assessment has a maxLength
(one character can cost a token) so that a rambling small model still closes its JSON
within the judge's max_tokens (256 by default).
"""

from __future__ import annotations

SCORE = {"type": "integer", "enum": [0, 1, 2, 3, 4, 5]}
NOTES_MAX_CHARS = 180

MACRO_CRITERIA = ("coverage", "flow", "structure", "tone", "repetition")
MICRO_CRITERIA = ("logic", "verifiability", "technical_precision", "density")

MACRO_SCHEMA = {
    "type": "object",
    "properties": {
        "assessment": {"type": "string", "maxLength": NOTES_MAX_CHARS},
        **{c: SCORE for c in MACRO_CRITERIA},
    },
    "required": ["assessment", *MACRO_CRITERIA],
    "additionalProperties": False,
}

MICRO_SCHEMA = {
    "type": "object",
    "properties": {
        "assessment": {"type": "string", "maxLength": NOTES_MAX_CHARS},
        **{c: SCORE for c in MICRO_CRITERIA},
        "hallucination": {"type": "boolean"},
    },
    "required": ["assessment", *MICRO_CRITERIA, "hallucination"],
    "additionalProperties": False,
}

_ANCHORS = """Scores are integers from 0 to 5. Be demanding: 3 means acceptable but unremarkable; give 5 only
when nothing could be improved; give 0 when the criterion is not met at all."""

MACRO_SYSTEM = f"""You are the senior editor judging a technical report as a whole.
Read the commissioned topic, the outline (section titles) and the report, then score it.

{_ANCHORS}

Criteria and anchors:
- coverage: how fully the report covers the topic. 5 = every essential aspect in depth;
  3 = the main aspects, some shallow or missing; 1 = touches the topic only in passing; 0 = off-topic.
- flow: how the report reads from start to end. 5 = each section builds on the previous one with clear
  transitions; 3 = readable but sections feel stacked; 1 = disjointed fragments; 0 = no discernible order.
- structure: organisation into sections. 5 = a logical outline with informative titles and balanced
  sections; 3 = sensible but uneven or vaguely titled; 1 = sections in arbitrary order or mislabelled; 0 = no structure.
- tone: consistency of a precise, neutral technical register. 5 = uniform and professional throughout;
  3 = mostly consistent with lapses (hype, chatty asides); 1 = frequent shifts; 0 = unsuitable throughout.
- repetition: freedom from repeated content (higher is better). 5 = no idea is stated twice;
  3 = some restated points or filler; 1 = much of the text repeats itself; 0 = mostly duplicated text.

Write a one- or two-sentence assessment first (what most limits the report), then the five scores.
Answer with a single JSON object and nothing else."""

MACRO_USER = """<topic>
{topic}
</topic>
<outline>
{outline}
</outline>
<report>
{report}
</report>"""

MICRO_SYSTEM = f"""You are a technical fact-checker auditing ONE chunk of a longer report.
You receive the topic, the editor's notes on the whole report, a summary of the report so far,
your notes on the previous chunk, the source excerpts cited by the chunk's section (the only
admissible evidence) and the chunk itself. Judge the chunk only.

{_ANCHORS}

Criteria and anchors:
- logic: 5 = every conclusion follows from stated premises; 3 = mostly sound with a gap or leap;
  1 = several non-sequiturs or contradictions; 0 = incoherent.
- verifiability: 5 = every substantive claim is backed by the source excerpts; 3 = the main claims are
  backed, some details are not; 1 = most claims have no support in the excerpts; 0 = claims contradict
  the excerpts. With no excerpts, judge whether the claims are standard, checkable facts.
- technical_precision: 5 = exact terms, quantities and units; 3 = correct but sometimes vague;
  1 = loose or misused terminology; 0 = wrong terms throughout.
- density: 5 = every sentence carries information; 3 = some filler or generic statements;
  1 = mostly filler; 0 = no content.
- hallucination: true only if the chunk states specifics (numbers, names, results) that contradict the
  excerpts or are invented beyond them; otherwise false.

Write a one- or two-sentence assessment first, then the scores and the hallucination flag.
Answer with a single JSON object and nothing else."""

MICRO_USER = """<topic>
{topic}
</topic>
<editor notes on the whole report>
{macro_notes}
</editor notes on the whole report>
<progress summary>
{summary}
</progress summary>
<notes on the previous chunk>
{previous_notes}
</notes on the previous chunk>
<source excerpts>
{sources}
</source excerpts>
<chunk section="{section_title}" part="{part}">
{chunk}
</chunk>"""

REPAIR_NOTE = (
    "Your previous answer could not be used: {error}. Reply again with only one JSON object "
    "with exactly these keys: {keys}. Scores are integers 0-5."
)
