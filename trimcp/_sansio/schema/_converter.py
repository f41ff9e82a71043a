"""The one cattrs converter between MCP wire dicts and the attrs classes of this package.

Theory of operation
-------------------
Every MCP revision (2024-11-05 … 2025-11-25, and the 2026-07-28 stateless
era) writes objects as JSON with camelCase member names, marks optional
members by leaving them out, lets ``_meta`` carry anything and lets a peer add
members we do not know.  ``converter`` maps that world to attrs classes with
snake_case attributes.  cattrs does the dispatching and caching; the hook
factories registered here apply the MCP rules:

* names: ``input_schema`` <-> ``inputSchema``, ``meta`` <-> ``_meta`` (``_rules``);
* nothing is lost: undeclared members go to ``extra`` and come back out, so
  ``to_wire(from_wire(cls, d)) == d`` for every valid ``d`` (``_classes``);
* strict where the schema is: required members, JSON types, ``null`` only where
  declared, enumerations (``Literal``), with the JSON path of the first problem
  in ``SchemaError`` (``_hooks``, ``_classes``);
* unions by discriminator or by JSON type, never by trial (``_hooks``).

Values that need no conversion (strings, numbers, ``dict[str, Any]`` such as
``inputSchema`` or ``_meta``, arrays of strings) are shared with the input, not
copied — and ``to_wire`` shares them with its output.  Treat them as read-only.

Registration order matters: cattrs tries the most recently registered
predicate first, so the discriminated unions registered by the type modules
(``register_tagged_union``) win over the generic union factory, and a class
registered with ``register_checked`` (a rule spanning members, checked after
the generated function) wins over the attrs factory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

import attrs
import cattrs

from ._classes import class_structure_factory, class_unstructure_factory
from ._hooks import (
    dict_factory,
    list_factory,
    literal_factory,
    make_primitive_hook,
    structure_any,
    structure_none,
    tagged_union_hook,
    union_factory,
)
from ._rules import (
    EXTRA,
    NONE_TYPE,
    PRIMITIVE_OK,
    WIRE_NAME,
    WIRE_REQUIRED,
    SchemaError,
    StructureHook,
    is_dict,
    is_list,
    is_literal,
    is_union,
    json_type,
)

__all__ = [
    "EXTRA",
    "WIRE_NAME",
    "WIRE_REQUIRED",
    "SchemaError",
    "converter",
    "json_type",
    "register_checked",
    "register_tagged_union",
    "register_union_hook",
]

_T = TypeVar("_T")

converter: Final = cattrs.Converter()
"""The converter.  Prefer the package helpers ``from_wire`` / ``to_wire``."""

for _prim in PRIMITIVE_OK:
    converter.register_structure_hook(_prim, make_primitive_hook(_prim))
converter.register_structure_hook_func(lambda t: t is Any, structure_any)
converter.register_structure_hook_func(lambda t: t is NONE_TYPE, structure_none)
converter.register_structure_hook_factory(is_literal, literal_factory)
converter.register_structure_hook_factory(is_list, list_factory)
converter.register_structure_hook_factory(is_dict, dict_factory)
converter.register_structure_hook_factory(is_union, union_factory)
converter.register_structure_hook_factory(attrs.has, class_structure_factory)
converter.register_unstructure_hook_factory(attrs.has, class_unstructure_factory)


def register_union_hook(union: Any, hook: StructureHook) -> None:
    """Structure ``union`` with ``hook`` (matched by equality, so member order is free)."""
    converter.register_structure_hook_func(lambda t: t == union, hook)


def register_tagged_union(
    union: Any,
    tag: str,
    members: Mapping[str, type],
    *,
    default: type | None = None,
    fallback: type | None = None,
) -> None:
    """Structure ``union`` by its string member ``tag`` (``type``, ``mode`` …).

    ``members`` maps tag values to classes; ``default`` is used when the tag is
    absent and ``fallback`` (e.g. ``UnknownContent``) for a tag value not in
    ``members``; without them either case is a ``SchemaError``.
    """
    register_union_hook(union, tagged_union_hook(converter, tag, members, default=default, fallback=fallback))


def register_checked(cls: type[_T], check: Callable[[_T], None]) -> None:
    """Structure ``cls`` as usual, then run ``check`` on the instance.

    For rules that span members (``InputRequiredResult`` needs ``inputRequests``
    or ``requestState``); ``check`` raises ``SchemaError`` with a path relative
    to the object.  Registered for ``cls`` exactly, not for its subclasses.
    """
    hook = class_structure_factory(cls, converter)

    def structure_checked(value: Any, tp: Any) -> Any:
        obj = hook(value, tp)
        check(obj)
        return obj

    converter.register_structure_hook_func(lambda t: t is cls, structure_checked)
