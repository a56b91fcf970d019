"""write_report's command line takes any task sentence; its outputs read as a report, not a training run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents_llm import export
from agents_llm.report_state import ReportState, SourceRef

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "experiments" / "write_report.py"
TASK = "a file's size, in bytes: why"


def _module():
    import experiments.write_report as module

    return module


@pytest.mark.parametrize(
    "argv",
    [
        [f"task={TASK}", "docs=papers"],
        ["docs=papers", f"--task={TASK}"],
        ["--task", TASK, "docs=papers"],
    ],
)
def test_the_task_is_taken_off_the_command_line_before_hydra_whatever_it_says(argv):
    task, rest = _module().take_task(argv)
    assert task == TASK and rest == ["docs=papers"]


def test_a_task_file_and_odd_characters_reach_the_task_as_typed(tmp_path):
    module = _module()
    odd = 'Costs of "${oc.env:HOME}", commas, colons: and it\'s [quoted]'
    (tmp_path / "topic.txt").write_text(odd + "\n", encoding="utf-8")
    assert module.take_task(["--task-file", str(tmp_path / "topic.txt"), "seed=1"]) == (odd, ["seed=1"])
    for bad, says in ((["task=  "], "the task is empty"), (["--task"], "--task needs a value")):
        with pytest.raises(module.TaskArgumentError, match=says):
            module.take_task(bad)
    with pytest.raises(module.TaskArgumentError, match="missing.txt: cannot read it"):
        module.take_task(["--task-file", str(tmp_path / "missing.txt")])


def _cli(tmp_path, *args):
    env = dict(os.environ, QMIX_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            *args,
            "llm=scripted",  # the test double: this test is about the command line, not the writing
            "rag=hashing",
            "judge.embedding=hashing",
            "export.pdf=false",
            "algo.rounds.research=1",
            "algo.rounds.drafting=2",
            "progress=plain",
            f"output_root={tmp_path / 'out'}",
            f"data_root={tmp_path / 'data'}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )


@pytest.mark.slow
def test_a_task_with_an_apostrophe_a_comma_and_a_colon_runs(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "files.md").write_text(
        "# File sizes\n\nA file's size is the number of bytes it holds, and the operating system\n"
        "reports it in bytes. Programs read the size in bytes to allocate a buffer before they read.\n",
        encoding="utf-8",
    )
    proc = _cli(tmp_path, f"task={TASK}", f"docs={docs}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"Report: {TASK}" in proc.stdout
    # The progress lines speak of writing, not of training.
    assert "writing round 1/" in proc.stderr and "train" not in proc.stderr, proc.stderr[-2000:]
    out = next((tmp_path / "out").iterdir())
    assert (out / "report.md").read_text(encoding="utf-8").startswith(f"# {TASK}")


@pytest.mark.slow
def test_no_task_is_a_clear_error(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "docs=.", "llm=scripted"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=dict(os.environ, QMIX_CACHE_DIR=str(tmp_path / "cache")),
    )
    assert proc.returncode == 2 and "write_report: no task" in proc.stderr, proc.stderr[-2000:]


def test_the_latex_export_shows_markdown_links_as_text():
    report = ReportState(topic="Packaging")
    report.append(
        "Tools [pip](https://pip.pypa.io/en/stable/)",
        "Install with [pip](https://pip.pypa.io/en/stable/) as [the guide](#install) says, "
        "or see <https://packaging.python.org> and ![a diagram](figure.png).",
        [SourceRef("guide.md", None, "c1", "text")],
    )
    tex = export.to_latex(report)
    body = tex[tex.index(r"\begin{document}") :]
    assert "](" not in body and "<https" not in body and "$<$" not in body, body
    assert "Install with pip (https://pip.pypa.io/en/stable/) as the guide says" in body
    assert "https://packaging.python.org and a diagram." in body
    assert r"\section{Tools pip (https://pip.pypa.io/en/stable/)}" in body


def test_a_reference_style_link_reads_as_its_text_in_both_exports_and_code_keeps_its_brackets():
    # Quoted from a Markdown document whose link definitions are elsewhere (Node's corepack.md).
    report = ReportState(topic="Corepack")
    report.append(
        "Configuring a package",
        "If the value corresponds to a [supported package manager][], Corepack runs it. "
        "It reads the closest [`package.json`][pkg] file.\n\n```\nx = grid[i][j]\n```",
        [SourceRef("corepack.md", None, "c1", "text")],
    )
    markdown = export.to_markdown(report)
    assert "a supported package manager, Corepack" in markdown and "][" not in markdown.split("```")[0]
    assert "grid[i][j]" in markdown  # code is quoted as written
    tex = export.to_latex(report)
    assert "a supported package manager, Corepack" in tex and "grid[i][j]" in tex


LICENCE = (
    "Permission is hereby granted, free of charge, to any person obtaining a copy of this software and\n"
    "associated documentation files, to deal in the Software without restriction, including the rights\n"
    "to use, copy, modify, merge, publish and distribute copies of the Software.\n\n"
    "The above copyright notice and this permission notice shall be included in all copies or\n"
    "substantial portions of the Software. The Software is provided as is, without warranty of any kind.\n"
)
WARRANTY = (
    "This program is distributed in the hope that it will be useful, but without any warranty; without\n"
    "even the implied warranty of merchantability or fitness for a particular purpose. You should have\n"
    "received a copy of the licence along with this program. Redistribution and use in source and binary\n"
    "forms, with or without modification, are permitted provided that the conditions are met.\n"
)


@pytest.mark.slow
def test_unrelated_documents_give_the_documented_exit_code_and_no_section(tmp_path):
    from agents_llm.coverage import NOT_COVERED_EXIT_CODE

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "mit.txt").write_text(LICENCE, encoding="utf-8")
    (docs / "warranty.md").write_text("# Warranty\n\n" + WARRANTY, encoding="utf-8")
    task = "A healthy diet for endurance athletes: carbohydrates, protein and hydration"
    proc = _cli(tmp_path, f"task={task}", f"docs={docs}")
    assert proc.returncode == NOT_COVERED_EXIT_CODE == 4, proc.stdout + proc.stderr[-2000:]
    assert f"No report: the documents do not cover the topic {task!r}" in proc.stdout
    # It says what it searched and what came back.
    assert f'Searched the documents for "{task}"' in proc.stdout, proc.stdout
    assert ": nothing came back." in proc.stdout or "came back from" in proc.stdout, proc.stdout
    out = next((tmp_path / "out").iterdir())
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## " not in md.replace("## References", ""), md  # no section, licence text or otherwise
    assert "Permission is hereby granted" not in md and "warranty of merchantability" not in md
    assert "do not cover this topic" in md
    # The same documents on a topic they cover give a report.
    ok = tmp_path / "ok"
    ok.mkdir()
    proc = _cli(ok, "task=Software licence permissions and warranty", f"docs={docs}")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert "Report: Software licence permissions and warranty" in proc.stdout
