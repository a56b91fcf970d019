"""The blind-written held-out parts of the judge validity suite (`heldout_2/` to `heldout_4/`) are
complete and held out: each part's topics are new to the suite, the parts before it and the task pools.

Only the data is checked here: no judge runs on it, so that it stays unshaped by the judge."""

from __future__ import annotations

import pytest

from agents_llm.judges.validity import (
    load_good_reports,
    load_heldout_2_reports,
    load_heldout_3_reports,
    load_heldout_4_reports,
    load_heldout_reports,
)
from envs.report.tasks import load_tasks

# Each part, and the parts written before it (whose topics it must not repeat).
PARTS = {
    "heldout_2": (load_heldout_2_reports, (load_good_reports, load_heldout_reports)),
    "heldout_3": (load_heldout_3_reports, (load_good_reports, load_heldout_reports, load_heldout_2_reports)),
    "heldout_4": (
        load_heldout_4_reports,
        (load_good_reports, load_heldout_reports, load_heldout_2_reports, load_heldout_3_reports),
    ),
}


@pytest.mark.parametrize("part", PARTS)
def test_a_held_out_part_has_six_new_topics(part):
    load, before = PARTS[part]
    reports = load()
    ids = [g.task_id for g in reports]
    assert len(ids) >= 6 and len(set(ids)) == len(ids)
    earlier = [g for loader in before for g in loader()]
    taken = {g.task_id for g in earlier}
    taken |= {t.id for t in load_tasks(split="all")} | {t.id for t in load_tasks("heldout_pool", split="all")}
    assert not taken & set(ids)
    assert not {g.topic for g in earlier} & {g.topic for g in reports}


@pytest.mark.parametrize("part", PARTS)
def test_every_report_of_a_held_out_part_is_complete(part):
    for good in PARTS[part][0]():
        assert len(good.sections) >= 3 and all(s.sources for s in good.sections), good.task_id
        assert all(len(s.content.split("\n\n")) == 2 for s in good.sections), good.task_id
        assert 5 <= len(good.key_terms) <= 7 and 7 <= len(good.sources) <= 9, good.task_id
        cited = {ref.chunk_id for s in good.sections for ref in s.sources}
        assert good.extra_section.sources and not cited & {ref.chunk_id for ref in good.extra_section.sources}
        assert good.synonym_section is not None and good.synonym_section.sources, good.task_id
        assert len(good.contradicted) >= 3, good.task_id
        for index, old, new in good.contradicted:
            assert old in good.sections[index].content and new not in good.sections[index].content, (good.task_id, old)
