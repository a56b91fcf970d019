"""Fixtures for the extractive team: a small real corpus in a temporary folder, a real
RAG store over it (hashing embedding, so ingestion takes well under a second)."""

from __future__ import annotations

import pytest

from tests.report_doubles import HASHING_JUDGE, HASHING_RAG, isolated_cache  # noqa: F401 (fixture)

# Each document covers one subtopic; the topic words alone find the overview first.
DOCS = {
    "overview.md": (
        "# Solid-state batteries\n\n"
        "Solid-state batteries replace the liquid electrolyte of a lithium-ion cell with a solid one. "
        "Solid-state batteries promise higher energy density and better safety than liquid cells. "
        "Many research groups study solid-state batteries for electric vehicles and phones.\n"
    ),
    "electrolytes.md": (
        "# Solid electrolytes\n\n"
        "A solid electrolyte is a material that conducts lithium ions while blocking electrons. "
        "Garnet electrolytes such as LLZO reach ionic conductivities near 1 mS/cm at room temperature. "
        "Sulfide electrolytes are softer and easier to press into dense layers.\n"
    ),
    "dendrites.md": (
        "# Dendrite growth\n\n"
        "A dendrite is a thin metallic filament of lithium that grows through the separator during charging. "
        "Dendrite growth can short-circuit the cell and cause thermal runaway. "
        "Stack pressure above 5 MPa suppresses dendrite penetration in several ceramic separators.\n"
    ),
    "manufacturing.md": (
        "# Manufacturing at scale\n\n"
        "Manufacturing thin ceramic separators at scale remains expensive and slow. "
        "Dry-room manufacturing lines need humidity below 1 percent to protect sulfide materials. "
        "Roll-to-roll manufacturing of composite layers is the route most pilot plants follow.\n"
    ),
}

TASK = {
    "id": "ssb",
    "topic": "Solid-state batteries",
    "split": "train",
    "key_terms": ["electrolyte", "dendrite", "manufacturing"],
}


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("extractive-corpus")
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def make_env(corpus):
    from envs.report.writing import ReportWritingEnv

    def build(**overrides):
        cfg = dict(
            llm={"backend": "extractive"},
            rag=HASHING_RAG,
            judge=dict(HASHING_JUDGE, key_terms=list(TASK["key_terms"])),
            tasks=[dict(TASK, split="train"), dict(TASK, id="ssb-holdout", split="holdout")],
            corpus=str(corpus),
            max_rounds=6,
            min_rounds_before_terminate=1,
            infos="full",
        )  # full: these tests read the round outputs from infos
        cfg.update(overrides)
        return ReportWritingEnv(**cfg)

    return build
