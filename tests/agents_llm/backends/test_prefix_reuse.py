"""Which kept prompt state serves a prompt, and how much of it: no model, llama.cpp's state
calls stood in for by a recorder (the real thing: test_prefix_reuse_real.py, slow)."""

from collections import OrderedDict

import numpy as np
import pytest

pytest.importorskip("llama_cpp")

from agents_llm.backends.llama_prefix import PrefixReusingLlama, PromptStats, common_prefix  # noqa: E402

CHUNK = 4


class StateRecorder(PrefixReusingLlama):
    """The reuse bookkeeping of PrefixReusingLlama over a context that only records which
    tokens it holds: a state is the token list it was saved with."""

    def __init__(self, keep: int = 8):  # no model: the parent's __init__ is not run
        self.n_batch, self.reuse, self.keep = CHUNK, True, keep
        self.last = PromptStats()
        self._saved = OrderedDict()
        self._next_id = 0
        self._live = np.zeros(0, dtype=np.int32)
        self._prompt = None
        self.input_ids = np.zeros(256, dtype=np.intc)
        self.n_tokens = 0
        self.held: list[int] = []  # the tokens whose KV the "context" holds
        self.loads: list[list[int]] = []

    def close(self):  # nothing to free: no model was loaded
        pass

    def _load_state(self, state):
        self.held = list(state)
        self.loads.append(list(state))

    def _save_state(self):
        return list(self.held)

    def _truncate(self, n):
        self.held = self.held[:n]

    def call(self, prompt: list[int], generated: int = 3) -> PromptStats:
        """What create_chat_completion does around generate: prepare, evaluate the suffix, decode, remember."""
        self._prompt = np.asarray(prompt, dtype=np.int32)
        self._prepare(prompt)
        self._live = self._prompt[: self.n_tokens]
        kept = self.held[: self.n_tokens]
        assert kept == prompt[: self.n_tokens], "a reused prefix must be the prompt's own tokens"
        self.held = prompt + [9000 + i for i in range(generated)]  # prompt evaluated, then answer decoded
        self.input_ids[: len(self.held)] = self.held
        self.n_tokens = len(self.held)
        stats = self.last
        self.remember()
        return stats


def role_prompt(role: int, body: list[int]) -> list[int]:
    return [1, 100 + role] * 6 + body  # a 12-token role prefix, then the round's material


def test_common_prefix():
    a = np.array([1, 2, 3, 4])
    assert common_prefix(a, np.array([1, 2, 9])) == 2
    assert common_prefix(a, np.array([1, 2])) == 2
    assert common_prefix(a, np.array([], dtype=int)) == 0
    assert common_prefix(a, a.copy()) == 4


def test_only_whole_aligned_batches_of_the_shared_prefix_are_reused():
    llm = StateRecorder()
    first = list(range(10, 33))  # 23 tokens
    assert llm.call(first).reused == 0
    # shares 13 tokens: 12 of them (three whole batches of 4) are reused
    second = first[:13] + [77] * 10
    stats = llm.call(second)
    assert (stats.sent, stats.reused, stats.evaluated) == (23, 12, 11)
    # the same prompt again: its last token is evaluated anew (its logits give the first sample)
    again = llm.call(second)
    assert again.reused == 20 and again.evaluated == 3


def test_each_role_is_served_by_its_own_earlier_prompt_not_the_last_call():
    llm = StateRecorder()
    for role in range(4):
        llm.call(role_prompt(role, [50 + role] * 8))
    # role 1's next prompt shares its 12-token prefix with role 1's state only
    stats = llm.call(role_prompt(1, [60] * 8))
    assert stats.restored and stats.reused == 12
    assert llm.loads[-1][:12] == role_prompt(1, [])


def test_a_changed_report_is_evaluated_from_the_first_changed_token():
    llm = StateRecorder()
    report_a = [300 + i for i in range(16)]
    report_b = report_a[:5] + [400 + i for i in range(11)]  # the report changed at its 6th token
    llm.call(role_prompt(2, report_a + [7, 7, 7]))
    llm.call(role_prompt(3, [8] * 20))  # another role in between
    stats = llm.call(role_prompt(2, report_b + [7, 7, 7]))
    # 12 role tokens + 5 shared report tokens = 17 shared: 16 (four batches) reused, nothing past the change
    assert stats.reused == 16 and stats.reused <= 12 + 5


def test_reuse_off_evaluates_every_prompt_in_full_and_keeps_nothing():
    llm = StateRecorder()
    llm.reuse = False
    prompt = role_prompt(0, [5] * 10)
    assert llm.call(prompt).reused == 0
    assert llm.call(prompt).reused == 0 and llm.saved_prompts() == 0


def test_the_oldest_states_go_beyond_keep_and_an_extended_prompt_supersedes_its_prefix():
    llm = StateRecorder(keep=2)
    for role in range(3):
        llm.call(role_prompt(role, [1] * 4))
    assert llm.saved_prompts() == 2
    assert llm.call(role_prompt(0, [1] * 4)).reused == 0  # role 0's state was the oldest: dropped
    llm.call(role_prompt(0, [1] * 4 + [2] * 8))  # extends role 0's last prompt
    assert llm.saved_prompts() == 2
    assert [len(s.tokens) for s in llm._saved.values()] == [16, 24]
