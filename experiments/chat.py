"""Send one prompt through whichever LLM backend the config picks.

python experiments/chat.py prompt="Summarise QMIX in one sentence."
python experiments/chat.py llm=openai llm.base_url=http://127.0.0.1:8000/v1 llm.model=my-model
python experiments/chat.py 'json_schema={type:object,properties:{ok:{type:boolean}},required:[ok]}'
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Any, Optional

import hydra
from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf

from agents_llm.backends import LLMConfigError, LLMError, make_backend
from agents_llm.backends.config import register_configs


@dataclass
class ChatConfig:
    llm: Any = MISSING
    prompt: str = MISSING
    system: str = ""
    # A JSON Schema in Hydra's dict syntax; the answer is constrained to it and printed parsed.
    json_schema: Optional[Any] = None


register_configs()
ConfigStore.instance().store(name="base_chat", node=ChatConfig)


async def _chat(cfg: DictConfig) -> int:
    try:
        backend = make_backend(cfg.llm)
    except LLMConfigError as e:  # a setting the backend refuses before any call (range, URL, model)
        print(f"chat.py: {e}", file=sys.stderr)
        return 2
    messages = ([{"role": "system", "content": cfg.system}] if cfg.system else []) + [
        {"role": "user", "content": cfg.prompt}
    ]
    schema = OmegaConf.to_container(cfg.json_schema) if cfg.json_schema is not None else None
    try:
        resp = await backend.chat(
            messages,
            schema=schema,
            max_tokens=cfg.llm.max_tokens,
            temperature=cfg.llm.temperature,
            seed=cfg.llm.seed,
            caller="chat",
        )
    except LLMError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        await backend.aclose()
    print(resp.text)
    print(
        f"\n[{resp.backend}:{resp.model}] prompt={resp.prompt_tokens} completion={resp.completion_tokens} "
        f"tokens, {resp.latency_s:.2f} s{' (cached)' if resp.cached else ''}",
        file=sys.stderr,
    )
    return 0


@hydra.main(version_base="1.3", config_path="../conf", config_name="chat")
def main(cfg: DictConfig) -> None:
    code = asyncio.run(_chat(cfg))
    if code:
        sys.exit(code)


if __name__ == "__main__":
    main()
