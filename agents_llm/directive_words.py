"""Words of a plan's directive that the phase prompts write and the extractive team writes
back: the section tag ("[SECTION_ID: S2]") and the finding of a correction that carries none.
Below both, so that the roles' extractive rules need not import the prompts."""

from __future__ import annotations

from report_protocol import vocabulary as v

DEFAULT_FINDING = "apply the review notes"  # a correction without a finding of its own


def section_tag(section_id: str | None) -> str:
    return f"[{v.SECTION_ID_TAG}: {section_id}]"
