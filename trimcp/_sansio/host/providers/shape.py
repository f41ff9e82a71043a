"""Reshaping an inlined schema into the subset one provider accepts: one walker, one table per provider.

Theory of operation
-------------------
What a provider accepts is data: a ``Dialect`` (the keywords kept for each JSON type, the
annotations kept, the formats, whether every node needs a ``type``, whether objects are
closed, ...).  The provider modules (``anthropic.py``, ``openai.py``, ``gemini.py``) each
hold their table and cite the documentation it comes from (a dialect that keeps every
constraint keyword names ``KEYWORDS_BY_TYPE``); ``shape_arguments`` walks an
inlined schema (``inline.py``) once under a table:

* a keyword the dialect keeps is kept; a constraint it does not is dropped with a note
  (``notes.py``) so the model still reads the rule; a ``format`` outside the dialect's list
  likewise;
* a part the dialect cannot express is *narrowed*, never widened, where that is possible,
  so that whatever the model sends still satisfies the server's schema: an optional
  property that cannot be described is left out (with a note), an alternative of an
  ``anyOf`` that cannot be described is left out, a value of any JSON type becomes "text,
  a number or true/false" in a dialect that needs a ``type`` on every node.  When a
  *required* part cannot be described, its object cannot either, up to the root: then the
  whole tool cannot be offered and ``shape_arguments`` returns the reason;
* ``strict`` dialects (OpenAI strict mode) list every property in ``required``, make the
  optional ones nullable, and close every object (``additionalProperties: false``).  The
  model then sends ``null`` for a property it means to leave out; ``Repair`` (``repair.py``)
  records where a ``null`` was introduced so the call's arguments are mapped back before
  they reach the server, which may not accept ``null`` there;
* the root is an object whatever the dialect (MCP requires it, every provider too): the
  alternatives of a root ``anyOf`` are joined into one object whose keys are those of all
  alternatives and whose required keys are those every alternative requires, with a note
  (a widening the server's answer will correct; no provider takes a root union).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from .inline import ANNOTATIONS
from .notes import Notes, Path
from .repair import NullPlan

__all__ = ["KEYWORDS_BY_TYPE", "Dialect", "Shaped", "accepts_null", "shape_arguments"]

JSON_TYPES: Final = ("string", "number", "integer", "boolean", "object", "array", "null")
#: Keywords the walker handles itself (the structure), never copied blindly.
STRUCTURE: Final = frozenset(
    {"type", "enum", "const", "anyOf", "properties", "required", "additionalProperties", "items", "nullable"}
)
#: Keywords worth a note when dropped (they constrain what the server accepts).
CONSTRAINTS: Final = frozenset(
    {
        "format",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "prefixItems",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "patternProperties",
        "dependentRequired",
        "contentEncoding",
        "contentMediaType",
    }
)
#: Every constraint keyword, by the JSON type it constrains: the table of a dialect that keeps
#: them all (Anthropic, OpenAI without strict mode), and what ``_applies`` reads.
KEYWORDS_BY_TYPE: Final[Mapping[str, frozenset[str]]] = {
    "string": frozenset({"format", "pattern", "minLength", "maxLength", "contentEncoding", "contentMediaType"}),
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"}),
    "integer": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"}),
    "array": frozenset(
        {"minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains", "prefixItems"}
    ),
    "object": frozenset({"minProperties", "maxProperties", "propertyNames", "patternProperties", "dependentRequired"}),
}
#: What "any JSON value" narrows to in a dialect that needs a type on every node.
SCALARS: Final = ("string", "number", "boolean")


@attrs.frozen
class Dialect:
    """The schema subset one provider accepts (see the module docstring)."""

    name: str
    #: Constraint keywords kept, by JSON type.
    keywords: Mapping[str, frozenset[str]]
    #: Annotation keywords kept (``description`` always should be).
    annotations: frozenset[str]
    #: Formats kept, by JSON type; ``None``: every format is kept.
    formats: Mapping[str, frozenset[str]] | None = None
    #: Every node needs a ``type`` (or ``anyOf``): "any value" is narrowed to scalars.
    typed: bool = False
    #: Every property required, optional ones nullable, every object closed.
    strict: bool = False
    #: An object without described properties (a map of free keys) can be expressed.
    free_objects: bool = True
    #: An array needs ``items`` (given as ``{}`` when the dialect is untyped).
    items_required: bool = False
    #: The types an ``enum`` may sit on (``None``: any type); values of other types are dropped.
    enum_types: frozenset[str] | None = None
    #: ``const`` is written as a one-value ``enum``.
    const_as_enum: bool = False
    #: ``type`` may be a list (otherwise several types become an ``anyOf``).
    type_lists: bool = True
    #: Null is said with ``nullable: true`` rather than a ``"null"`` type.
    null_flag: bool = False
    #: Objects nested deeper than this cannot be expressed (``None``: no limit).
    max_object_depth: int | None = None
    #: ``additionalProperties`` (a schema) and ``patternProperties`` are kept.
    extra_keys: bool = True
    #: A schema may be ``{"type": "null"}`` alone (strict mode documents null only beside a type).
    null_alone: bool = True


@attrs.frozen
class Shaped:
    """The root object schema for the provider, the notes, the null plan, or why not."""

    schema: dict[str, Any] | None
    notes: Notes
    nulls: NullPlan | None = None
    problem: str | None = None


def accepts_null(node: Any) -> bool:
    """Whether the inlined schema ``node`` already allows ``null``."""
    if not isinstance(node, dict):
        return node is not False
    if node.get("nullable") is True:
        return True
    if "anyOf" in node:
        return any(accepts_null(b) for b in node["anyOf"])
    if "const" in node:
        return node["const"] is None
    if "enum" in node:
        return None in node["enum"]
    kinds = _types(node)
    return kinds is None or "null" in kinds


def _types(node: dict[str, Any]) -> list[str] | None:
    kind = node.get("type")
    if kind is None:
        return None
    kinds = [kind] if isinstance(kind, str) else [k for k in kind if isinstance(k, str)]
    return list(dict.fromkeys(k for k in kinds if k in JSON_TYPES))


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _fits(value: Any, kind: str) -> bool:
    found = _kind_of(value)
    return found == kind or (kind == "number" and found == "integer") or (kind == "integer" and _integral(value))


def _integral(value: Any) -> bool:
    return isinstance(value, float) and value.is_integer()


def _inferred(node: dict[str, Any]) -> list[str] | None:
    """The types a node without ``type`` implies by its keywords or values (``None``: any)."""
    if "const" in node:
        return [_kind_of(node["const"])]
    if "enum" in node:
        return list(dict.fromkeys(_kind_of(v) for v in node["enum"])) or None
    if {"properties", "required", "additionalProperties", "patternProperties"} & set(node):
        return ["object"]
    if {"items", "prefixItems"} & set(node):
        return ["array"]
    return None


class _Walker:
    def __init__(self, dialect: Dialect, notes: Notes) -> None:
        self.d = dialect
        self.notes = notes

    # ------------------------------------------------------------------ any node

    def node(self, node: Any, path: Path, depth: int) -> tuple[dict[str, Any] | None, NullPlan | None]:
        """The node for the dialect (``None``: it cannot be expressed) and its null plan."""
        if node is False:
            return None, None
        if not isinstance(node, dict):
            node = {}
        kept = self._annotations(node, path)
        if "anyOf" in node:
            return self._union(node["anyOf"], kept, path, depth)
        kinds = _types(node)
        if kinds is None:
            kinds = _inferred(node)
        if node.get("nullable") is True and kinds is not None and "null" not in kinds:
            kinds = [*kinds, "null"]
        if kinds is None:
            return self._any(node, kept, path), None
        nullable = "null" in kinds
        kinds = [k for k in kinds if k != "null"]
        if not kinds:
            return ({**kept, "type": "null"} if self.d.null_alone else None), None
        if len(kinds) > 1 and not self.d.type_lists:
            branches, plans = [], []
            for kind in kinds:
                shaped, plan = self.typed(node, kind, {}, path, depth)
                if shaped is not None:
                    branches.append(shaped)
                    plans.append(plan)
            if not branches:
                return None, None
            out: dict[str, Any] = {**kept, "anyOf": branches} if len(branches) > 1 else {**branches[0], **kept}
            plan = NullPlan.of_branches(plans) if len(branches) > 1 else plans[0]
        elif len(kinds) > 1:
            out, plan = self._several(node, kinds, kept, path, depth)
        else:
            shaped, plan = self.typed(node, kinds[0], kept, path, depth)
            if shaped is None:
                return None, None
            out = shaped
        return (self.nullable(out) if nullable else out), plan

    def _annotations(self, node: dict[str, Any], path: Path) -> dict[str, Any]:
        kept = {k: node[k] for k in ANNOTATIONS if k in node and k in self.d.annotations}
        if "default" in node and "default" not in self.d.annotations:
            self.notes.add(path, f"default {self.notes.show(node['default'])}")
        return kept

    def _any(self, node: dict[str, Any], kept: dict[str, Any], path: Path) -> dict[str, Any]:
        if not self.d.typed:
            return kept
        self.notes.add(path, "any JSON value; offered as text, a number or true/false")
        return {**kept, "anyOf": [{"type": kind} for kind in SCALARS]}

    def _several(
        self, node: dict[str, Any], kinds: list[str], kept: dict[str, Any], path: Path, depth: int
    ) -> tuple[dict[str, Any], NullPlan | None]:
        """A ``type`` list kept as a list: each type's own keywords are merged in."""
        out: dict[str, Any] = dict(kept)
        plan: NullPlan | None = None
        for kind in kinds:
            shaped, sub = self.typed(node, kind, {}, path, depth)
            if shaped is None:
                continue
            plan = plan or sub
            for key, value in shaped.items():
                if key != "type":
                    out.setdefault(key, value)
        out["type"] = kinds
        return out, plan

    def _union(
        self, branches: list[Any], kept: dict[str, Any], path: Path, depth: int
    ) -> tuple[dict[str, Any] | None, NullPlan | None]:
        shaped: list[dict[str, Any]] = []
        plans: list[NullPlan | None] = []
        nullable = False
        dropped = 0
        for branch in branches:
            if isinstance(branch, dict) and _types(branch) == ["null"] and "anyOf" not in branch:
                nullable = True
                continue
            out, plan = self.node(branch, path, depth)
            if out is None:
                dropped += 1
                continue
            shaped.append(out)
            plans.append(plan)
        if dropped:
            self.notes.add(path, f"{dropped} of {len(branches)} alternatives omitted")
        if not shaped:
            return ({**kept, "type": "null"}, None) if nullable and self.d.null_alone else (None, None)
        if len(shaped) == 1:
            merged = {**shaped[0], **{k: v for k, v in kept.items() if k not in shaped[0] or k == "description"}}
            return (self.nullable(merged) if nullable else merged), plans[0]
        out = {**kept, "anyOf": shaped}
        return (self.nullable(out) if nullable else out), NullPlan.of_branches(plans)

    def nullable(self, out: dict[str, Any]) -> dict[str, Any]:
        """``out`` accepting ``null`` as well, the dialect's way."""
        out = dict(out)
        if self.d.null_flag:
            out["nullable"] = True
            return out
        if "anyOf" in out:
            if not any(b.get("type") == "null" for b in out["anyOf"]):
                out["anyOf"] = [*out["anyOf"], {"type": "null"}]
            return out
        kind = out.get("type")
        if kind is None:
            return out  # no type: null is accepted already
        kinds = [kind] if isinstance(kind, str) else list(kind)
        if "null" not in kinds:
            out["type"] = [*kinds, "null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out

    # ------------------------------------------------------------------ one type

    def typed(
        self, node: dict[str, Any], kind: str, kept: dict[str, Any], path: Path, depth: int
    ) -> tuple[dict[str, Any] | None, NullPlan | None]:
        out: dict[str, Any] = {"type": kind, **kept}
        if not self._values(node, kind, out, path):
            return None, None
        allowed = self.d.keywords.get(kind, frozenset())
        for key, value in node.items():
            if key in STRUCTURE or key in ANNOTATIONS or key not in CONSTRAINTS:
                continue
            if not _applies(key, kind):
                continue
            if key in allowed and (key != "format" or self._format_ok(kind, value)):
                out[key] = value
            else:
                self.notes.add(path, f"{key} {self.notes.show(value)}")
        if kind == "array":
            return self._array(node, out, path, depth)
        if kind == "object":
            return self._object(node, out, path, depth)
        return out, None

    def _format_ok(self, kind: str, value: Any) -> bool:
        if self.d.formats is None:
            return True
        return value in self.d.formats.get(kind, frozenset())

    def _values(self, node: dict[str, Any], kind: str, out: dict[str, Any], path: Path) -> bool:
        """``enum``/``const`` for this type; ``False`` when no value of the type is left."""
        if "const" in node:
            values, key = [node["const"]], "const"
        elif "enum" in node:
            values, key = list(node["enum"]), "enum"
        else:
            return True
        fitting = [v for v in values if _fits(v, kind)]
        if not fitting:
            return False
        if self.d.enum_types is not None and kind not in self.d.enum_types:
            shown = self.notes.show(fitting[0]) if len(fitting) == 1 else self.notes.show(fitting)
            self.notes.add(path, f"must be {shown}" if len(fitting) == 1 else f"one of {shown}")
            return True
        if key == "const" and not self.d.const_as_enum:
            out["const"] = fitting[0]
        else:
            out["enum"] = fitting
        return True

    def _array(
        self, node: dict[str, Any], out: dict[str, Any], path: Path, depth: int
    ) -> tuple[dict[str, Any] | None, NullPlan | None]:
        items = node.get("items")
        if items is False:  # no item is valid: only the empty array
            if self.d.typed:
                return None, None
            out["maxItems"] = 0
            if self.d.items_required:
                out["items"] = {}
            return out, None
        if items is None and "prefixItems" in node and "prefixItems" not in out:
            items = {"anyOf": [p for p in node["prefixItems"] if p is not None]} if node["prefixItems"] else {}
        if items is None and not self.d.typed and not self.d.items_required:
            return out, None
        shaped, plan = self.node(items if items is not None else {}, (*path, "[]"), depth)
        if shaped is None:
            return None, None
        out["items"] = shaped
        return out, NullPlan.of_items(plan)

    def _object(
        self, node: dict[str, Any], out: dict[str, Any], path: Path, depth: int
    ) -> tuple[dict[str, Any] | None, NullPlan | None]:
        if self.d.max_object_depth is not None and depth >= self.d.max_object_depth:
            self.notes.add(path, f"nested deeper than {self.d.max_object_depth} objects")
            return None, None
        described = dict(node.get("properties") or {})
        required = [r for r in node.get("required", []) if isinstance(r, str)]
        for name in required:  # a required key with no schema: a property of any value
            described.setdefault(name, {})
        props: dict[str, Any] = {}
        plans: dict[str, tuple[bool, NullPlan | None]] = {}
        for name, sub in described.items():
            if sub is False:  # the key must be absent
                if name in required:
                    return None, None
                continue
            shaped, plan = self.node(sub, (*path, name), depth + 1)
            if shaped is None:
                if name in required:
                    self.notes.add((*path, name), f"cannot be described for {self.d.name}")
                    return None, None
                self.notes.add((*path, name), f"omitted: cannot be described for {self.d.name}")
                continue
            introduced = False
            if self.d.strict and name not in required and not accepts_null(sub):
                shaped = self.nullable(shaped)
                introduced = True
            props[name] = shaped
            if introduced or plan is not None:
                plans[name] = (introduced, plan)
        extra = node.get("additionalProperties")
        if not props and depth > 0 and not self.d.free_objects:
            return None, None
        if self.d.strict:
            out["properties"] = props
            out["required"] = list(props)
            out["additionalProperties"] = False
            if props and (isinstance(extra, dict) or extra is True or "patternProperties" in node):
                self.notes.add(path, "other keys are accepted but not offered")
            elif not props and extra is not False:
                self.notes.add(path, "free-form object; only {} is offered")
        else:
            out["properties"] = props
            kept_required = [r for r in required if r in props]
            if kept_required:
                out["required"] = kept_required
            if extra is False:
                if self.d.extra_keys:
                    out["additionalProperties"] = False
            elif isinstance(extra, dict) and self.d.extra_keys:
                shaped_extra, _ = self.node(extra, (*path, "*"), depth + 1)
                if shaped_extra is not None:
                    out["additionalProperties"] = shaped_extra
            elif (isinstance(extra, dict) or "patternProperties" in node) and props:
                self.notes.add(path, "other keys are accepted but not offered")
        return out, NullPlan.of_properties(plans)


def _applies(keyword: str, kind: str) -> bool:
    """Whether ``keyword`` constrains values of ``kind`` (a string bound says nothing of a number)."""
    return keyword in KEYWORDS_BY_TYPE.get(kind, frozenset())


def shape_arguments(inlined: dict[str, Any] | None, dialect: Dialect, notes: Notes) -> Shaped:
    """The root object schema of a tool's arguments for ``dialect``; see the module docstring."""
    if inlined is None:
        return Shaped(None, notes, problem="the input schema accepts no value at all")
    root = dict(inlined)
    kinds = _types(root) or _inferred(root)
    if kinds is not None and "object" not in kinds:
        return Shaped(None, notes, problem=f"the input schema is not an object schema (type {kinds})")
    if "anyOf" in root:
        root = _joined(root, notes)
    root.pop("nullable", None)
    root["type"] = "object"
    walker = _Walker(dialect, notes)
    shaped, plan = walker.typed(root, "object", walker._annotations(root, ()), (), 0)
    if shaped is None:
        return Shaped(None, notes, problem=f"a required argument cannot be described for {dialect.name}")
    return Shaped(shaped, notes, plan)


def _joined(root: dict[str, Any], notes: Notes) -> dict[str, Any]:
    """A root ``anyOf`` of object shapes as one object: every key offered, the common ones required."""
    branches = [b for b in root.pop("anyOf") if isinstance(b, dict)]
    props: dict[str, Any] = dict(root.get("properties") or {})
    required: set[str] | None = None
    for branch in branches:
        for name, sub in (branch.get("properties") or {}).items():
            props.setdefault(name, sub)
        names = {r for r in branch.get("required", []) if isinstance(r, str)}
        required = names if required is None else required & names
    notes.add((), f"one of {len(branches)} shapes; their keys are offered together")
    out = {k: v for k, v in root.items() if k != "properties"}
    out["properties"] = props
    base = [r for r in root.get("required", []) if isinstance(r, str)]
    out["required"] = list(dict.fromkeys([*base, *sorted(required or ())]))
    return out
