"""Structure and unstructure functions for the attrs classes, generated once per class.

Theory of operation
-------------------
For each class the factories below write a small Python function, straight-line
code with one block per field, and compile it (as attrs and cattrs themselves
do).  Structuring a class does, per field: one ``dict.get`` of the wire name,
a presence test, and either an exact ``type()`` check (JSON primitives and
opaque ``dict[str, Any]`` values, taken as they are) or a call to the field's
hook.  Members the class does not declare are counted, and only when there are
some is a second pass made to collect them into ``extra``.  The instance is
made with ``object.__new__`` and its slots filled directly — half the cost of a
frozen attrs ``__init__`` — which is safe because our classes have no
validators, converters or post-init hooks (checked; otherwise ``__init__``
runs).  Unstructuring reads
each attribute, leaves out optional ones that are ``None``, converts nested
objects, and merges ``extra`` back without letting it override a declared
member.

The rules applied (spec revisions 2024-11-05 … 2025-11-25; see ``_rules``):

* an attribute without a default, or with ``WIRE_REQUIRED`` metadata, is a
  required member: absent -> ``SchemaError("required member missing")``;
  written even when ``None`` (``Task.ttl`` is required and nullable);
* an attribute with a default is optional: absent -> ``None`` (so every
  optional attribute defaults to ``None``), and left out when ``None``.  A
  member present as ``null`` is checked against the declared type *without*
  its ``None``, so it fails: the schemas never allow ``null`` for an optional
  member.  The exception is a member declared ``Any`` (any JSON value, such as
  2026-07-28 ``structuredContent``): ``null`` there reads as absent and is
  left out on the way back.
"""

from __future__ import annotations

import types
from typing import Any, get_args

import attrs
import cattrs

from ._hooks import building, hook_for
from ._rules import (
    EXTRA,
    WIRE_NAME,
    WIRE_REQUIRED,
    SchemaError,
    StructureHook,
    UnstructureHook,
    fast_types,
    is_dict,
    is_list,
    json_type,
    needs_unstructure,
    strip_none,
    wire_name,
)

__all__ = ["class_structure_factory", "class_unstructure_factory"]

_MISSING = object()


def _compile(name: str, lines: list[str], namespace: dict[str, Any]) -> Any:
    source = "\n".join(lines)
    code = compile(source, f"<trimcp schema {name}>", "exec")
    exec(code, namespace)
    return namespace[name]


def _wire_fields(cls: type) -> list[tuple[attrs.Attribute[Any], str, bool]]:
    """``(field, wire name, optional)`` for every field but ``extra``."""
    out = []
    for f in attrs.fields(cls):
        if f.name == EXTRA:
            continue
        wire = f.metadata.get(WIRE_NAME) or wire_name(f.name)
        optional = f.default is not attrs.NOTHING and not f.metadata.get(WIRE_REQUIRED)
        if optional and f.default is not None:
            raise TypeError(f"{cls.__name__}.{f.name}: optional wire fields must default to None")
        out.append((f, wire, optional))
    return out


def _slot_setters(cls: type) -> dict[str, Any] | None:
    """The slot setters of every field, or ``None`` if ``__init__`` must run."""
    if hasattr(cls, "__attrs_post_init__") or hasattr(cls, "__attrs_pre_init__"):
        return None
    setters: dict[str, Any] = {}
    for f in attrs.fields(cls):
        if f.validator is not None or f.converter is not None:
            return None
        slot = next((k.__dict__[f.name] for k in cls.__mro__ if f.name in k.__dict__), None)
        if not isinstance(slot, types.MemberDescriptorType):
            return None
        setters[f.name] = slot.__set__
    return setters


def class_structure_factory(cls: type, conv: cattrs.Converter) -> StructureHook:
    attrs.resolve_types(cls)
    if EXTRA not in attrs.fields_dict(cls):
        raise TypeError(f"{cls.__name__} has no '{EXTRA}' field to keep unknown members in")
    building.add(cls)
    try:
        fields = _wire_fields(cls)
        ns: dict[str, Any] = {
            "cls": cls,
            "SchemaError": SchemaError,
            "json_type": json_type,
            "MISSING": _MISSING,
            "isinstance": isinstance,
            "dict": dict,
            "len": len,
            "KNOWN": frozenset(wire for _, wire, _ in fields),
        }
        lines = [
            "def structure(value, _tp):",
            "    if value.__class__ is not dict and not isinstance(value, dict):",
            f"        raise SchemaError('expected object ({cls.__name__}), got ' + json_type(value))",
            "    get = value.get",
            "    seen = 0",
        ]
        args: list[str] = []
        for i, (f, wire, optional) in enumerate(fields):
            v = f"v{i}"
            tp = strip_none(f.type) if optional else f.type
            w = repr(wire)
            lines.append(f"    {v} = get({w}, MISSING)")
            if optional:
                lines.append(f"    if {v} is MISSING:")
                lines.append(f"        {v} = None")
                lines.append("    else:")
            else:
                lines.append(f"    if {v} is MISSING:")
                lines.append(f"        raise SchemaError('required member missing', [{w}])")
                lines.append("    if True:")
            lines.append("        seen += 1")
            if tp is not Any:
                ok = fast_types(tp)
                ns[f"H{i}"] = hook_for(conv, tp)
                ns[f"T{i}"] = tp
                if len(ok) == 1:
                    ns[f"F{i}"] = next(iter(ok))
                    lines.append(f"        if {v}.__class__ is not F{i}:")
                elif ok:
                    ns[f"F{i}"] = ok
                    lines.append(f"        if {v}.__class__ not in F{i}:")
                else:
                    lines.append("        if True:")
                lines += [
                    "            try:",
                    f"                {v} = H{i}({v}, T{i})",
                    "            except SchemaError as exc:",
                    f"                exc.path.insert(0, {w})",
                    "                raise",
                ]
            args.append(f"{f.alias}={v}")
        lines += [
            "    if seen == len(value):",
            "        extra = {}",
            "    else:",
            "        extra = {k: x for k, x in value.items() if k not in KNOWN}",
        ]
        slots = _slot_setters(cls)
        if slots is None:
            lines.append(f"    return cls({', '.join(args + [EXTRA + '=extra'])})")
        else:
            # Fill the slots directly: a frozen attrs __init__ costs twice as much,
            # and these classes have no validators, converters or post-init to run.
            lines.append("    obj = NEW(cls)")
            for i, (f, _, _) in enumerate(fields):
                ns[f"S{i}"] = slots[f.name]
                lines.append(f"    S{i}(obj, v{i})")
            ns["SX"] = slots[EXTRA]
            ns["NEW"] = object.__new__
            lines += ["    SX(obj, extra)", "    return obj"]
    finally:
        building.discard(cls)
    hook: StructureHook = _compile("structure", lines, ns)
    return hook


def class_unstructure_factory(cls: type, conv: cattrs.Converter) -> UnstructureHook:
    attrs.resolve_types(cls)
    building.add(cls)
    try:
        fields = _wire_fields(cls)
        ns: dict[str, Any] = {}
        lines = ["def unstructure(obj):", "    out = {}"]
        for i, (f, wire, optional) in enumerate(fields):
            fn = _unstructure_fn(f.type, conv)
            value = "v"
            if fn is not None:
                ns[f"U{i}"] = fn
                value = f"U{i}(v)"
            lines.append(f"    v = obj.{f.name}")
            if optional:
                lines.append("    if v is not None:")
                lines.append(f"        out[{wire!r}] = {value}")
            else:
                lines.append(f"    out[{wire!r}] = {value}")
        if EXTRA in attrs.fields_dict(cls):
            lines += [
                f"    extra = obj.{EXTRA}",
                "    if extra:",
                "        for k, x in extra.items():",
                "            if k not in out:",
                "                out[k] = x",
            ]
        lines.append("    return out")
    finally:
        building.discard(cls)
    hook: UnstructureHook = _compile("unstructure", lines, ns)
    return hook


def _unstructure_fn(tp: Any, conv: cattrs.Converter) -> UnstructureHook | None:
    """How to unstructure a value declared as ``tp``; ``None``: it is JSON already."""
    if not needs_unstructure(tp):
        return None
    inner = strip_none(tp)
    if attrs.has(inner) and inner not in building:
        return conv.get_unstructure_hook(inner)
    if is_list(inner):
        item_fn = _unstructure_fn(get_args(inner)[0], conv)
        # ``list[X]`` needs unstructuring only because ``X`` does, so ``X`` has a function.
        assert item_fn is not None
        fn = item_fn

        def unstructure_list(value: list[Any]) -> list[Any]:
            return [fn(v) for v in value]

        return unstructure_list
    if is_dict(inner):
        value_fn = _unstructure_fn(get_args(inner)[1], conv)
        if value_fn is not None:
            vfn = value_fn

            def unstructure_dict(value: dict[str, Any]) -> dict[str, Any]:
                return {k: vfn(v) for k, v in value.items()}

            return unstructure_dict

    cache: dict[type, UnstructureHook] = {}

    def unstructure_dynamic(value: Any) -> Any:
        """Unions (content blocks …): dispatch on the runtime class."""
        cls = value.__class__
        fn = cache.get(cls)
        if fn is None:
            if cls is list:
                return [unstructure_dynamic(v) for v in value]
            if not attrs.has(cls):
                return value
            fn = cache[cls] = conv.get_unstructure_hook(cls)
        return fn(value)

    return unstructure_dynamic
