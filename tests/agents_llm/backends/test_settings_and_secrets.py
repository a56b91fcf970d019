"""Every numeric training/engine setting is range-checked at start, naming the key; secrets
are redacted wherever text is written; a run leaves no generated code in the temp folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

from agents_llm.redaction import REDACTED, redact_text

ROOT = Path(__file__).resolve().parents[3]

BAD_TRAINING = [  # override -> the key the error must name
    ("train.episodes=-5", "train.episodes"),
    ("train.episodes=0", "train.episodes"),
    ("train.log_every=0", "train.log_every"),
    ("train.eval_every=-1", "train.eval_every"),
    ("train.eval_episodes=0", "train.eval_episodes"),
    ("train.checkpoint_every=-2", "train.checkpoint_every"),
    ("train.keep_checkpoints=-1", "train.keep_checkpoints"),
    ("train.max_rounds=0", "train.max_rounds"),
    ("train.llm_error_share_stop=0", "train.llm_error_share_stop"),
    ("train.llm_error_share_stop=1.5", "train.llm_error_share_stop"),
    ("eval.episodes=0", "eval.episodes"),
    ("eval.seed=-1", "eval.seed"),
    ("seed=-1", "seed"),
    ("seed=5000000000", "seed"),
    ("torch_threads=0", "torch_threads"),
    ("logger.wandb_mode=offlin", "logger.wandb_mode"),
    ("algo.gamma=5", "algo.gamma"),
    ("algo.gamma=-0.1", "algo.gamma"),
    ("algo.epsilon_start=-3", "algo.epsilon_start"),
    ("algo.epsilon_finish=2", "algo.epsilon_finish"),
    ("algo.td_lambda=1.5", "algo.td_lambda"),
    ("algo.batch_size=0", "algo.batch_size"),
    ("algo.buffer_size=0", "algo.buffer_size"),
    ("algo.lr=0", "algo.lr"),
    ("algo.lr=-1e-3", "algo.lr"),
    ("algo.tau=0", "algo.tau"),
    ("algo.hidden_dim=0", "algo.hidden_dim"),
    ("algo.gnn_layers=-1", "algo.gnn_layers"),
    ("algo.updates_per_episode=0", "algo.updates_per_episode"),
    ("algo.target_update_interval=0", "algo.target_update_interval"),
    ("algo.epsilon_anneal_steps=-1", "algo.epsilon_anneal_steps"),
    ("algo.hypernet_layers=3", "algo.hypernet_layers"),
    ("algo.learning_starts=4", "algo.learning_starts"),
]
BAD_ENGINE = [
    ("agent_max_tokens", -5),
    ("query_max_tokens", 0),
    ("collector_max_tokens", 0),
    ("summary_max_tokens", -1),
    ("gate_max_tokens", 0),
    ("max_queries", 0),
    ("evidence_max_chars", 0),
    ("temperature", -0.5),
    ("seed", -1),
]


def test_every_bad_training_value_is_refused_naming_its_key():
    from hydra import compose, initialize_config_dir

    from experiments.run_config import ConfigValueError, register_configs, validate_run_config

    register_configs()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        base = compose("config", overrides=["env=two_step"])
    validate_run_config(base)  # the defaults pass
    for override, key in BAD_TRAINING:
        cfg = base.copy()  # composing once keeps the loop fast; the schema's type checks still apply
        name, value = override.split("=", 1)
        OmegaConf.update(cfg, name, yaml.safe_load(value))
        with pytest.raises(ConfigValueError, match=rf"^{key.replace('.', '[.]')} "):
            validate_run_config(cfg)


def test_every_bad_engine_value_is_refused_naming_its_key():
    from agents_llm.engine import EngineSettings

    EngineSettings()
    for key, value in BAD_ENGINE:
        with pytest.raises(ValueError, match=rf"^engine[.]{key} must be"):
            EngineSettings(**{key: value})


def test_the_report_env_refuses_a_bad_engine_value_before_any_call():
    from envs.report.writing import ReportWritingEnv

    with pytest.raises(ValueError, match=r"engine.agent_max_tokens must be an integer >= 1, got -5"):
        ReportWritingEnv(llm={"backend": "scripted"}, engine={"agent_max_tokens": -5})


@pytest.mark.parametrize(
    "text, secret",
    [
        ("retry with Authorization: Basic YWxpY2U6czNjcmV0", "YWxpY2U6czNjcmV0"),
        ('{"headers": {"authorization": "Bearer abc.def-123"}}', "abc.def-123"),
        ("proxy at http://alice:S3cretPass99@10.0.0.5:3128/", "S3cretPass99"),
        ("the password: hunter2", "hunter2"),
        ("api_key=ab12cd34ef", "ab12cd34ef"),
        ("use credential AKIA-7788-XY to log in", "AKIA-7788-XY"),
        ("Credentials: admin/Pa55word!", "admin/Pa55word!"),
        ("the password is Tr0ub4dor&3", "Tr0ub4dor&3"),
        ("secret = 's3cr3t-value'", "s3cr3t-value"),
    ],
)
def test_redaction_scrubs_echoes_urls_and_free_form_secrets(text, secret):
    out = redact_text(text)
    assert secret not in out and REDACTED in out, out


def test_redaction_leaves_prose_about_passwords_readable():
    prose = "Password hashing with a salt slows credential stuffing; a secret sharing scheme splits a key."
    assert redact_text(prose) == prose


def test_trace_of_an_episode_hides_free_form_secrets_from_documents(tmp_path):
    from agents_llm.backends.scripted import ScriptedBackend
    from report_protocol import ActionTable
    from envs.report.writing import ReportWritingEnv
    from tests.report_doubles import HASHING_JUDGE, StubRetriever

    T = ActionTable(4)
    leaked = (
        "Admin login: the password: hunter2xyz. Backup credential AKIA-7788-XYZ9. Call it with api_key=ab12cd34ef99."
    )
    env = ReportWritingEnv(
        llm={"backend": "scripted"},
        backend=ScriptedBackend(),
        judge=HASHING_JUDGE,
        retriever=StubRetriever(texts=(leaked,)),
        max_rounds=1,
        output_dir=str(tmp_path),
        save_episodes=True,
    )
    env.reset(seed=0)
    env.step({"LeadArchitect": T.solo, "Researcher": T.append, "DataAnalyst": T.solo, "Reviewer": T.solo})
    raw = next(tmp_path.glob("*/trace.json")).read_text()
    assert "Admin login" in raw  # the document did reach the prompt...
    for secret in ("hunter2xyz", "AKIA-7788-XYZ9", "ab12cd34ef99"):
        assert secret not in raw  # ...its secrets did not reach the trace
    json.loads(raw)


@pytest.mark.slow
def test_building_a_gnn_learner_leaves_no_generated_code_in_the_temp_folder(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    code = (
        "import algos, inspect, sys\n"
        "spec = algos.EnvSpec(agents=['a', 'b'], obs_dim=3, n_actions=4, state_dim=2)\n"
        "for layer in ('graphconv', 'sage', 'gatv2'):\n"
        "    algos.build('qmix', spec, {'gnn_layer': layer})\n"
        "mods = [m for n, m in sys.modules.items() if n.endswith('_propagate')]\n"
        # sage and gatv2 generate a propagate module each; graphconv runs as the dense layer (none)
        "assert len(mods) == 2 and all('def propagate' in inspect.getsource(m) for m in mods), mods\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)},
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert [p.name for p in tmp.iterdir() if "propagate" in p.name] == []
