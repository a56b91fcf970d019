"""The shared Llama instances are freed at exit while the interpreter is whole, and one still in
use by another thread is left alone rather than freed under it."""

import threading

from agents_llm.backends import llamacpp


class FakeLlama:
    def __init__(self):
        self.closed = 0

    def close(self):
        self.closed += 1


def test_every_shared_instance_is_closed_and_forgotten(monkeypatch):
    a, b = FakeLlama(), FakeLlama()
    monkeypatch.setattr(llamacpp, "_INSTANCES", {("a",): (a, threading.Lock()), ("b",): (b, threading.Lock())})
    llamacpp.close_shared_llamas()
    assert (a.closed, b.closed) == (1, 1)
    assert llamacpp._INSTANCES == {}, "a later shared_llama call loads afresh instead of reusing a freed model"


def test_an_instance_whose_lock_is_held_is_not_freed_under_its_user(monkeypatch):
    busy, idle = FakeLlama(), FakeLlama()
    held = threading.Lock()
    held.acquire()
    monkeypatch.setattr(llamacpp, "_INSTANCES", {("busy",): (busy, held), ("idle",): (idle, threading.Lock())})
    monkeypatch.setattr(llamacpp, "CLOSE_WAIT_S", 0.05)
    llamacpp.close_shared_llamas()
    assert busy.closed == 0 and idle.closed == 1
    held.release()
