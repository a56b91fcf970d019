"""The judges, by name: ``judge.kind=<name>`` picks one (:func:`register_judge`).

A judge is one file: a class with ``async score(report, *, ledger) -> JudgeResult`` (the
:class:`agents_llm.judges.base.Judge` protocol), its settings as a dataclass subclassing
:class:`agents_llm.judges.config.JudgeConfig` (the reward's weights and length score come
with it; ``kind`` defaults to the judge's name) and a registered factory::

    @dataclass
    class MyJudgeConfig(JudgeConfig):
        kind: str = "mine"
        strictness: float = 0.5

    @register_judge("mine", config_class=MyJudgeConfig)
    def build(cfg, *, backend=None, embed=None) -> Judge: return MyJudge(cfg.strictness)

Registering stores the dataclass in Hydra's ConfigStore as ``judge/base_<name>``, so
``judge=base_<name>`` (or a ``conf/judge/<name>.yaml`` starting from it) composes a checked
config; a config class may add range checks with a ``check(cfg, need)`` staticmethod.
Outside the package: ``plugins=[my_module]`` on the command line imports the file first.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from report_protocol.registry import Entry, Registry


def _store(entry: Entry) -> None:
    try:
        from hydra.core.config_store import ConfigStore
    except ImportError:  # Hydra is optional for library use
        return
    ConfigStore.instance().store(group="judge", name=f"base_{entry.name}", node=entry.config_class)


JudgeFactory = Callable[..., Any]

JUDGES: Registry[JudgeFactory] = Registry(
    "judge",
    on_register=_store,
    hint="A plugin must be imported (e.g. `plugins=[my_pkg.my_judge]`) before it can be used.",
)


def register_judge(
    name: str, factory: Optional[JudgeFactory] = None, *, config_class: type, overwrite: bool = False
) -> Any:
    """Register ``factory(cfg, *, backend, embed) -> Judge`` as judge ``name`` with its
    config dataclass (a subclass of ``JudgeConfig``); without ``factory``, a decorator."""
    from .config import JudgeConfig

    if not (isinstance(config_class, type) and issubclass(config_class, JudgeConfig)):
        raise TypeError(f"judge {name!r}: config_class must subclass agents_llm.judges.config.JudgeConfig")
    return JUDGES.register(name, factory, config_class=config_class, overwrite=overwrite)
