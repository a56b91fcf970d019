"""Synthetic execution traces that follow the v1 trace schema, for demos, benchmarks and tests.

They look like what the round engine records (actions -> edges -> ordered groups ->
prompts/responses -> Collector -> report state) without running an LLM, so the viewer
can be exercised at any size: 1 round or 100, five agents, a megabyte-long response,
an episode that ended before its first round.
"""

from __future__ import annotations

import random
from graphlib import TopologicalSorter
from typing import Any

from report_protocol import COLLECTOR, ActionTable
from agents_llm.trace import SCHEMA_NAME, SCHEMA_VERSION

DEFAULT_ROLES = ("LeadArchitect", "Researcher", "DataAnalyst", "Reviewer", "Researcher")
TOPIC = "Synthetic topic"
PHASES = ("outline", "research", "analysis", "writing", "review")


def _team(n_agents: int) -> list[dict]:
    team: list[dict] = []
    seen: dict[str, int] = {}  # agents so far per role
    for i in range(n_agents):
        role = DEFAULT_ROLES[i % len(DEFAULT_ROLES)]
        seen[role] = seen.get(role, 0) + 1
        name = role if seen[role] == 1 else f"{role}_{seen[role]}"
        team.append({"name": name, "role": role, "index": i})
    return team


def _edges_for(agent: str, kind: str, target: str | None, names: list[str]) -> list[tuple[str, str]]:
    others = [n for n in names if n != agent]
    if kind == "broadcast":
        return [(agent, o) for o in others]
    if kind == "query":
        assert target is not None, "a query action names its target (ActionTable.decode)"
        return [(target, agent)]
    if kind == "aggregate":
        return [(o, agent) for o in others]
    if kind == "append":
        return [(agent, COLLECTOR)]
    return []


def make_trace(
    rounds: int = 3,
    n_agents: int = 4,
    *,
    seed: int = 0,
    response_chars: int = 400,
    long_response: tuple[int, str, int] | None = None,
    source: str = "actions",
    end_reason: str | None = None,
    revise_rounds: tuple[int, ...] = (),
) -> dict:
    """A schema-valid trace dict.

    `long_response=(round, agent, chars)` replaces one agent's response with a text of
    that many characters. `source="plan"` gives a handcrafted-pipeline trace (phase
    labels, no action indices). In `revise_rounds`, a round that reaches the Collector
    rewrites the first section instead of appending one.
    """
    rng = random.Random(seed)
    team = _team(n_agents)
    names = [m["name"] for m in team]
    table = ActionTable(n_agents)
    action_names = table.names(names)
    records: list[dict] = []
    sections: list[dict[str, Any]] = []  # the report's sections so far: id, title, chars, sources
    texts: dict[str, str] = {}  # section id -> its text
    episode_tokens = 0
    for r in range(1, rounds + 1):
        choice = {a: rng.randrange(table.size - (1 if r < 3 else 0)) for a in names}  # no early terminate
        acting = [a for a in names if table.decode(choice[a])[0] != "terminate"]
        votes = [a for a in names if a not in acting]
        edges: list[tuple[str, str]] = []
        for a in acting:
            kind, target = table.decode(choice[a])
            tname = names[target] if target is not None else None
            edges += [e for e in _edges_for(a, kind, tname, acting) if e[0] in acting or e[0] == a]
        # Fresh when the sender runs earlier (priority order); otherwise its previous output.
        timing = {
            e: ("fresh" if e[1] == COLLECTOR or names.index(e[0]) < names.index(e[1]) else "previous") for e in edges
        }
        sorter = TopologicalSorter({a: set() for a in acting})
        for (s, t), when in timing.items():
            if when == "fresh" and t != COLLECTOR:
                sorter.add(t, s)
        sorter.prepare()
        order = []
        while sorter.is_active():
            group = sorted(sorter.get_ready(), key=names.index)
            order.append(group)
            sorter.done(*group)
        agents = {}
        for a in acting:
            senders = sorted({s for s, t in edges if t == a}, key=names.index)
            text = f"[{a}, round {r}] " + " ".join(
                rng.choice(["evidence", "section", "claim", "source", "draft", "revision", "outline"])
                for _ in range(max(1, response_chars // 8))
            )
            if long_response and long_response[0] == r and long_response[1] == a:
                text = ("Long response. " * (long_response[2] // 15 + 1))[: long_response[2]]
            agents[a] = {
                "receivers": sorted({t for s, t in edges if s == a}),
                "senders": senders,
                "prompt": [
                    {"role": "system", "content": f"You are the {a} of a report-writing team."},
                    {
                        "role": "user",
                        "content": f"Round {r}: continue the report on the topic. "
                        f"Messages from: {', '.join(senders) or 'nobody'}.",
                    },
                ],
                "response": text,
                "error": None,
            }
            if a.startswith("Researcher"):
                agents[a]["retrieval"] = {
                    "queries": [f"query {r}"],
                    "chunks": [{"source": "paper.pdf", "page": r, "chunk_id": f"c{r}", "score": 0.5}],
                    "exhausted": False,
                    "error": None,
                }
        appenders = [s for s, t in edges if t == COLLECTOR]
        calls: list[dict[str, Any]] = [
            {
                "agent": a,
                "kind": "agent",
                "prompt_tokens": 120,
                "completion_tokens": 60,
                "latency_s": 0.4,
                "start_s": 0.1 * i,
                "end_s": 0.1 * i + 0.4,
                "cached": False,
                "error": None,
            }
            for i, a in enumerate(acting)
        ]
        if appenders:
            revise = r in revise_rounds and bool(sections)
            if not revise:
                sections.append(
                    {
                        "id": f"s{len(sections) + 1}",
                        "title": f"Section {len(sections) + 1}",
                        "chars": 0,
                        "sources": ["paper.pdf"],
                    }
                )
            section = sections[0] if revise else sections[-1]
            opening = f"{'Revised' if revise else 'Text of'} {section['title']}, round {r}. "
            content = (opening * ((600 + 50 * r) // len(opening) + 1))[: 600 + 50 * r].strip()
            texts[section["id"]] = content
            section["chars"] = len(content)
            collector = {
                "status": "revised" if revise else "appended",
                "reason": "",
                "section_id": section["id"],
                "title": section["title"],
                "removed_sentences": 0,
                "content": content,
            }
            calls.append(
                {
                    "agent": COLLECTOR,
                    "kind": "collector",
                    "prompt_tokens": 300,
                    "completion_tokens": 150,
                    "latency_s": 0.8,
                    "start_s": 1.0,
                    "end_s": 1.8,
                    "cached": False,
                    "error": None,
                }
            )
        else:
            collector = {
                "status": "idle",
                "reason": "nothing reached the Collector",
                "section_id": None,
                "title": None,
                "removed_sentences": 0,
                "content": None,
            }
        round_tokens = sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls)
        episode_tokens += round_tokens
        chars = sum(s["chars"] for s in sections)
        records.append(
            {
                "round": r,
                "source": source,
                "phase": PHASES[min(len(PHASES) - 1, (r - 1) * len(PHASES) // max(rounds, 1))]
                if source == "plan"
                else None,
                "actions": {
                    a: {
                        "action": None if source == "plan" else choice[a],
                        "name": None if source == "plan" else action_names[choice[a]],
                        "effective": action_names[choice[a]] if a in acting else "terminate",
                    }
                    for a in names
                },
                "denied": [],
                "terminate_votes": votes,
                "edges": [{"sender": s, "receiver": t, "timing": timing[(s, t)]} for s, t in edges],
                "order": order,
                "agents": agents,
                "calls": calls,
                "collector": collector,
                "gate": None,
                "tokens": {"round": round_tokens, "episode": episode_tokens},
                "reward": 0.01 * len(appenders),
                "report_score": min(1.0, 0.05 * len(sections)),
                "length_score": min(1.0, chars / 25000),
                "rounds_since_append": 0 if appenders else 1,
                "scores": {},
                "report": {
                    "chars": chars,
                    "sections": [dict(s) for s in sections],
                    "progress_summary": f"After round {r}: {len(sections)} section(s).",
                },
                "timing": {"wall_s": 2.0},
            }
        )
    report_md = (
        "\n".join([f"# {TOPIC}\n"] + [f"## {s['title']}\n\n{texts[s['id']]}\n" for s in sections]) if sections else ""
    )
    return {
        "schema": SCHEMA_NAME,
        "version": SCHEMA_VERSION,
        "episode": {
            "env": "report_writing_v0",
            "episode_id": f"synthetic-{seed}",
            "seed": seed,
            "task": {"id": "t1", "topic": TOPIC, "split": "train", "corpus": "synthetic"},
            "team": team,
            "action_names": action_names,
            "config": {
                "policy": "handcrafted" if source == "plan" else "qmix",
                "llm": {"backend": "llamacpp", "model": "smollm2-135m"},  # the LLM team (the env's default)
            },
        },
        "rounds": records,
        "end": {
            "reason": end_reason or ("truncated" if rounds else "error"),
            "detail": "" if rounds else "the LLM backend failed before the first round",
            "rounds": rounds,
        },
        "report_markdown": report_md,
    }
