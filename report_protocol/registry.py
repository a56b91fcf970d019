"""One registration pattern for every extension point: a named entry with a config dataclass.

Each extension point (judges, mixers, agent networks, envs; algorithms keep their own
``algos.register``, which follows the same rule) holds one :class:`Registry`. An entry is a
name, a ``factory`` (a class or a function that builds the object) and the ``config_class``
(a dataclass) its settings are read into. Register with a call or a decorator::

    MIXERS.register("qmix", QMixer.from_config, config_class=QMixerConfig)

    @JUDGES.register("my_judge", config_class=MyJudgeConfig)
    def build_my_judge(cfg, **resources): ...

``config(name, data)`` turns a mapping into that dataclass, refusing an unknown key by name,
so a typo fails where the setting is read. A package adds what its framework needs on
registration (e.g. storing the dataclass in Hydra's ConfigStore as ``base_<name>``) through
``on_register``; this module imports the standard library only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Generic, Mapping, Optional, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Entry:
    name: str
    factory: Callable[..., Any]
    config_class: type


@dataclass
class EmptyConfig:
    """The config of an entry that has no settings."""


class Registry(Generic[F]):
    """Named entries of one extension point (``kind``: "judge", "mixer", ...)."""

    def __init__(self, kind: str, *, on_register: Optional[Callable[[Entry], None]] = None, hint: str = ""):
        self.kind = kind
        self.hint = hint  # how a user makes an outside entry known, for the unknown-name error
        self._entries: dict[str, Entry] = {}
        self._on_register = on_register

    def register(
        self,
        name: str,
        factory: Optional[F] = None,
        *,
        config_class: type = EmptyConfig,
        overwrite: bool = False,
    ) -> Any:
        """Register ``factory`` as ``name``; without ``factory``, a decorator that does."""
        if factory is None:

            def deco(f: F) -> F:
                self.register(name, f, config_class=config_class, overwrite=overwrite)
                return f

            return deco
        if not callable(factory):
            raise TypeError(f"{self.kind} {name!r}: {factory!r} is not callable")
        if not (isinstance(config_class, type) and dataclasses.is_dataclass(config_class)):
            raise TypeError(f"{self.kind} {name!r}: config_class must be a dataclass, got {config_class!r}")
        old = self._entries.get(name)
        if old is not None and old.factory != factory and not overwrite:
            raise ValueError(f"{self.kind} {name!r} is already registered ({old.factory!r}); pass overwrite=True")
        entry = Entry(name, factory, config_class)
        self._entries[name] = entry
        if self._on_register is not None:
            self._on_register(entry)
        return factory

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Any:
        return iter(sorted(self._entries))

    def available(self) -> list[str]:
        return sorted(self._entries)

    def get(self, name: str) -> Entry:
        if name not in self._entries:
            hint = f" {self.hint}" if self.hint else ""
            raise KeyError(f"unknown {self.kind} {name!r}; registered: {', '.join(self.available())}.{hint}")
        return self._entries[name]

    def config(self, name: str, data: Any = None, **overrides: Any) -> Any:
        """Entry ``name``'s config dataclass from ``data`` (a dataclass, a mapping or None)
        and ``overrides``; an unknown key raises ``ValueError`` naming it."""
        cls = self.get(name).config_class
        if isinstance(data, cls) and not overrides:
            return data
        values: dict[str, Any] = {}
        if data is not None:
            is_instance = dataclasses.is_dataclass(data) and not isinstance(data, type)
            values.update(
                {f.name: getattr(data, f.name) for f in dataclasses.fields(data)} if is_instance else _as_mapping(data)
            )
        values.update(overrides)
        known = {f.name for f in dataclasses.fields(cls) if f.init}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(
                f"{self.kind} {name!r} has no setting {', '.join(map(repr, unknown))}; "
                f"its settings ({cls.__name__}): {', '.join(sorted(known)) or 'none'}"
            )
        return cls(**values)

    def settings_from(self, name: str, parent: Any, overrides: Any = None) -> Any:
        """Entry ``name``'s config where each of its fields takes the value of ``parent``'s
        attribute of the same name, if ``parent`` has one (shared settings, e.g. an algo
        config's ``hidden_dim``), then ``overrides`` (a mapping: any of its fields)."""
        cls = self.get(name).config_class
        shared = {
            f.name: getattr(parent, f.name) for f in dataclasses.fields(cls) if f.init and hasattr(parent, f.name)
        }
        return self.config(name, {**shared, **dict(_as_mapping(overrides) if overrides is not None else {})})


def _as_mapping(data: Any) -> Mapping[str, Any]:
    if isinstance(data, Mapping):
        return data
    if hasattr(data, "items"):
        return dict(data.items())
    raise TypeError(f"a config must be a dataclass or a mapping, got {type(data).__name__}")
