"""The report env runs the research route and write_report the product route, each named once
in its config (agents_llm.engine.Route), as `train.py` and `write_report.py` compose them."""

from __future__ import annotations

from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

import experiments.train  # noqa: F401  (registers the configs composed here)
import experiments.write_report  # noqa: F401
from agents_llm.engine import EngineSettings

CONF = Path(__file__).resolve().parents[2] / "conf"


def settings(config: str, overrides: list[str], node: str) -> EngineSettings:
    from experiments.run_config import register_configs

    register_configs()
    with initialize_config_dir(str(CONF), version_base="1.3"):
        cfg = compose(config, overrides=overrides)
    return EngineSettings(**OmegaConf.to_container(OmegaConf.select(cfg, node), resolve=True))


def test_the_env_and_write_report_configs_name_their_routes():
    research = settings("config", ["env=report_writing"], "env.engine")
    assert (research.route, research.reuses_sources, research.chats, research.flow.value) == (
        "research",
        True,
        True,
        "team",
    )
    assert not research.writes_from_evidence
    proxy = settings("config", ["env=report_writing_extractive"], "env.engine")
    assert proxy.route == "research" and proxy.reuses_sources
    product = settings("write_report", ["task=x"], "engine")
    assert (product.route, product.flow.value, product.chats) == ("product", "pooled", False)
    assert product.writes_from_evidence
    # A setting the route sets stays a command-line override away.
    cited = settings(
        "config",
        ["env=report_writing", "env.engine.evidence_flow=cited", "env.engine.conversation=false"],
        "env.engine",
    )
    assert (cited.route, cited.flow.value, cited.chats) == ("research", "cited", False)
