"""``frozen``: ``attrs.frozen``, with equality, hash and repr written once for every class.

Theory of operation
-------------------
attrs writes the methods of each class it makes as Python source and compiles
it.  For the typed schema's hundred-odd classes, and the fifty-odd others a
client imports (events, JSON-RPC messages, options), that compiling was most
of what a client paid the first time it connected in a process (issue 29, cold
start): about 3 million instructions a class, of which ``__repr__`` and
``__eq__`` (with its ``__hash__``) were half.  Those three do the same thing in
every class (show, compare, hash the fields in their order), so ``frozen``
asks attrs for the rest (slots, ``__init__``, immutability, the field metadata
``attrs.fields`` and the schema converter read) and installs these shared ones
(unless the class defines its own), which read each class's fields once, on
first use, honouring each field's ``eq`` and ``repr``:

* ``==``: the same class and equal fields (compared as tuples, as attrs does:
  a field identical to itself is equal, NaN included); ``!=`` is its negation;
* ``hash``: of the class and the fields (fields holding lists or dicts are
  unhashable, as with attrs);
* ``repr``: ``ClassName(field=value, ...)`` as attrs writes it, ``...`` for an
  object met again inside itself.

Type checkers see ``attrs.frozen`` itself (``TYPE_CHECKING``), whose typing
these classes keep: a module writes ``@frozen`` or ``@frozen(kw_only=True)``.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

__all__ = ["frozen"]

_C = TypeVar("_C", bound=type)

#: The field values of an instance as a tuple, by class (made on first use).
_values: dict[type, Callable[[Any], tuple[Any, ...]]] = {}
#: The names of the fields a repr shows, by class.
_shown: dict[type, tuple[str, ...]] = {}


def _values_of(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    get = _values.get(cls)
    if get is None:
        names = [f.name for f in attrs.fields(cls) if f.eq]
        if len(names) == 1:
            one = attrgetter(names[0])

            def get(obj: Any) -> tuple[Any, ...]:
                return (one(obj),)
        elif names:
            get = attrgetter(*names)
        else:

            def get(obj: Any) -> tuple[Any, ...]:
                return ()

        _values[cls] = get
    return get


def _eq(self: Any, other: Any) -> object:
    cls = self.__class__
    if other.__class__ is not cls:
        return NotImplemented
    get = _values_of(cls)
    return bool(get(self) == get(other))


def _hash(self: Any) -> int:
    cls = self.__class__
    return hash((cls, *_values_of(cls)(self)))


@reprlib.recursive_repr("...")
def _repr(self: Any) -> str:
    cls = self.__class__
    names = _shown.get(cls)
    if names is None:
        names = _shown[cls] = tuple(f.name for f in attrs.fields(cls) if f.repr)
    fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
    return f"{cls.__qualname__.rsplit('>.', 1)[-1]}({fields})"


def _shared(cls: _C, kw_only: bool) -> _C:
    own = cls.__dict__
    made: _C = attrs.frozen(kw_only=kw_only, eq=False, repr=False)(cls)
    if "__eq__" not in own:
        made.__eq__ = _eq  # type: ignore[assignment]
        made.__hash__ = _hash  # type: ignore[assignment]
    if "__repr__" not in own:
        made.__repr__ = _repr  # type: ignore[assignment]
    return made


def _frozen(maybe_cls: _C | None = None, /, *, kw_only: bool = False) -> Any:
    """``attrs.frozen`` (as ``@frozen`` or ``@frozen(kw_only=...)``) with the shared methods."""
    if maybe_cls is not None:
        return _shared(maybe_cls, kw_only)
    return lambda cls: _shared(cls, kw_only)


if TYPE_CHECKING:
    from attrs import frozen as frozen
else:
    frozen = _frozen
