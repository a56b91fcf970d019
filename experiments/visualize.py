"""See what the team did: a trace viewer, training plots, an evaluation report.

    python experiments/visualize.py trace=outputs/.../trace_0.json            # -> trace_0.html (self-contained)
    python experiments/visualize.py logs=outputs/2025-01-01/12-00-00_ab12     # -> <run dir>/plots/*.png
    python experiments/visualize.py logs=multirun/2025-01-01/12-00-00_ab12    # -> <folder>/plots/training_curves_seeds.png
                                                  # (each configuration: mean over seeds, 95 % bootstrap band)
    python experiments/visualize.py 'eval=[qmix/metrics.json,random/metrics.json]' out=report/
                                                                              # -> report/eval_report.md + PNGs

Several modes may be given at once. A file that cannot be read is reported with its
name and what is wrong, and the exit status is 2.
"""

from __future__ import annotations

import sys
from pathlib import Path


import hydra  # noqa: E402
from omegaconf import DictConfig, ListConfig, OmegaConf  # noqa: E402

from agents_llm.viz.config import register_visualize_config  # noqa: E402

register_visualize_config()


def _eval_inputs(value) -> list[str]:
    if isinstance(value, (list, tuple, ListConfig)):
        return [str(v) for v in value]
    return [str(value)]


def training_plots(logs: Path, out: str | None):
    """One run's plots (a run dir or its train.csv), or, for a multirun folder, the curves of each
    configuration over its seeds with a confidence band."""
    from agents_llm.viz.training_plots import TRAIN_CSV, write_training_plots

    if logs.suffix == ".csv" or (logs / TRAIN_CSV).is_file() or not logs.is_dir():
        return write_training_plots(logs, out)
    from experiments.summarize import find_runs

    from agents_llm.viz.multirun_plots import write_multirun_plots

    groups: dict[str, list[Path]] = {}
    for run in find_runs(logs):  # FileNotFoundError names the folder when it holds no finished run
        groups.setdefault(run["label"], []).append(Path(run["folder"]))
    return write_multirun_plots(groups, Path(out) if out else logs / "plots")


@hydra.main(version_base="1.3", config_path="../conf", config_name="visualize")
def main(cfg: DictConfig) -> int:
    if cfg.trace is None and cfg.logs is None and cfg.eval is None:
        print(
            "nothing to do: give trace=<trace.json>, logs=<run dir> or eval=<metrics.json or folder>", file=sys.stderr
        )
        sys.exit(2)
    try:
        if cfg.trace is not None:
            from agents_llm.viz.trace_loading import read_trace

            doc = read_trace(cfg.trace)  # before importing Bokeh: a bad file is reported at once
            from agents_llm.viz.trace_viewer import write_viewer

            html = None
            if cfg.out is not None:  # a .html file, or a folder that gets <trace name>.html
                html = Path(cfg.out) if cfg.out.endswith(".html") else Path(cfg.out) / f"{Path(cfg.trace).stem}.html"
            out = write_viewer(
                cfg.trace, html, doc=doc, max_text_chars=cfg.max_text_chars, play_interval_ms=cfg.play_interval_ms
            )
            print(f"trace viewer: {out}")
        if cfg.logs is not None:
            result = training_plots(Path(cfg.logs), cfg.out)
            for note in result.notes:
                print(f"note: {note}")
            for path in result.files:
                print(f"training plot: {path}")
        if cfg.eval is not None:
            from agents_llm.viz.eval_report import write_eval_report

            result = write_eval_report(
                _eval_inputs(OmegaConf.to_object(cfg.eval) if isinstance(cfg.eval, ListConfig) else cfg.eval), cfg.out
            )
            for note in result.notes:
                print(f"note: {note}")
            print(f"evaluation report: {result.report}")
    except (ValueError, FileNotFoundError) as e:  # TraceError, bad CSV/JSON: the message names the file
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    return 0


if __name__ == "__main__":
    main()
