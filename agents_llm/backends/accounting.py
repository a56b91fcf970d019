"""Token accounting per caller and per episode, with an optional budget."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import SupportsInt, cast

from .errors import TokenBudgetExceeded


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total,
            "calls": self.calls,
        }


def _count(name: str, value: object) -> int:
    """A token count as an int; a backend handing over None, a negative or a non-number is a bug
    in that backend (it must turn a server's bad usage into an LLMResponseError first)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != value or value < 0:
        raise ValueError(f"{name} must be a non-negative number of tokens, got {value!r}")
    # int() takes every numbers.Real (through __trunc__ where there is no __int__); typeshed's Real
    # promises only an Integral-like __trunc__, which int()'s overloads do not accept.
    return int(cast(SupportsInt, value))


@dataclass
class TokenLedger:
    """Counts tokens by caller (an agent name, a judge, ...) against an optional budget.

    One ledger per episode: the env creates it at reset and passes it to every call, so
    two envs in one process never share counts. `budget=None` means unlimited; a budget
    must be positive, since a budget of zero could never allow a single call.
    """

    budget: int | None = None
    by_caller: dict[str, Usage] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.budget is not None:
            if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget <= 0:
                raise ValueError(f"token budget must be a positive integer or None for unlimited, got {self.budget!r}")

    @property
    def total(self) -> Usage:
        out = Usage()
        for u in self.by_caller.values():
            out.prompt_tokens += u.prompt_tokens
            out.completion_tokens += u.completion_tokens
            out.calls += u.calls
        return out

    @property
    def exhausted(self) -> bool:
        return self.budget is not None and self.total.total >= self.budget

    def exhaustion_reason(self, caller: str = "") -> str:
        tot = self.total.total
        top = max(self.by_caller.items(), key=lambda kv: kv[1].total, default=None)
        biggest = f"; largest user {top[0]} with {top[1].total}" if top else ""
        who = f" before a call by {caller}" if caller else ""
        return f"token budget exhausted{who}: used {tot} of {self.budget} tokens{biggest}"

    def check(self, caller: str = "") -> None:
        """Raise TokenBudgetExceeded if no further call may be made."""
        if self.exhausted:
            raise TokenBudgetExceeded(self.exhaustion_reason(caller))

    def charge(self, caller: str, prompt_tokens: int, completion_tokens: int) -> None:
        prompt, completion = _count("prompt_tokens", prompt_tokens), _count("completion_tokens", completion_tokens)
        u = self.by_caller.setdefault(caller or "unnamed", Usage())
        u.prompt_tokens += prompt
        u.completion_tokens += completion
        u.calls += 1

    def as_dict(self) -> dict:
        return {
            "budget": self.budget,
            "total": self.total.as_dict(),
            "by_caller": {k: v.as_dict() for k, v in sorted(self.by_caller.items())},
        }
