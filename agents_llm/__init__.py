"""LLM side of the framework: backends, roles and prompts, the round engine, the
Collector, the per-episode `ReportState`, judges and reward, the report filter and the
execution trace.

Nothing is imported here eagerly, so `import agents_llm` stays cheap; import the
submodule you need (`agents_llm.engine`, ...; the round plan and action table are in `report_protocol`).
"""


def __getattr__(name: str):  # lazy: `from agents_llm import write_report` imports the API only then
    if name == "write_report":
        from .api import write_report

        return write_report
    raise AttributeError(f"module 'agents_llm' has no attribute {name!r}")
