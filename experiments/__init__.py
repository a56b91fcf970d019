"""What a user runs: train, evaluate, write_report, chat, ingest, query, visualize, summarize,
check_report (and what they share: run_config, preflight, compare_policies, sweep_objective).

`protocol/` holds the benchmark protocol and the measurements the results cite; `timing/` the
speed and cost benchmarks. Every script runs as `python experiments/<path>.py` once the project is
installed (`pip install -e .`) and imports its siblings as `experiments.<module>`.
"""
