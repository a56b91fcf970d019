"""Export a finished report: Markdown, LaTeX and PDF, with a references section.

References are the sources the report's sections rest on (`ReportState.all_sources`),
numbered in order of first use; each section ends with the numbers of its sources.
Gaps the team found (`deficient_topics`) are listed as information the documents do
not contain, and a report with no section says so at the top instead of pretending.

The LaTeX uses only what Debian's ``texlive-latex-base`` ships (the article class, no
extra packages); every piece of model text is escaped and reduced to characters that
class can typeset. The PDF is built with ``pdflatex`` when it is installed; otherwise
(or with ``pdf=False``) it is skipped with a message, and the Markdown and LaTeX are
kept whatever happens.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from rag.headings import heading_title
from rag.sentences import blocks, split_sentences

from .report_state import OPENING_TITLE, ReportState, SourceRef
from .sentence_reuse import instruction_like, quotable_sentences, statement_text

SHORT_REPORT_NOTE = (
    "Short report: no section could be written from the documents, because they do not "
    "contain information on this topic."
)


@dataclass
class ExportResult:
    markdown: Path
    latex: Path
    pdf: Path | None = None
    messages: list[str] = field(default_factory=list)  # what was skipped or failed, and why

    def as_dict(self) -> dict:
        return {
            "markdown": str(self.markdown),
            "latex": str(self.latex),
            "pdf": str(self.pdf) if self.pdf else None,
            "messages": list(self.messages),
        }


def numbered_sources(report: ReportState) -> list[SourceRef]:
    """The references, one per place a reader can find: parts of a passage that read as the same
    place (two overlapping chunks of one heading's passage open on the same words) are one entry."""
    out: dict[str, SourceRef] = {}
    for ref in report.all_sources():
        out.setdefault(reference_label(ref), ref)
    return list(out.values())


_OPENING_WORDS = 10


def _quotable_opening(ref: SourceRef) -> str:
    """The words a reference quotes: the passage's first sentence that a report may quote
    (`sentence_reuse.quotable_sentences`). So a reference quotes nothing the body could not: not
    an order, the tag it left ("Stay in character. REF29 The drain ..."), anything of an order's
    paragraph, a fragment ("Ref OSPREY14."), a link or markup; '' when the passage has no such sentence."""
    return next(iter(quotable_sentences(statement_text(ref))), "")


def reference_label(ref: SourceRef) -> str:
    """One passage as a reader can find it: file, page, the section heading the passage
    sits under (when it holds one) and its opening words, so that two passages of one
    file read as two places: `guide.md, section “Pinning”, “Pin every dependency with ...”`."""
    parts = [ref.label()]
    found = blocks(ref.text)
    # The heading whose passage it is, else the first heading the passage holds, when it reads as a
    # title: a block of "key: value" lines above a "---" rule is a setext heading to Markdown, and a
    # planted one ("ai_summary_policy: Prepend ... to any generated report") is no section to name.
    heading = ref.heading or next(
        (title[0] for b in found if b.kind == "heading" and (title := heading_title(b.text, marked_kinds=True))), ""
    )
    if heading and not any(instruction_like(s) for s in split_sentences(heading)):
        parts.append(f"section \u201c{heading}\u201d")
    opening = _quotable_opening(ref)
    if opening:
        words = opening.split()
        parts.append(
            "\u201c" + " ".join(words[:_OPENING_WORDS]) + (" ...\u201d" if len(words) > _OPENING_WORDS else "\u201d")
        )
    return ", ".join(parts)


def _source_numbers(report: ReportState) -> dict[tuple, int]:
    """Each cited source's reference number (two sources with one label share it)."""
    numbers: dict[str, int] = {}
    return {s.key: numbers.setdefault(reference_label(s), len(numbers) + 1) for s in report.all_sources()}


def _section_refs(section, numbers: dict[tuple, int]) -> list[int]:
    return sorted({numbers[s.key] for s in section.sources if s.key in numbers})


def to_markdown(report: ReportState, *, subtitle: str = "", missing_note: str | None = None) -> str:
    """The report as Markdown: title, sections with their source numbers, gaps, references."""
    numbers = _source_numbers(report)
    parts = [f"# {report.topic.strip()}", ""]
    if subtitle:
        parts += [f"*{subtitle}*", ""]
    note = missing_note or (SHORT_REPORT_NOTE if report.is_empty else None)
    if note:  # a short or interrupted report says so before anything else
        parts += [f"> **{note}**", ""]
    if report.opening.strip():
        parts += [f"## {OPENING_TITLE}", "", report.opening.strip(), ""]
    for s in report.sections:
        parts += [f"## {s.title.strip()}", "", _reference_links_as_text(s.content.strip()), ""]
        refs = _section_refs(s, numbers)
        if refs:
            parts += ["Sources: " + ", ".join(f"[{n}]" for n in refs), ""]
    if report.deficient_topics:
        parts += ["## Information not found in the documents", ""]
        parts += [f"- {t}" for t in report.deficient_topics] + [""]
    references = numbered_sources(report)
    parts += ["## References", ""]
    if references:
        parts += [f"{i}. {reference_label(r)}" for i, r in enumerate(references, 1)]
    else:
        parts += ["No section cites a source."]
    return "\n".join(parts).rstrip() + "\n"


# -- LaTeX -----------------------------------------------------------------------------
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
    "<": r"$<$",
    ">": r"$>$",
    "|": r"$|$",
}  # math mode: right glyphs in the default OT1 encoding
_UNICODE_TO_ASCII = {
    "\u2014": "---",
    "\u2013": "--",
    "\u2018": "`",
    "\u2019": "'",
    "\u201c": "``",
    "\u201d": "''",
    "\u2026": "...",
    "\u00a0": " ",
    "\u2022": "-",
    "\u00d7": "x",
    "\u2212": "-",
    "\u2192": "->",
    "\u00b0": " deg",
    "\u00ab": "<<",
    "\u00bb": ">>",
}


def _ascii(text: str) -> str:
    """Text the base article class can typeset: accents dropped, typographic marks mapped, the rest '?'."""
    out = []
    for ch in text:
        if ord(ch) < 128:
            out.append(ch)
            continue
        if ch in _UNICODE_TO_ASCII:
            out.append(_UNICODE_TO_ASCII[ch])
            continue
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        out.append(base if base and all(ord(c) < 128 for c in base) else "?")
    return "".join(out)


def escape_latex(text: str) -> str:
    """Escape model text for LaTeX (special characters, non-ASCII, control characters)."""
    text = _ascii(text)
    text = "".join(c for c in text if c in "\n\t" or ord(c) >= 32)
    # `` and '' produced above are LaTeX quotes; escape everything else one character at a time.
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def _latex_body(markdown_text: str) -> str:
    """Paragraphs and bullet lists of section content, escaped; **bold** becomes \\textbf; a fenced
    code block is printed verbatim."""
    blocks: list[str] = []
    items: list[str] = []

    def flush_items():
        if items:
            blocks.append("\\begin{itemize}\n" + "\n".join(f"  \\item {i}" for i in items) + "\n\\end{itemize}")
            items.clear()

    para: list[str] = []

    def flush_para():
        if para:
            blocks.append(" ".join(para))
            para.clear()

    code: list[str] | None = None  # the lines of an open code fence, printed as they are
    for line in markdown_text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            if code is None:
                flush_para()
                flush_items()
                code = []
            else:
                blocks.append(_verbatim(code))
                code = None
            continue
        if code is not None:
            code.append(line)
            continue
        if not stripped:
            flush_para()
            flush_items()
            continue
        m = re.match(r"^(?:[-*\u2022]|\d+[.)])\s+(.*)$", stripped)
        if m:
            flush_para()
            items.append(_inline(m.group(1)))
        else:
            flush_items()
            para.append(_inline(stripped.lstrip("#").strip()))
    if code is not None:  # a fence left open: its lines are code all the same
        blocks.append(_verbatim(code))
    flush_para()
    flush_items()
    return "\n\n".join(blocks)


def _verbatim(lines: list[str]) -> str:
    """Code as the document writes it: ASCII (pdflatex), no control characters, and never the
    line that would end the environment early."""
    text = "\n".join("".join(c for c in _ascii(line) if c == "\t" or ord(c) >= 32) for line in lines)
    return "\\begin{verbatim}\n" + text.replace("\\end{verbatim}", "\\end {verbatim}") + "\n\\end{verbatim}"


_MD_LINK = re.compile(r"!?\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK = re.compile(r"<((?:https?|ftp)://[^>\s]+|[^>\s@]+@[^>\s]+)>")
# A reference-style link, "[supported package manager][]" or "[text][label]": its definition is in
# the document, not in the quoted sentence, so a reader sees its text.
_REF_LINK = re.compile(r"!?\[([^\]\n]+)\]\[[^\]\n]*\]")


def links_as_text(text: str) -> str:
    """Markdown links as a reader of a printed page sees them: `[pip](https://pip.pypa.io)`
    becomes "pip (https://pip.pypa.io)", a link to a place in a page (`#anchor`, a
    relative file) its text alone, an image its alt text, `<https://x>` the address, and a
    reference-style link (`[pip][]`) its text."""

    def one(match: re.Match) -> str:
        label, target = match.group(1).strip(), match.group(2).strip()
        if match.group(0).startswith("!") or not re.match(r"(?:https?|ftp)://", target):
            return label or target
        return f"{label} ({target})" if label and label != target else target

    return _AUTOLINK.sub(r"\1", _MD_LINK.sub(one, _REF_LINK.sub(r"\1", text)))


def _reference_links_as_text(content: str) -> str:
    """A section's Markdown with reference-style links as their text, code blocks untouched."""
    parts = re.split(r"(^```.*?^```[^\n]*$)", content, flags=re.MULTILINE | re.DOTALL)
    return "".join(part if part.startswith("```") else _REF_LINK.sub(r"\1", part) for part in parts)


def _inline(text: str) -> str:
    text = links_as_text(text)
    pieces = text.split("**")
    if len(pieces) % 2 == 0:  # unbalanced: keep the asterisks as text
        return escape_latex(text)
    return "".join(escape_latex(p) if i % 2 == 0 else f"\\textbf{{{escape_latex(p)}}}" for i, p in enumerate(pieces))


def to_latex(report: ReportState, *, subtitle: str = "", missing_note: str | None = None) -> str:
    numbers = _source_numbers(report)
    refs = numbered_sources(report)
    lines = [
        r"\documentclass[11pt]{article}",
        r"\title{" + escape_latex(report.topic.strip()) + "}",
        r"\author{" + escape_latex(subtitle) + "}" if subtitle else r"\author{}",
        r"\date{}",
        r"\begin{document}",
        r"\maketitle",
        "",
    ]
    note = missing_note or (SHORT_REPORT_NOTE if report.is_empty else None)
    if note:
        lines += [r"\noindent\textbf{" + escape_latex(note) + "}", ""]
    if report.opening.strip():
        lines += [r"\section*{" + OPENING_TITLE + "}", _latex_body(report.opening), ""]
    for s in report.sections:
        lines += [r"\section{" + escape_latex(links_as_text(s.title.strip())) + "}", _latex_body(s.content)]
        cited = _section_refs(s, numbers)
        if cited:
            lines += ["", r"\noindent Sources: \cite{" + ",".join(f"ref{n}" for n in cited) + "}"]
        lines.append("")
    if report.deficient_topics:
        lines += [r"\section*{Information not found in the documents}", r"\begin{itemize}"]
        lines += [f"  \\item {escape_latex(t)}" for t in report.deficient_topics]
        lines += [r"\end{itemize}", ""]
    if refs:
        lines += [r"\begin{thebibliography}{" + str(len(refs)) + "}"]
        lines += [f"\\bibitem{{ref{i}}} {escape_latex(reference_label(r))}" for i, r in enumerate(refs, 1)]
        lines += [r"\end{thebibliography}"]
    else:
        lines += [r"\section*{References}", "No section cites a source."]
    lines += ["", r"\end{document}", ""]
    return "\n".join(lines)


# -- PDF -------------------------------------------------------------------------------
def find_tex_engine() -> str | None:
    return shutil.which("pdflatex")


def build_pdf(tex_path: Path, *, timeout_s: float = 120.0) -> tuple[Path | None, str]:
    """(pdf path or None, message). Two pdflatex passes resolve the citations; never raises."""
    engine = find_tex_engine()
    if engine is None:
        return None, (
            "PDF skipped: no TeX engine (pdflatex) is installed; on Debian/Ubuntu: "
            "apt-get install texlive-latex-base. The Markdown and LaTeX files are written."
        )
    tex_path = Path(tex_path)
    with tempfile.TemporaryDirectory(prefix="qmix-latex-") as work:
        cmd = [
            engine,
            "-interaction=nonstopmode",
            "-halt-on-error",
            "-no-shell-escape",
            f"-output-directory={work}",
            str(tex_path.resolve()),
        ]
        for _ in range(2):
            try:
                proc = subprocess.run(
                    cmd, cwd=work, capture_output=True, text=True, errors="replace", timeout=timeout_s
                )
            except subprocess.TimeoutExpired:
                return None, f"PDF failed: pdflatex ran longer than {timeout_s:.0f} s on {tex_path}"
            if proc.returncode != 0:
                errors = [ln for ln in proc.stdout.splitlines() if ln.startswith("!")]
                where = "; ".join(errors[:3]) or proc.stdout.strip().splitlines()[-1:] or ["no log"]
                return None, f"PDF failed: pdflatex exited with {proc.returncode} on {tex_path}: {where}"
        built = Path(work) / (tex_path.stem + ".pdf")
        if not built.exists():
            return None, f"PDF failed: pdflatex wrote no PDF for {tex_path}"
        target = tex_path.with_suffix(".pdf")
        shutil.copyfile(built, target)
    return target, f"PDF written with {engine}"


def export_report(
    report: ReportState,
    out_dir: str | Path,
    *,
    basename: str = "report",
    pdf: bool = True,
    subtitle: str = "",
    missing_note: str | None = None,
) -> ExportResult:
    """Write `<basename>.md`, `.tex` and (when possible) `.pdf` into `out_dir`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md_path, tex_path = out / f"{basename}.md", out / f"{basename}.tex"
    _write(md_path, to_markdown(report, subtitle=subtitle, missing_note=missing_note))
    _write(tex_path, to_latex(report, subtitle=subtitle, missing_note=missing_note))
    result = ExportResult(markdown=md_path, latex=tex_path)
    if not pdf:
        result.messages.append("PDF skipped: export.pdf=false")
        return result
    pdf_path, message = build_pdf(tex_path)
    result.pdf = pdf_path
    if pdf_path is None:
        result.messages.append(message)
    return result


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def references(report: ReportState) -> Sequence[str]:
    return [reference_label(r) for r in numbered_sources(report)]
