"""Episodes in flight against OpenAI-compatible servers: the stand-in batching server
(agents_llm/backends/batching_standin.py: fixed latency up to its slots, then queueing), the server
presets, and a server that refuses connections."""

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

import algos
from agents_llm.backends import make_backend
from agents_llm.backends.openai_compat import OpenAIBackend
from algos.training.vector_rollout import VectorRollout
from agents_llm.backends.batching_standin import BatchingServer, free_port
from tests.report_doubles import HASHING_JUDGE, HASHING_RAG

ROOT = Path(__file__).resolve().parents[3]


def test_stand_in_decodes_up_to_its_slots_then_queues():
    with BatchingServer(latency_s=0.3, slots=4) as server:
        backend = OpenAIBackend("stand-in", base_url=server.url)

        async def eight():
            return await asyncio.gather(
                *(backend.chat([{"role": "user", "content": f"q{i}"}], max_tokens=8) for i in range(8))
            )

        t0 = time.perf_counter()
        replies = asyncio.run(eight())
        elapsed = time.perf_counter() - t0
        stats = server.stats()
    assert len({r.text for r in replies}) == 8 and all(r.completion_tokens > 0 for r in replies)
    assert stats["max_in_flight"] == 8 and stats["max_decoding"] == 4  # 4 decoded at once, 4 waited
    assert elapsed >= 2 * 0.3  # two batches: queueing is real


class CountingOpenAI(OpenAIBackend):
    """The real openai backend, remembering the calls that failed after its retries."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.errors: list[str] = []

    async def chat(self, *a, **kw):
        try:
            return await super().chat(*a, **kw)
        except Exception as e:
            self.errors.append(f"{type(e).__name__}: {e}")
            raise


def report_env_factory(base_url, **llm):
    backend = CountingOpenAI("stand-in", base_url=base_url, **llm)  # one client per run, on the run's loop

    def make():
        from envs.report.writing import ReportWritingEnv

        return ReportWritingEnv(
            llm={"backend": "openai"},
            rag=HASHING_RAG,
            judge=HASHING_JUDGE,
            max_rounds=3,
            min_rounds_before_terminate=1,
            backend=backend,
        )

    return make, backend


@pytest.mark.slow
def test_report_env_against_the_stand_in_is_the_same_for_one_and_four_envs():
    with BatchingServer(latency_s=0.05, slots=64) as server:
        runs = []
        for n in (1, 4):
            make, backend = report_env_factory(server.url)
            spec = algos.EnvSpec.from_env(make())
            algo = algos.build("qmix", spec, {"hidden_dim": 16}, seed=0)
            with VectorRollout(make, algo, spec, num_envs=n) as runner:
                runs.append(runner.run_episodes([(i, i) for i in range(4)], explore=True))
                runner.loop.run(backend.aclose())
            assert not backend.errors, backend.errors[:3]
            if n == 4:
                assert backend.max_in_flight > 4  # several episodes' calls were at the server together
    assert not runs[0].failures and not runs[1].failures
    for a, b in zip(runs[0].results, runs[1].results):
        np.testing.assert_array_equal(a.episode.actions, b.episode.actions)
        np.testing.assert_array_equal(a.episode.obs, b.episode.obs)
        assert len(a.episode) == 3 or a.episode.terminated  # rounds 2 and 3 ran: the client outlived round 1


@pytest.mark.slow
def test_server_that_slows_then_refuses_connections(caplog):
    with BatchingServer(latency_s=0.05, slots=8) as server:
        make, backend = report_env_factory(server.url)
        backend.retry.backoff_s = 0.05
        spec = algos.EnvSpec.from_env(make())
        policy = algos.build("preset", spec, {"topology": "chain"})
        with VectorRollout(make, policy, spec, num_envs=2) as runner:
            server.control(latency_s=0.3)  # slower, within the call timeout: nothing is lost
            slow = runner.run_episodes([(0, 0), (1, 1)], explore=False)
            server.stop()  # now it refuses connections: the backend retries, then the episodes are dropped
            down = runner.run_episodes([(2, 2), (3, 3)], explore=False)
            server.start()
            back = runner.run_episodes([(4, 4)], explore=False)
    assert len(slow.results) == 2 and not slow.failures
    assert not down.results and [f.index for f in down.failures] == [2, 3]
    assert all(
        "all LLM calls failed" in f.reason and "cannot reach the server" in f.reason and server.url in f.reason
        for f in down.failures
    ), down.failures
    assert "episode 2 (seed 2) dropped" in caplog.text
    assert len(back.results) == 1  # the same runner and client go on once the server is back


@pytest.mark.slow
def test_training_against_a_dead_server_stops_with_a_checkpoint_and_the_endpoint(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    out = tmp_path / "run"
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "experiments" / "train.py"),
            "llm=llamacpp_server",
            f"llm.base_url={url}",
            "llm.retry.backoff_s=0.05",
            "rag=hashing",
            "judge.embedding=hashing",
            "algo=random",
            "train.episodes=4",
            "rollout.num_envs=2",
            "logger=csv",
            "logger.progress=quiet",
            f"hydra.run.dir={out}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode != 0
    assert "every episode of 0..1 failed" in proc.stderr and url in proc.stderr, proc.stderr[-3000:]
    assert (out / "checkpoints" / "last.pt").exists() and "Resume with" in proc.stderr


@pytest.mark.parametrize(
    "preset, mode, slots",
    [("vllm", "json_schema", 64), ("sglang", "json_schema", 64), ("llamacpp_server", "json_object_schema", 8)],
)
def test_server_presets_build_the_openai_backend_with_their_slots(preset, mode, slots):
    from hydra import compose, initialize_config_dir

    from experiments.run_config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"llm={preset}"])
    backend = make_backend(OmegaConf.to_container(cfg.llm, resolve=True))
    assert isinstance(backend, OpenAIBackend) and backend.json_mode.value == mode
    assert backend.server_slots == slots and backend.max_concurrent_requests == slots
    assert backend.base_url.startswith("http://127.0.0.1:")
