"""A small labelled retrieval set: documents, queries and the documents relevant to
each. It mixes exact identifiers (which embeddings dilute: the incident reports differ
only in their part numbers), paraphrases (little word overlap), and plain topical
queries, among distractors."""

from __future__ import annotations

from typing import Dict, List, Tuple

_INCIDENT = (
    "Incident report for pump assembly {part}: the mechanical seal {event} after {hours} operating hours; "
    "the crew {action} and logged the fault for the quarterly maintenance review."
)

DOCUMENTS: Dict[str, str] = {
    "incident_qx7741b.md": _INCIDENT.format(
        part="QX-7741-B", event="leaked coolant", hours=3200, action="replaced the seal"
    ),
    "incident_qx7714b.md": _INCIDENT.format(
        part="QX-7714-B", event="overheated", hours=2900, action="cleaned the cooling jacket"
    ),
    "incident_qx7741d.md": _INCIDENT.format(
        part="QX-7741-D", event="cracked", hours=4100, action="ordered a new seal kit"
    ),
    "incident_qx4177b.md": _INCIDENT.format(
        part="QX-4177-B", event="wore unevenly", hours=3600, action="realigned the shaft"
    ),
    "incident_rk7741b.md": _INCIDENT.format(part="RK-7741-B", event="seized", hours=1500, action="flushed the housing"),
    "incident_qx7741c.md": _INCIDENT.format(
        part="QX-7741-C", event="vibrated", hours=2200, action="balanced the impeller"
    ),
    "error_codes.md": "Controller fault E-4471 means the inlet pressure transducer is out of range; fault E-4417 means the outlet valve did not close.",
    "error_codes_b.md": "Controller fault E-4714 means the motor drive tripped on overcurrent; fault E-1447 means the flow meter lost its signal.",
    "photosynthesis.md": "Photosynthesis lets green plants convert sunlight, water and carbon dioxide into glucose and oxygen inside their chloroplasts.",
    "interest_rates.md": "The central bank raised its benchmark interest rate by half a percentage point to curb inflation that had reached a twenty-year high.",
    "exercise.md": "Regular aerobic exercise such as running or swimming lowers resting heart rate and blood pressure over a few months.",
    "glaciers.md": "Glaciers in the Alps are retreating quickly as average global temperatures climb, losing a tenth of their volume in a decade.",
    "compiler.md": "A compiler translates the source code of a program into machine instructions before the program is ever run.",
    "vaccines.md": "Vaccines train the immune system to recognise a pathogen by exposing it to a harmless fragment or weakened form.",
    "sourdough.md": "Sourdough bread rises thanks to wild yeast and lactic acid bacteria in a fermented starter of flour and water.",
    "tides.md": "Ocean tides are caused mainly by the gravitational pull of the Moon, with a smaller contribution from the Sun.",
    "chess.md": "In chess, castling moves the king two squares towards a rook and places the rook on the square the king crossed.",
    "printing_press.md": "Gutenberg's movable-type printing press made books far cheaper in fifteenth-century Europe and spread literacy.",
    "volcano.md": "Shield volcanoes such as Mauna Loa are built from fluid basaltic lava flows and have gentle slopes.",
    "bees.md": "Honey bees communicate the direction and distance of flowers to their hive mates with a waggle dance.",
    "solar_panels.md": "Photovoltaic panels convert sunlight directly into electricity using semiconductor cells made of silicon.",
    "coffee.md": "Coffee beans are roasted to develop flavour; darker roasts taste more bitter and contain slightly less caffeine.",
    "git.md": "Git records snapshots of a project; a branch is a movable pointer to a commit and merging joins two histories.",
    "sleep.md": "Adults who sleep less than six hours a night show poorer memory consolidation and slower reaction times.",
    "maintenance_policy.md": "The maintenance policy requires every pump seal to be inspected at 3000 operating hours and replaced at 5000.",
    "shipping.md": "Container ships carry standardised twenty-foot boxes, which cut loading times at ports from days to hours.",
}

# (query, relevant documents)
QUERIES: List[Tuple[str, List[str]]] = [
    ("QX-7741-B", ["incident_qx7741b.md"]),
    ("what happened to pump QX-7714-B", ["incident_qx7714b.md"]),
    ("RK-7741-B", ["incident_rk7741b.md"]),
    ("QX-4177-B seal", ["incident_qx4177b.md"]),
    ("fault E-4417", ["error_codes.md"]),
    ("E-1447", ["error_codes_b.md"]),
    ("how do leaves turn light into sugar", ["photosynthesis.md"]),
    ("monetary policy tightening to fight rising prices", ["interest_rates.md"]),
    ("cardio workouts improve cardiovascular health", ["exercise.md"]),
    ("ice masses shrinking because the planet is warming", ["glaciers.md"]),
    ("turning a program into executable code ahead of time", ["compiler.md"]),
    ("how immunisation protects against disease", ["vaccines.md"]),
    ("why does the sea rise and fall twice a day", ["tides.md"]),
    ("when must pump seals be inspected or replaced", ["maintenance_policy.md", "incident_qx7741b.md"]),
    ("silicon cells producing electricity from sunlight", ["solar_panels.md"]),
    ("effects of short sleep on memory", ["sleep.md"]),
]


def recall_at_k(ranked_sources: List[str], relevant: List[str], k: int = 5) -> float:
    return len(set(ranked_sources[:k]) & set(relevant)) / len(relevant)
