"""The parts an agent can play in the handcrafted pipeline, by name.

A role declares its part (`agents_llm.roles.Role.pipeline_part`); the report env lists
each agent's part (`ReportWritingEnv.pipeline_parts`, read into `algos.EnvSpec.extras`);
the pipeline (`algos.handcrafted`) writes its round patterns and directives for parts,
not for role names, so a new role takes part in it by naming one of these.

* `LEAD`: plans the outline, assigns sections and corrections, closes phases;
* `RESEARCH`: finds evidence (and reports what the sources do not cover);
* `WRITE`: writes and rewrites sections;
* `REVIEW`: reviews the written sections;
* `NO_PART`: runs only when a pattern names the agent itself.
"""

from __future__ import annotations

LEAD, RESEARCH, WRITE, REVIEW, NO_PART = "lead", "research", "write", "review", "none"
PIPELINE_PARTS = (LEAD, RESEARCH, WRITE, REVIEW, NO_PART)
