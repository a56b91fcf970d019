"""Token counts as the LLM team would pay them, without running a model.

The extractive team makes no LLM call, but each of its "calls" is charged the tokens of
the prompt the LLM team's agent would have been sent (built by the same prompt
builders) plus the tokens of its output. Counting uses the tokenizer of a registered
model (default SmolLM2-135M, the embedded default LLM) loaded vocabulary-only through
llama.cpp, and the ChatML framing of SmolLM2's chat template, so a count matches what
the llamacpp backend reports for the same messages up to the template's few tokens.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Sequence

_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _vocab(model: str):
    import llama_cpp

    from ..backends.models import resolve_model

    path = resolve_model(model)
    # A vocabulary-only load still builds a context, and llama.cpp then warns on stderr that
    # its n_ctx exceeds the (absent) training context: a stray line on every extractive run,
    # which loads no model. A failed load still raises, with its reason.
    from llama_cpp._utils import suppress_stdout_stderr

    with suppress_stdout_stderr(disable=False):
        return llama_cpp.Llama(str(path), vocab_only=True, verbose=False)


class TokenCounter:
    """Counts prompt and output tokens with a model's tokenizer (loaded once per process)."""

    def __init__(self, model: str = "smollm2-135m"):
        self.model = model
        try:
            self._llama = _vocab(model)
        except ImportError as e:
            raise RuntimeError(
                f"the extractive team counts tokens with {model}'s tokenizer through llama-cpp-python, "
                f"which is not installed: {e}"
            ) from e
        self._cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        """Tokens of plain text (no special tokens)."""
        if not text:
            return 0
        hit = self._cache.get(text)
        if hit is None:
            with _LOCK:  # a llama.cpp vocabulary is not documented as re-entrant
                hit = len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))
            if len(self._cache) > 100_000:
                self._cache.clear()
            self._cache[text] = hit
        return hit

    def prompt_tokens(self, messages: Sequence[dict]) -> int:
        """Tokens of a chat prompt in ChatML framing, the assistant turn's opening included."""
        total = 3  # "<|im_start|>assistant\n"
        for m in messages:
            total += 5 + self.count(str(m.get("role", ""))) + self.count(str(m.get("content", "")))
        return total

    def clip(self, text: str, max_tokens: int) -> str:
        """`text` cut to whole lines (then whole words) within `max_tokens`, as a capped
        generation would be."""
        if self.count(text) <= max_tokens:
            return text
        kept: list[str] = []
        for line in text.splitlines():
            candidate = "\n".join(kept + [line])
            if self.count(candidate) <= max_tokens:
                kept.append(line)
                continue
            if not kept:  # one long first line: keep whole words
                words_kept: list[str] = []
                for w in line.split():
                    if self.count(" ".join(words_kept + [w])) > max_tokens:
                        break
                    words_kept.append(w)
                kept.append(" ".join(words_kept))
            break
        return "\n".join(kept)
