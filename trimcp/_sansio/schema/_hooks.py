"""Structure hooks for everything that is not an attrs class: primitives, literals, arrays,
maps and unions.

Theory of operation
-------------------
Each factory takes the declared type and the converter and returns a cattrs
structure hook ``(value, type) -> value``.  Hooks check JSON types strictly
(``true`` is not an integer; ``null`` only where declared) and raise
``SchemaError``; container hooks prepend the index or key of the failing item
to ``SchemaError.path``.  Values are not copied when they need no conversion:
an array of strings or a ``dict[str, Any]`` is returned as given.

Unions are never resolved by trial and error.  A union is either registered
with a discriminator (``tagged_union_hook``: the ``type`` of a content block,
the ``mode`` of an elicitation) or split by JSON type (``union_factory``: at
most one member per JSON type, e.g. ``int | str``, or ``Block | list[Block]``
as in 2025-11-25 sampling content).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Union, get_args

import cattrs

from ._rules import (
    NONE_TYPE,
    PRIMITIVE_OK,
    SchemaError,
    StructureHook,
    bad,
    describe,
    fast_types,
    is_list,
    is_literal,
    json_type,
)

__all__ = [
    "building",
    "dict_factory",
    "hook_for",
    "list_factory",
    "literal_factory",
    "make_primitive_hook",
    "structure_any",
    "structure_none",
    "tagged_union_hook",
    "union_factory",
]

#: Classes whose hooks are being built right now (guards against recursive types).
building: set[Any] = set()


def hook_for(conv: cattrs.Converter, tp: Any) -> StructureHook:
    """The structure hook for ``tp``, looked up lazily if ``tp`` is still being built."""
    if tp in building:

        def deferred(value: Any, _tp: Any) -> Any:
            return conv.get_structure_hook(tp)(value, tp)

        return deferred
    return conv.get_structure_hook(tp)


def structure_any(value: Any, _tp: Any) -> Any:
    return value


def structure_none(value: Any, _tp: Any) -> None:
    if value is not None:
        raise bad("null", value)


def make_primitive_hook(tp: type) -> StructureHook:
    ok = PRIMITIVE_OK[tp]
    expected = describe(tp)

    def structure_primitive(value: Any, _tp: Any) -> Any:
        if type(value) in ok:
            return value
        # Subclasses never come out of json.loads, but callers may build dicts by hand;
        # bool is an int subclass in Python, never a JSON number.
        if isinstance(value, bool) and tp is not bool:
            raise bad(expected, value)
        if isinstance(value, tuple(ok)):
            return value
        raise bad(expected, value)

    return structure_primitive


def literal_factory(tp: Any, _conv: cattrs.Converter) -> StructureHook:
    allowed = frozenset(get_args(tp))
    if not all(isinstance(a, str) for a in allowed):
        raise TypeError(f"only string literals are supported on the wire: {tp!r}")
    expected = describe(tp)

    def structure_literal(value: Any, _tp: Any) -> Any:
        if isinstance(value, str):
            if value in allowed:
                return value
            raise SchemaError(f"expected {expected}, got {json.dumps(value, ensure_ascii=False)}")
        raise bad(expected, value)

    return structure_literal


def list_factory(tp: Any, conv: cattrs.Converter) -> StructureHook:
    args = get_args(tp)
    item_tp = args[0] if args else Any
    if item_tp is Any:

        def structure_any_list(value: Any, _tp: Any) -> Any:
            if isinstance(value, list):
                return value
            raise bad("array", value)

        return structure_any_list

    ok = fast_types(item_tp)
    if ok:
        # Arrays of primitives (or opaque objects) are checked in place and shared.
        expected = describe(item_tp)

        def structure_plain_list(value: Any, _tp: Any) -> Any:
            if not isinstance(value, list):
                raise bad("array", value)
            for i, item in enumerate(value):
                if type(item) not in ok:
                    raise SchemaError(f"expected {expected}, got {json_type(item)}", [i])
            return value

        return structure_plain_list

    item_hook = hook_for(conv, item_tp)

    def structure_list(value: Any, _tp: Any) -> Any:
        if not isinstance(value, list):
            raise bad("array", value)
        try:
            return [item_hook(item, item_tp) for item in value]
        except SchemaError:
            pass
        # Only on failure: find the index of the bad item (hooks are deterministic).
        for i, item in enumerate(value):
            try:
                item_hook(item, item_tp)
            except SchemaError as exc:
                exc.path.insert(0, i)
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    return structure_list


def dict_factory(tp: Any, conv: cattrs.Converter) -> StructureHook:
    args = get_args(tp)
    value_tp = args[1] if len(args) == 2 else Any
    if value_tp is Any:

        def structure_opaque(value: Any, _tp: Any) -> Any:
            if isinstance(value, dict):
                return value
            raise bad("object", value)

        return structure_opaque

    ok = fast_types(value_tp)
    if ok:
        # Maps of primitives or opaque objects (``experimental``) are checked in place and shared.
        expected = describe(value_tp)

        def structure_plain_dict(value: Any, _tp: Any) -> Any:
            if not isinstance(value, dict):
                raise bad("object", value)
            for key, item in value.items():
                if type(item) not in ok:
                    raise SchemaError(f"expected {expected}, got {json_type(item)}", [key])
            return value

        return structure_plain_dict

    value_hook = hook_for(conv, value_tp)

    def structure_dict(value: Any, _tp: Any) -> Any:
        if not isinstance(value, dict):
            raise bad("object", value)
        out = {}
        for key, item in value.items():
            try:
                out[key] = value_hook(item, value_tp)
            except SchemaError as exc:
                exc.path.insert(0, key)
                raise
        return out

    return structure_dict


def union_factory(tp: Any, conv: cattrs.Converter) -> StructureHook:
    """A union with no registered discriminator: the value's JSON type picks the member.

    At most one member per JSON type: ``null``, primitives, string literals, one
    ``list[...]`` and one object type (an attrs class, or a union of classes that
    has a registered hook).
    """
    args = get_args(tp)
    nullable = NONE_TYPE in args
    prim_ok: set[type] = set()
    literals: set[str] = set()
    list_tp: Any = None
    objects: list[Any] = []
    for arg in args:
        if arg is NONE_TYPE:
            continue
        if arg is Any:
            return structure_any
        if arg in PRIMITIVE_OK:
            prim_ok |= PRIMITIVE_OK[arg]
        elif is_literal(arg):
            literals.update(get_args(arg))
        elif is_list(arg):
            if list_tp is not None:
                raise TypeError(f"ambiguous union (two array members): {tp!r}")
            list_tp = arg
        else:
            objects.append(arg)
    object_tp: Any = None
    if len(objects) == 1:
        object_tp = objects[0]
    elif objects:
        object_tp = Union[tuple(objects)]  # noqa: UP007 - built at run time
        if object_tp == tp:
            raise TypeError(f"a union of object types needs a registered discriminator: {tp!r}")
    list_hook = hook_for(conv, list_tp) if list_tp is not None else None
    object_hook = hook_for(conv, object_tp) if object_tp is not None else None
    expected = describe(tp)

    def structure_union(value: Any, _tp: Any) -> Any:
        if value is None and nullable:
            return None
        if type(value) in prim_ok or (isinstance(value, str) and value in literals):
            return value
        if list_hook is not None and isinstance(value, list):
            return list_hook(value, list_tp)
        if object_hook is not None and isinstance(value, dict):
            return object_hook(value, object_tp)
        raise bad(expected, value)

    return structure_union


def tagged_union_hook(
    conv: cattrs.Converter,
    tag: str,
    members: Mapping[str, type],
    *,
    default: type | None = None,
    fallback: type | None = None,
) -> StructureHook:
    """A hook choosing the class by the string member ``tag``.

    ``default`` is used when ``tag`` is absent and ``fallback`` when it is a
    string not in ``members``; otherwise either case is a ``SchemaError``.
    Member hooks are looked up on first use (classes may not be complete yet).
    """
    hooks: dict[type, StructureHook] = {}
    known = ", ".join(json.dumps(k) for k in members)

    def structure_tagged(value: Any, _tp: Any) -> Any:
        if not isinstance(value, dict):
            raise bad("object", value)
        tag_value = value.get(tag)
        cls = members.get(tag_value) if isinstance(tag_value, str) else None
        if cls is None:
            if tag not in value:
                if default is None:
                    raise SchemaError("required member missing", [tag])
                cls = default
            elif not isinstance(tag_value, str):
                raise SchemaError(f"expected string, got {json_type(tag_value)}", [tag])
            elif fallback is not None:
                cls = fallback
            else:
                shown = json.dumps(tag_value, ensure_ascii=False)
                raise SchemaError(f"expected one of {known}, got {shown}", [tag])
        hook = hooks.get(cls)
        if hook is None:
            hook = hooks[cls] = conv.get_structure_hook(cls)
        return hook(value, cls)

    return structure_tagged
