"""Prompt-prefix reuse for the in-process llama.cpp context, with the same floats as none.

An agent's prompts repeat: its role's system prompt, the topic, the outline and the
progress summary open every one of them, and each role's prompts differ from the other
roles' from the first message on. `PrefixReusingLlama` keeps the model's state (the KV
cache) of recent prompts, one entry per evaluated prompt, and before each call restores
the entry sharing the longest token prefix with the new prompt, so llama.cpp evaluates
only the suffix. Which entry serves a call depends on tokens alone, never on the role
asking: an entry contributes exactly the tokens it shares with the prompt, so a prompt
whose report or messages changed is evaluated from the first changed token on.

Bit-identical with reuse off. A prompt pass splits its tokens into batches, and the
floats of a token's activations depend on the batch it was computed in (llama.cpp's CPU
kernels take different paths for different batch shapes), so reusing an arbitrary
prefix would make greedy output depend on which call came before. Here every prompt is
evaluated in batches of `chunk` tokens aligned to absolute positions (0..chunk-1,
chunk..2*chunk-1, ...), reuse or not, and only whole aligned batches of an earlier
*prompt* are reused (never tokens decoded one at a time during generation): each batch
is then computed from the same tokens over the same cached keys and values in both
cases, and the KV cells land in the same places (the cache is truncated right after the
reused prefix). tests/agents_llm/backends/test_prefix_reuse_real.py checks texts, logits
and whole episodes with reuse on and off.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Sequence

import llama_cpp
import numpy as np


@dataclass
class SavedPrompt:
    """One evaluated prompt: its tokens and the context state right after them."""

    tokens: np.ndarray  # int32, the prompt's tokens (generated ones are not kept)
    state: Any  # ctypes byte array from llama_state_get_data

    @property
    def nbytes(self) -> int:
        return len(self.state)


@dataclass
class PromptStats:
    """What the last prompt cost: tokens sent, reused from a kept state, evaluated."""

    sent: int = 0
    reused: int = 0
    restored: bool = False  # a saved state was loaded into the context for it

    @property
    def evaluated(self) -> int:
        return self.sent - self.reused


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    """How many leading tokens `a` and `b` share."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n


class PrefixReusingLlama(llama_cpp.Llama):
    """A `llama_cpp.Llama` whose prompt passes run in aligned batches of `n_batch` tokens and
    reuse the longest aligned prefix among the live context and up to `keep` saved prompts.

    `reuse` and `keep` are set per call by the backend that holds the lock (they are the
    backend's settings, not the shared instance's); `last` says what the last prompt cost.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.reuse = True
        self.keep = 8
        self.last = PromptStats()
        self._saved: OrderedDict[int, SavedPrompt] = OrderedDict()  # least recently used first
        self._next_id = 0
        self._live: np.ndarray = np.zeros(0, dtype=np.int32)  # prompt tokens whose KV the context holds
        self._prompt: np.ndarray | None = None  # the prompt of the call in progress

    @property
    def chunk(self) -> int:
        return int(self.n_batch)

    def saved_prompts(self) -> int:
        return len(self._saved)

    def saved_bytes(self) -> int:
        return sum(s.nbytes for s in self._saved.values())

    def forget(self) -> None:
        """Drop every kept state and the live prefix (the next prompt is evaluated in full)."""
        self._saved.clear()
        self._live = np.zeros(0, dtype=np.int32)
        self.n_tokens = 0

    def _aligned(self, shared: int, n_prompt: int) -> int:
        """The reusable part of `shared` leading tokens: whole batches, and at least the last
        prompt token evaluated (its logits are the first sample's)."""
        usable = min(shared, n_prompt - 1)
        return max(0, usable // self.chunk * self.chunk)

    def _prepare(self, tokens: Sequence[int]) -> None:
        """Put the context in the state that serves `tokens` best and truncate it to the aligned prefix."""
        prompt = np.asarray(tokens, dtype=np.int32)
        stats = PromptStats(sent=len(prompt))
        if not self.reuse:
            self.n_tokens = 0
            self._live = np.zeros(0, dtype=np.int32)
            self.last = stats
            return
        best_live = self._aligned(common_prefix(self._live, prompt), len(prompt))
        best_id, best_saved = None, 0
        for key, saved in self._saved.items():
            n = self._aligned(common_prefix(saved.tokens, prompt), len(prompt))
            if n > best_saved:
                best_id, best_saved = key, n
        if best_id is not None and best_saved > best_live:
            saved = self._saved.pop(best_id)
            self._saved[best_id] = saved  # most recently used
            self._restore(saved)
            stats.restored = True
            best_live = best_saved
        stats.reused = best_live
        self.n_tokens = best_live  # the parent's prefix match then keeps exactly these tokens
        self.last = stats

    # -- the three places that touch llama.cpp's state ---------------------------------
    def _load_state(self, state: Any) -> None:
        if llama_cpp.llama_state_set_data(self._ctx.ctx, state, len(state)) != len(state):
            raise RuntimeError("llama.cpp refused a saved prompt state")

    def _save_state(self) -> Any:
        size = llama_cpp.llama_state_get_size(self._ctx.ctx)
        buf = (ctypes.c_uint8 * int(size))()
        written = int(llama_cpp.llama_state_get_data(self._ctx.ctx, buf, size))
        return (ctypes.c_uint8 * written).from_buffer_copy(buf) if written < size else buf

    def _truncate(self, n: int) -> None:
        self._ctx.kv_cache_seq_rm(-1, n, -1)

    # ----------------------------------------------------------------------------------
    def _restore(self, saved: SavedPrompt) -> None:
        self._load_state(saved.state)
        n = len(saved.tokens)
        self.input_ids[:n] = saved.tokens
        self._live = saved.tokens
        self.n_tokens = n
        self._requires_eval = True

    def remember(self) -> None:
        """Keep the context's state for the prompt just answered (its generated tokens dropped)."""
        prompt = self._prompt
        if not self.reuse or self.keep < 1 or prompt is None:
            return
        n = len(prompt)
        if n == 0 or n > self.n_tokens or not np.array_equal(self.input_ids[:n], prompt):
            return  # the context does not hold this prompt (e.g. the call failed part-way)
        self._truncate(n)
        self.n_tokens = n
        self._live = prompt.copy()
        # An entry whose tokens this prompt extends is superseded by it.
        for key in [k for k, s in self._saved.items() if common_prefix(s.tokens, prompt) == len(s.tokens)]:
            del self._saved[key]
        self._saved[self._next_id] = SavedPrompt(self._live, self._save_state())
        self._next_id += 1
        while len(self._saved) > self.keep:
            self._saved.popitem(last=False)

    def generate(self, tokens: Sequence[int], *args: Any, **kwargs: Any):
        self._prompt = np.asarray(tokens, dtype=np.int32)
        self._prepare(tokens)
        # From here the context is rewritten past the reused prefix: until `remember` confirms the
        # whole prompt, only that prefix is known to be valid (a failed call leaves no stale claim).
        self._live = np.asarray(tokens[: self.n_tokens], dtype=np.int32)
        return super().generate(tokens, *args, **kwargs)
