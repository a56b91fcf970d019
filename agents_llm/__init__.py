"""LLM side of the framework: backends, roles and prompts, the round engine, the
Collector, the per-episode `ReportState`, judges and reward, the report filter and the
execution trace.

Nothing is imported here eagerly, so `import agents_llm` stays cheap; import the
submodule you need (`agents_llm.engine`, ...; the round plan and action table are in `report_protocol`).
The report-writing application (`write_report`, `run_report`) runs envs and policies, so it
lives above them: `from report_app import write_report`.
"""

_MOVED = {"write_report", "run_report", "api"}


def __getattr__(name: str):
    if name in _MOVED:  # said plainly: an application above algos cannot be re-exported from below it
        raise AttributeError(
            f"agents_llm.{name} moved to the report_app package (it runs envs and policies): "
            f"from report_app import {'write_report' if name == 'api' else name}"
        )
    raise AttributeError(f"module 'agents_llm' has no attribute {name!r}")
