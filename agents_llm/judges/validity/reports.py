"""The validity suite's good reports: one hand-written, sourced report per topic of the
default corpus (`reports/<task_id>.json`, verbatim passages of the `python_stdlib` corpus),
loaded as `GoodReport`s; and the held-out part (`heldout/<task_id>.json`): six topics far from
the corpus (sourdough, bees, tides, bicycle chains, glaciers, bookbinding), sources and reports
written by hand from the report format and the topic alone, before the judge's rules were read,
and never tuned on: they measure whether the judge's orderings carry to material it was not
shaped on. A second held-out part (`heldout_2/`: vaccines, refrigerators, coral bleaching,
battery ageing, crop rotation, noise cancelling) was written the same way and committed before
any judge scored it, to check a judge change made after it. A third (`heldout_3/`: the cochlea,
volcanic eruptions, GPS, Weimar hyperinflation, cheese ripening, rainbows) was written the same
way, blind to the judge's rules, and a fourth (`heldout_4/`: lighthouse lenses, octopus
camouflage, suspension bridges, tea processing, sleep stages, container shipping) after the third
had been read for its violations, to check the judge change made from them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources

from rag.sources import SourceRef

from ...report_state import ReportState

REPORTS_PACKAGE = "agents_llm.judges.validity"


@dataclass(frozen=True)
class GoodSection:
    title: str
    content: str
    sources: tuple[SourceRef, ...]


@dataclass(frozen=True)
class GoodReport:
    """A hand-written good report on one task of the default corpus."""

    task_id: str
    topic: str
    key_terms: tuple[str, ...]
    sections: tuple[GoodSection, ...]
    extra_section: GoodSection
    sources: dict[str, SourceRef] = field(default_factory=dict)
    # Hand-written for the truth and meaning checks: (section index, exact text, its contradiction)
    # for three key facts, and a true, sourced section in other words than the topic's.
    contradicted: tuple[tuple[int, str, str], ...] = ()
    synonym_section: GoodSection | None = None

    def state(
        self, sections: list[GoodSection] | tuple[GoodSection, ...] | None = None, topic: str | None = None
    ) -> ReportState:
        """A ReportState with these sections (default: the good ones), as the env would hold it."""
        report = ReportState(topic=topic or self.topic, key_terms=list(self.key_terms))
        for sec in self.sections if sections is None else sections:
            report.append(sec.title, sec.content, list(sec.sources))
        return report


def _section(raw: dict, sources: dict[str, SourceRef], where: str) -> GoodSection:
    missing = [sid for sid in raw["sources"] if sid not in sources]
    if missing:
        raise ValueError(f"{where}: section {raw['title']!r} cites unknown sources {missing}")
    return GoodSection(raw["title"], raw["content"], tuple(sources[sid] for sid in raw["sources"]))


HELDOUT_FOLDER = "heldout"
HELDOUT_2_FOLDER = "heldout_2"
HELDOUT_3_FOLDER = "heldout_3"
HELDOUT_4_FOLDER = "heldout_4"


def _contradiction(raw: dict, report: dict, where: str) -> tuple[int, str, str]:
    index, old, new = raw["section"], raw["from"], raw["to"]
    if not (0 <= index < len(report["sections"]) and old in report["sections"][index]["content"]):
        raise ValueError(f"{where}: contradicted text {old!r} is not in section {index}")
    return index, old, new


def load_heldout_reports() -> list[GoodReport]:
    """The held-out good reports (`heldout/`): topics outside every corpus, never tuned on."""
    return load_good_reports(HELDOUT_FOLDER)


def load_heldout_2_reports() -> list[GoodReport]:
    """The second held-out part (`heldout_2/`): six more outside topics, written blind to the judge."""
    return load_good_reports(HELDOUT_2_FOLDER)


def load_heldout_3_reports() -> list[GoodReport]:
    """The third held-out part (`heldout_3/`): six more outside topics, written blind to the judge."""
    return load_good_reports(HELDOUT_3_FOLDER)


def load_heldout_4_reports() -> list[GoodReport]:
    """The fourth held-out part (`heldout_4/`): six more outside topics, written blind to the judge."""
    return load_good_reports(HELDOUT_4_FOLDER)


def load_good_reports(folder_name: str = "reports") -> list[GoodReport]:
    """Every good report shipped in `folder_name/` (default: the suite's twelve), sorted by task id."""
    folder = resources.files(REPORTS_PACKAGE) / folder_name
    out = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".json"):
            continue
        raw = json.loads(entry.read_text(encoding="utf-8"))
        where = f"validity report {entry.name}"
        sources = {
            sid: SourceRef(source=s["source"], chunk_id=f"{raw['task_id']}:{sid}", text=s["text"])
            for sid, s in raw["sources"].items()
        }
        out.append(
            GoodReport(
                task_id=raw["task_id"],
                topic=raw["topic"],
                key_terms=tuple(raw["key_terms"]),
                sections=tuple(_section(s, sources, where) for s in raw["sections"]),
                extra_section=_section(raw["extra_section"], sources, where),
                sources=sources,
                contradicted=tuple(_contradiction(c, raw, where) for c in raw.get("contradicted", ())),
                synonym_section=_section(raw["synonym_section"], sources, where) if "synonym_section" in raw else None,
            )
        )
    if not out:
        raise FileNotFoundError(f"no validity reports under {folder}")
    return out
