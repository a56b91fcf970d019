"""The LLM judge: the original report writer's Macro judge (whole report) and Micro
judge (per chunk), behind the common `score(report)` interface.

Cost model: one Macro call per scoring of a changed report, and one Micro call per chunk
never judged before. Micro judgments are cached by the chunk's content (with its
section title, the topic and the section's cited sources), so after an append only the
new chunks cost a call. A chunk is judged with the context of its first judgment
(Macro notes, progress summary, previous chunk's notes) and keeps that judgment while
its content is unchanged: that is what makes the reward of an append depend on the
appended text rather than on re-rolled opinions of old text.

Fallbacks are flagged. A judgment whose call failed (after the backend's retries and the
judge's repair requests) is left out and the scoring is flagged with the reason; so is
a judgment the backend could only produce by a fallback (`LLMResponse.fallback`, e.g.
the llamacpp backend's grammar-free generation after grammar-constrained decoding
failed: its JSON was parsed and validated against the same schema, but it was not
decoded the way the judge asked). The result then has `flagged=True`, the reasons in
`reason`, the fallbacks in `details["fallbacks"]`, and the referee's `judge_fallback`
flag fires; with `judge.hold_score_on_flag` the reward keeps the previous score.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Mapping

from ..backends import (
    LLMBackend,
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMOutputError,
    LLMServerError,
    LLMTimeoutError,
    TokenBudgetExceeded,
    TokenLedger,
)
from rag.guard import guard_untrusted_text

from ..report_state import ReportState, Section
from . import prompts
from .base import JudgeResult, clamp01
from ..text.split import Chunk, chunk_text, content_hash


@dataclass(frozen=True)
class MacroJudgment:
    scores: Mapping[str, int]
    notes: str

    @property
    def value(self) -> float:
        return sum(self.scores.values()) / (5.0 * len(self.scores))


@dataclass(frozen=True)
class MicroJudgment:
    scores: Mapping[str, int]
    hallucination: bool
    notes: str


class _JudgeCallFailed(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class LLMJudge:
    kind = "llm"

    def __init__(
        self,
        backend: LLMBackend,
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = 0,
        macro_weight: float = 0.5,
        hallucination_penalty: float = 0.5,
        judge_retries: int = 1,
        macro_max_chars: int = 8000,
        sources_max_chars: int = 2000,
        chunk_unit: str = "chars",
        chunk_size: int = 1500,
        cache_size: int = 4096,
        fallback_score: float = 0.0,
    ):
        if backend is None:
            raise ValueError("the llm judge needs an LLM backend: make_judge(cfg, backend=make_backend(cfg.llm))")
        if not 0.0 <= macro_weight <= 1.0:
            raise ValueError(f"macro_weight must be in [0, 1], got {macro_weight}")
        if not 0.0 <= hallucination_penalty <= 1.0:
            raise ValueError(f"hallucination_penalty must be in [0, 1], got {hallucination_penalty}")
        if judge_retries < 0:
            raise ValueError(f"judge_retries must be >= 0, got {judge_retries}")
        chunk_text("", chunk_unit, chunk_size)  # validates unit and size now, not at the first append
        self.backend = backend
        self.max_tokens, self.temperature, self.seed = max_tokens, temperature, seed
        self.macro_weight, self.hallucination_penalty = macro_weight, hallucination_penalty
        self.judge_retries = judge_retries
        self.macro_max_chars, self.sources_max_chars = macro_max_chars, sources_max_chars
        self.chunk_unit, self.chunk_size = chunk_unit, chunk_size
        self.cache_size = cache_size
        self.fallback_score = clamp01(fallback_score)
        self._micro_cache: OrderedDict[str, MicroJudgment] = OrderedDict()
        self._macro_cache: OrderedDict[str, MacroJudgment] = OrderedDict()
        # Requests sent to the backend over this judge's life (a backend-internal retry
        # of one request is not counted again; a judge-level repair request is).
        self.macro_calls = 0
        self.micro_calls = 0

    # -- chunking ------------------------------------------------------------------
    def chunks(self, report: ReportState) -> list[Chunk]:
        return [
            Chunk(s.id, s.title, i, text)
            for s in report.sections
            for i, text in enumerate(chunk_text(s.content, self.chunk_unit, self.chunk_size))
        ]

    # -- scoring -------------------------------------------------------------------
    async def score(self, report: ReportState, *, ledger: TokenLedger | None = None) -> JudgeResult:
        if report.is_empty or not report.chars:
            return JudgeResult(score=0.0, components={"macro": 0.0, "micro": 0.0}, reason="empty report")
        # Requests of this scoring alone: a judge shared by concurrent episodes must not
        # report the others' calls, so no difference of the shared counters.
        tally = [0]
        failures: list[str] = []
        fallbacks: list[str] = []  # judgments the backend produced by a fallback (recorded, flagged)

        macro: MacroJudgment | None = None
        try:
            macro = await self._judge_macro(report, ledger, tally, fallbacks)
        except _JudgeCallFailed as e:
            failures.append(f"macro: {e.reason}")

        sections = {s.id: s for s in report.sections}
        judged: list[tuple[Chunk, MicroJudgment]] = []
        new_chunks = 0
        previous_notes = ""
        chunks = self.chunks(report)
        for chunk in chunks:
            section = sections[chunk.section_id]
            key = self._micro_key(report, section, chunk)
            hit = self._micro_cache.get(key)
            if hit is None:
                new_chunks += 1
                before = len(fallbacks)
                try:
                    hit = await self._judge_micro(
                        report, section, chunk, macro, previous_notes, ledger, tally, fallbacks
                    )
                except _JudgeCallFailed as e:
                    failures.append(f"micro {chunk.section_id}#{chunk.index}: {e.reason}")
                    previous_notes = ""
                    continue  # not cached: the next scoring tries this chunk again
                if len(fallbacks) == before:  # a fallback judgment is not cached either
                    self._remember(self._micro_cache, key, hit)
            else:
                self._micro_cache.move_to_end(key)
            judged.append((chunk, hit))
            previous_notes = hit.notes

        components: dict[str, float] = {}
        if macro is not None:
            components["macro"] = macro.value
            components.update({f"macro/{k}": v / 5.0 for k, v in macro.scores.items()})
        if judged:
            weights = [max(len(c.text), 1) for c, _ in judged]
            total = float(sum(weights))
            chunk_values = [self._micro_value(j) for _, j in judged]
            components["micro"] = sum(w * v for w, v in zip(weights, chunk_values)) / total
            for crit in prompts.MICRO_CRITERIA:
                components[f"micro/{crit}"] = (
                    sum(w * j.scores[crit] / 5.0 for w, (_, j) in zip(weights, judged)) / total
                )
            components["hallucination_rate"] = sum(w for w, (_, j) in zip(weights, judged) if j.hallucination) / total

        if "macro" in components and "micro" in components:
            score = self.macro_weight * components["macro"] + (1.0 - self.macro_weight) * components["micro"]
        elif "macro" in components or "micro" in components:
            score = components.get("macro", components.get("micro", 0.0))
        else:
            score = self.fallback_score
        return JudgeResult(
            score=clamp01(score),
            components=components,
            flagged=bool(failures or fallbacks),
            reason="; ".join(failures + [f"fallback {f}" for f in fallbacks]),
            calls=tally[0],
            details={
                "chunks": len(chunks),
                "new_chunks": new_chunks,
                "macro_notes": macro.notes if macro else "",
                "chunk_notes": {f"{c.section_id}#{c.index}": j.notes for c, j in judged},
                "fallbacks": fallbacks,
            },
        )

    def _micro_value(self, j: MicroJudgment) -> float:
        base = sum(j.scores.values()) / (5.0 * len(j.scores))
        return base * (1.0 - self.hallucination_penalty) if j.hallucination else base

    # -- the two judges --------------------------------------------------------------
    async def _judge_macro(
        self, report: ReportState, ledger: TokenLedger | None, tally: list[int], fallbacks: list[str]
    ) -> MacroJudgment:
        body = report.to_markdown(with_references=False)
        key = content_hash("macro", report.topic, body)
        hit = self._macro_cache.get(key)
        if hit is not None:
            return hit
        outline = "\n".join(f"{i}. {s.title}" for i, s in enumerate(report.sections, 1))
        user = prompts.MACRO_USER.format(
            topic=report.topic, outline=outline, report=_truncate_middle(body, self.macro_max_chars)
        )
        parsed, fallback = await self._ask(
            "MacroJudge", prompts.MACRO_SYSTEM, user, prompts.MACRO_SCHEMA, ledger, tally
        )
        judgment = MacroJudgment({c: int(parsed[c]) for c in prompts.MACRO_CRITERIA}, str(parsed["assessment"]).strip())
        if fallback:
            fallbacks.append(f"macro: {fallback}")
        else:  # a fallback judgment is not cached: the next scoring asks again
            self._remember(self._macro_cache, key, judgment)
        return judgment

    async def _judge_micro(
        self,
        report: ReportState,
        section: Section,
        chunk: Chunk,
        macro: MacroJudgment | None,
        previous_notes: str,
        ledger: TokenLedger | None,
        tally: list[int],
        fallbacks: list[str],
    ) -> MicroJudgment:
        n_parts = len(chunk_text(section.content, self.chunk_unit, self.chunk_size))
        user = prompts.MICRO_USER.format(
            topic=report.topic,
            macro_notes=(macro.notes if macro else "") or "(none)",
            summary=report.progress_summary.strip() or "(none yet)",
            previous_notes=previous_notes or "(this is the first chunk judged in this pass)",
            sources=self._sources_text(section) or "(no sources cited)",
            section_title=section.title.replace('"', "'"),
            part=f"{chunk.index + 1}/{n_parts}",
            chunk=chunk.text,
        )
        parsed, fallback = await self._ask(
            "MicroJudge", prompts.MICRO_SYSTEM, user, prompts.MICRO_SCHEMA, ledger, tally
        )
        if fallback:
            fallbacks.append(f"micro {chunk.section_id}#{chunk.index}: {fallback}")
        return MicroJudgment(
            {c: int(parsed[c]) for c in prompts.MICRO_CRITERIA},
            bool(parsed["hallucination"]),
            str(parsed["assessment"]).strip(),
        )

    async def _ask(
        self, caller: str, system: str, user: str, schema: dict, ledger: TokenLedger | None, tally: list[int]
    ) -> tuple[Any, str]:
        """One judgment: the schema call, repair requests on malformed output, then give up.

        Returns the parsed answer and the backend's fallback note ("" when none).

        Raises _JudgeCallFailed (the judge flags and falls back) for every LLM failure
        except TokenBudgetExceeded, which ends the episode and so must reach the env.
        """
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        last_error = ""
        for attempt in range(self.judge_retries + 1):
            tally[0] += 1
            if caller == "MacroJudge":
                self.macro_calls += 1
            else:
                self.micro_calls += 1
            seed = None if self.seed is None else self.seed + attempt  # a greedy model needs a changed prompt or seed
            try:
                resp = await self.backend.chat(
                    messages,
                    schema=schema,
                    max_tokens=self.max_tokens,
                    temperature=self.temperature,
                    seed=seed,
                    caller=caller,
                    ledger=ledger,
                )
            except TokenBudgetExceeded:
                raise
            except LLMOutputError as e:
                last_error = str(e)
                messages = messages[:2] + [
                    {
                        "role": "user",
                        "content": prompts.REPAIR_NOTE.format(
                            error=_short(last_error), keys=", ".join(schema["required"])
                        ),
                    }
                ]
                continue
            except (LLMTimeoutError, LLMConnectionError, LLMServerError, LLMConfigError) as e:
                raise _JudgeCallFailed(f"{type(e).__name__}: {_short(str(e))}") from e
            except LLMError as e:
                raise _JudgeCallFailed(f"{type(e).__name__}: {_short(str(e))}") from e
            return resp.parsed, resp.fallback
        raise _JudgeCallFailed(f"LLMOutputError after {self.judge_retries + 1} judge requests: {_short(last_error)}")

    # -- helpers ---------------------------------------------------------------------
    def _micro_key(self, report: ReportState, section: Section, chunk: Chunk) -> str:
        evidence = "\x01".join(sorted(f"{s.source}|{s.page}|{s.chunk_id}|{s.text}" for s in section.sources))
        return content_hash("micro", report.topic, section.title, chunk.text, evidence)

    def _sources_text(self, section: Section) -> str:
        parts, used = [], 0
        for i, src in enumerate(section.sources, 1):
            entry = f"[{i}] {src.label()}: {src.text.strip()}" if src.text.strip() else f"[{i}] {src.label()}"
            # File names and chunk text come from documents: neutralise injections before the judge reads them.
            entry = guard_untrusted_text(entry, max_chars=None).text
            if used + len(entry) > self.sources_max_chars:
                parts.append(entry[: max(self.sources_max_chars - used, 0)] + " [...]")
                break
            parts.append(entry)
            used += len(entry) + 1
        return "\n".join(parts)

    def _remember(self, cache: OrderedDict, key: str, value: Any) -> None:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > self.cache_size:
            cache.popitem(last=False)

    def clear_cache(self) -> None:
        self._micro_cache.clear()
        self._macro_cache.clear()


def _truncate_middle(text: str, limit: int) -> str:
    """Keep the start and end of a report too long for the judge's context window."""
    if len(text) <= limit:
        return text
    head = (2 * limit) // 3
    tail = limit - head
    return f"{text[:head]}\n\n[... {len(text) - limit} characters omitted ...]\n\n{text[-tail:]}"


def _short(message: str, limit: int = 240) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 3] + "..."
