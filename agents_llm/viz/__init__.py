"""See what the team did: the trace viewer (HTML), training plots and the evaluation report.

Optional dependencies (the ``viz`` extra): bokeh for the viewer, matplotlib for the
plots. Import the submodules directly; this package imports neither at load time, so
the rest of ``agents_llm`` never needs them.
"""
