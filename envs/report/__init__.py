"""The report env, ``report_writing_v0``: a team of LLM agents writes one sourced report per episode.

One module per job:

* ``writing``: ``ReportWritingEnv``, the PettingZoo ``ParallelEnv`` (runs a round, decides how
  the episode goes on); ``envs.make("report_writing_v0", ...)`` builds it.
* ``config``: ``ReportEnvConfig``, its settings (the keys of ``conf/env/report_writing.yaml``), checked.
* ``resources``: ``ReportResources``, what its envs share (LLM backend, RAG stores, embedding, judge).
* ``assemble``: what an env is built from, by its config (tasks, resources, round engine).
* ``features``: the observation and state layout, declared once, and their vectors.
* ``actions``: a step's joint action checked, and the action masks.
* ``infos``: the round's infos and trace entry, and the failure report read back from the trace.
* ``episode``: the trace's header at reset, and whether a round ends the episode.
* ``outputs``: an episode's report and trace on disk (``save``, ``artifacts``, ``render``).
* ``tasks``, ``tasks.json``, ``corpora``, ``pydoc_corpus``: the topics and the corpora they are written from.

Importing this package imports nothing of the LLM side; ``writing`` does.
"""
