"""Typed records for what a warm lint handles (findings, results, configs, sources), written
without `dataclasses`.

Importing `dataclasses` imports `inspect`, and with it `ast`, `dis`, `tokenize` and `re`: about
8 ms, a sixth of what a one-file lint served from the cache may take in all. A record class
lists its fields in `_fields` and writes its own `__init__` (typed, and as fast as a
dataclass's); `Record` gives the rest a dataclass would: equality field by field, a
dataclass-style repr, and `replace` (dataclasses.replace). `Frozen` records refuse assignment
and hash by their fields, as `@dataclass(frozen=True)` does.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (typing.TYPE_CHECKING without importing typing, which costs a few ms; mypy knows the name)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    R = TypeVar("R", bound="Record")


class Record:
    _fields: tuple[str, ...] = ()
    _hidden: tuple[str, ...] = ()  # left out of repr (field(repr=False))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._fields)

    __hash__ = None  # type: ignore[assignment]  # (mutable, as a dataclass with eq)

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields if n not in self._hidden)
        return f"{type(self).__qualname__}({shown})"

    def replace(self: R, **changes: Any) -> R:
        """A copy with some fields changed (as dataclasses.replace)."""
        unknown = set(changes) - set(self._fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(sorted(unknown))}")
        return type(self)(**{n: changes[n] if n in changes else getattr(self, n) for n in self._fields})


class Frozen(Record):
    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(getattr(self, n) for n in self._fields))

    def _set(self, **values: Any) -> None:
        """For `__init__`: set the fields once."""
        for name, value in values.items():
            object.__setattr__(self, name, value)
