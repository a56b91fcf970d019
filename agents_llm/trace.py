"""The execution trace: one JSON document per episode, round by round.

Schema `qmix-report-gym/trace`, version 1 (`TRACE_SCHEMA` is its JSON Schema; a trace
viewer animates it round by round). Top level:

    schema, version        "qmix-report-gym/trace", 1
    episode                env, episode_id, seed, task {id, topic, split, corpus},
                           team [{name, role, index}], action_names [str], config {...}
                           (config.llm and, for the extractive team, config.extractive
                           {version}: the viewer names the team by them, as run names do)
    rounds [               one entry per executed round, in order
      round                1-based round number
      source               "actions" (a joint action from a policy) or "plan" (a RoundPlan)
      phase                phase label or null
      actions {agent: {action, name, effective}}     chosen and effective action names
      denied [{agent, action, action_name, reason, fallback}]   masked or dropped choices
      terminate_votes [agent]
      edges [{sender, receiver, timing}]  timing: "fresh" (this round) or "previous"
                                          (previous-round output; mutual pair or idle sender);
                                          receiver "Collector" = append
      order [[agent]]      groups of agents in the order they were started; agents
                           in one group ran concurrently
      agents {agent: {receivers, senders, prompt, response, error, retrieval, output}}
                           prompt: chat messages of the agent's main call;
                           output (only when it differs from response): what its
                           receivers got instead, e.g. the evidence for an overruled
                           [RESEARCH_EXHAUSTED];
                           retrieval (Researcher): {queries, chunks [{source, page,
                           chunk_id, score}], exhausted, error, generated (the model's
                           queries), rejected [{query, reason}], fallback (topic terms used),
                           new_chunks (chunks holding a fact the report lacks), retried (the
                           second search's queries, when the first found nothing new for
                           the section), exhaustion_overruled (its [RESEARCH_EXHAUSTED] was
                           not believed: report_protocol.feedback.exhaustion_believed)};
                           the extractive team (no model): prompt is [], inputs holds what
                           the role's rules worked from {rules, topic, objective, inbox
                           [{sender, text}], memory, section_titles, progress_summary,
                           directive, focus, key_terms (Reviewer), retrieved [{source,
                           page, text}] (Researcher)}, and charged_prompt the LLM prompt
                           whose tokens its call was charged (never sent); chat
                           (engine.conversation on) {turn: the turn's number in the agent's
                           chat, restarted: the chat began again from the stand-alone prompt},
                           and prompt is then the whole chat
      calls [{agent, kind, prompt_tokens, completion_tokens, latency_s, start_s, end_s,
              cached, error}]   every LLM call; kind: agent|query|collector|summarizer|gate
      collector {status, reason, section_id, title, removed_sentences, content}
                           status: appended|revised|skipped|failed|idle; content: the text
                           the round wrote into section_id (after the report filter), null
                           when it wrote nothing. Replaying the rounds' contents in order,
                           a revision replacing its section's text, rebuilds the report as
                           it stood after any round (`replay_report`); absent in older traces.
                           Extractive team: inputs {contributions [{sender, text}], objective,
                           revise_section} and draft (its section before the report filter)
      gate {agent, question, passed, response} or null
      tokens {round, episode}            tokens spent in the round / so far
      reward, report_score, length_score, rounds_since_append, scores {...}
      referee [{kind, target, reason, evidence, on_report, penalised}]   agents_llm.referee flags
      report {chars, sections [{id, title, chars, sources}], progress_summary,
              changed_section {id, title, sources} or null}   an outline, no text
      timing {wall_s}
    ]
    end                    {reason, detail, rounds}; reason: terminated|truncated|
                           budget_exhausted|llm_error|error|running (llm_error: the
                           LLM calls failed; detail names the cause)
    report_markdown        the final report
    report_state           the final report's state (`ReportState.to_dict`: sections with the
                           source chunks they cite), so another judge can score the report exactly
                           as the env's judge read it (absent in traces written before it was kept)

Secrets never reach disk: the whole document passes through `agents_llm.redaction.redact`
(secret-named keys, URL credentials, header echoes, bearer tokens, `sk-...` keys,
`password: ...`/`credential ...` phrases, values of secret-named environment variables).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .redaction import REDACTED, redact, redact_text  # noqa: F401  (the one redaction; re-exported)

SCHEMA_NAME = "qmix-report-gym/trace"
SCHEMA_VERSION = 1


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


class ExecutionTrace:
    """Collects one episode's rounds; `to_dict` / `save` give the redacted JSON."""

    def __init__(self, episode: dict):
        self.episode = dict(episode)
        self.rounds: list[dict] = []
        self.end: dict = {"reason": "running", "detail": "", "rounds": 0}
        self.report_markdown = ""
        self.report_state: dict | None = None

    def add_round(self, record: dict) -> None:
        self.rounds.append(record)
        self.end["rounds"] = len(self.rounds)

    def finish(
        self, reason: str, detail: str = "", report_markdown: str = "", report_state: dict | None = None
    ) -> None:
        self.end = {"reason": reason, "detail": detail, "rounds": len(self.rounds)}
        self.report_markdown = report_markdown
        self.report_state = report_state

    def to_dict(self) -> dict:
        doc = {
            "schema": SCHEMA_NAME,
            "version": SCHEMA_VERSION,
            "episode": self.episode,
            "rounds": self.rounds,
            "end": self.end,
            "report_markdown": self.report_markdown,
        }
        if self.report_state is not None:
            doc["report_state"] = self.report_state
        return redact(_jsonable(doc))

    def save(self, path: str | Path) -> Path:
        """Write atomically (a crash mid-write never leaves half a trace)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.to_dict(), fh, ensure_ascii=False, indent=1)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path


def load_trace(path: str | Path) -> dict:
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("schema") != SCHEMA_NAME:
        raise ValueError(f"{path}: not a {SCHEMA_NAME} document (schema={doc.get('schema')!r})")
    if doc.get("version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: trace version {doc.get('version')} unsupported (this code reads {SCHEMA_VERSION})")
    return doc


def replay_report(rounds: list[dict]) -> list[list[dict]]:
    """The report's sections after each round, rebuilt from the rounds' `collector.content`.

    Entry i lists the sections ({id, title, content}, in report order) as they stood after
    `rounds[i]`: an appended section joins at the end, a revised one keeps its place and
    gets the new text. `content` is None where the trace did not record the text (traces
    written before the field existed).
    """
    sections: dict[str, dict] = {}
    states = []
    for rnd in rounds:
        c = rnd.get("collector") or {}
        sid = c.get("section_id")
        if sid and c.get("status") in ("appended", "revised"):
            title = c.get("title") or sections.get(sid, {}).get("title") or ""
            sections[sid] = {"id": sid, "title": title, "content": c.get("content")}
        states.append([dict(s) for s in sections.values()])
    return states


_STR = {"type": "string"}
_NUM = {"type": "number"}
_INT = {"type": "integer"}
_NULLSTR = {"type": ["string", "null"]}

TRACE_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "qmix-report-gym execution trace v1",
    "type": "object",
    "required": ["schema", "version", "episode", "rounds", "end", "report_markdown"],
    "properties": {
        "schema": {"const": SCHEMA_NAME},
        "version": {"const": SCHEMA_VERSION},
        "episode": {
            "type": "object",
            "required": ["env", "episode_id", "task", "team", "action_names"],
            "properties": {
                "team": {"type": "array", "items": {"type": "object", "required": ["name", "role", "index"]}},
                "action_names": {"type": "array", "items": _STR},
            },
        },
        "rounds": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "round",
                    "source",
                    "phase",
                    "actions",
                    "denied",
                    "terminate_votes",
                    "edges",
                    "order",
                    "agents",
                    "calls",
                    "collector",
                    "tokens",
                    "report",
                ],
                "properties": {
                    "round": _INT,
                    "source": {"enum": ["actions", "plan"]},
                    "phase": _NULLSTR,
                    "actions": {
                        "type": "object",
                        "additionalProperties": {"type": "object", "required": ["action", "name", "effective"]},
                    },
                    "denied": {
                        "type": "array",
                        "items": {"type": "object", "required": ["agent", "action_name", "reason", "fallback"]},
                    },
                    "terminate_votes": {"type": "array", "items": _STR},
                    "edges": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["sender", "receiver", "timing"],
                            "properties": {"timing": {"enum": ["fresh", "previous"]}},
                        },
                    },
                    "order": {"type": "array", "items": {"type": "array", "items": _STR}},
                    "agents": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "object",
                            "required": ["receivers", "senders", "prompt", "response", "error"],
                        },
                    },
                    "calls": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["agent", "kind", "prompt_tokens", "completion_tokens", "latency_s", "error"],
                        },
                    },
                    "collector": {
                        "type": "object",
                        "required": ["status", "reason"],
                        "properties": {
                            "status": {"enum": ["appended", "revised", "skipped", "failed", "idle"]},
                            "content": _NULLSTR,
                        },
                    },
                    "tokens": {"type": "object", "required": ["round", "episode"]},
                    "report": {"type": "object", "required": ["chars", "sections", "progress_summary"]},
                },
            },
        },
        "end": {
            "type": "object",
            "required": ["reason", "detail", "rounds"],
            "properties": {
                "reason": {"enum": ["terminated", "truncated", "budget_exhausted", "llm_error", "error", "running"]}
            },
        },
        "report_markdown": _STR,
        "report_state": {"type": "object", "required": ["topic", "sections"]},
    },
}
