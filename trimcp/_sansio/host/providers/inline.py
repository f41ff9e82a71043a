"""A tool's ``inputSchema`` with its references inlined and ``allOf`` merged: one tree, no indirection.

Theory of operation
-------------------
Spec "Server features / Tools": ``inputSchema`` is a JSON Schema (2020-12 unless ``$schema``
says otherwise) whose root is an object schema.  None of the model APIs follows a reference
the way a validator does (Gemini's OpenAPI subset has none; OpenAI's strict mode resolves
only its own ``$defs``; Anthropic rejects ``anyOf``/``oneOf``/``allOf`` at the root), so the
first step, shared by every provider, turns the schema into one self-contained tree:

* ``$ref`` is replaced by what it points to: ``#`` (the root), a JSON pointer (``#/$defs/a``,
  ``#/definitions/a``, ``#/properties/x``) or a plain-name anchor (``#name`` for a
  ``$anchor``).  A reference to anything else (another document, a URL) is never
  followed: nothing is fetched; it becomes the schema that accepts anything, with a note.
  Keywords beside ``$ref`` apply too (2020-12), merged into the target, theirs first.
* the **cycle guard**: a reference met again inside its own expansion is not expanded a
  second time; that spot accepts anything, with a note ("recursive").  The **depth cap**
  (``MAX_DEPTH`` schema levels) does the same for deep trees, and a **size cap**
  (``MAX_NODES`` schema nodes after inlining) refuses a schema that references fan out
  into millions of nodes (``{"allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}``
  nested twenty times): that tool is left out with the reason.  Every peer is a stranger.
* ``allOf`` is merged into its parent: properties joined, ``required`` united, bounds
  tightened (the larger minimum, the smaller maximum), ``enum`` intersected; what cannot be
  merged is kept from the first part, with a note.
* ``anyOf``/``oneOf`` whose branches only list required keys (``[{"required": ["phone"]},
  {"required": ["email"]}]``) constrain which keys come together, which no provider shows;
  they become a note ("needs one of: phone | email").  Keywords beside real branches are
  merged into each branch (``allOf`` distributes over ``anyOf``).
* ``not``, ``if``/``then``/``else``, ``dependentSchemas`` and ``unevaluated*`` are dropped
  with a note; ``$schema``, ``$id``, ``$comment``, the definitions, and keywords outside the
  JSON Schema vocabulary (``x-…`` extensions) are dropped silently: they tell the model
  nothing.  A keyword whose value has the wrong JSON type is dropped as if absent.
* ``true`` becomes ``{}``; ``false`` (nothing is valid) becomes ``None``, which the caller
  reads as "this cannot be sent": a property that must be absent is left out.

The result is plain JSON Schema in the vocabulary the provider modules read; the notes are
``Notes`` (``notes.py``), in the order the walk met them, so the same schema always gives the
same text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import unquote

import attrs

from ...bounded.budget import BudgetExhausted, WorkBudget
from .notes import Notes, Path

__all__ = ["MAX_DEPTH", "MAX_NODES", "Inlined", "inline_schema"]

#: Schema levels below the root that are expanded; deeper ones accept anything.
MAX_DEPTH: Final = 24
#: Schema nodes an inlined schema may have; past it the tool is left out.
MAX_NODES: Final = 20_000

ANNOTATIONS: Final = frozenset({"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"})
#: Keywords whose value is not a schema, with the JSON type it must have.
VALUE_KEYWORDS: Final[Mapping[str, type | tuple[type, ...]]] = {
    "type": (str, list),
    "enum": list,
    "format": str,
    "pattern": str,
    "minLength": int,
    "maxLength": int,
    "minimum": (int, float),
    "maximum": (int, float),
    "exclusiveMinimum": (int, float),
    "exclusiveMaximum": (int, float),
    "multipleOf": (int, float),
    "minItems": int,
    "maxItems": int,
    "uniqueItems": bool,
    "minContains": int,
    "maxContains": int,
    "required": list,
    "minProperties": int,
    "maxProperties": int,
    "dependentRequired": dict,
    "contentEncoding": str,
    "contentMediaType": str,
    "nullable": bool,
    "title": str,
    "description": str,
    "examples": list,
    "deprecated": bool,
    "readOnly": bool,
    "writeOnly": bool,
}
#: Keywords dropped with a note: the model cannot be shown them.
DROPPED: Final[Mapping[str, str]] = {
    "not": "must not match a schema",
    "if": "conditional rules (if/then/else)",
    "dependentSchemas": "rules that depend on other keys",
    "unevaluatedProperties": "no keys beyond those described",
    "unevaluatedItems": "no items beyond those described",
}
_SILENT: Final = frozenset({"then", "else", "$defs", "definitions", "additionalItems"})
_LOWER: Final = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
_UPPER: Final = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
_JSON_TYPES: Final = ("string", "number", "integer", "boolean", "object", "array", "null")


@attrs.frozen
class Inlined:
    """The inlined schema (``None`` when nothing can be sent), its notes, or why it is unusable."""

    schema: dict[str, Any] | None
    notes: Notes
    problem: str | None = None


def inline_schema(schema: Mapping[str, Any], *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> Inlined:
    """``schema`` as one tree; see the module docstring."""
    walker = _Walker(schema, max_depth, max_nodes)
    try:
        node = walker.walk(dict(schema), (), 0, ())
    except BudgetExhausted:
        return Inlined(
            None, walker.notes, f"the schema has more than {max_nodes} nodes once its references are inlined"
        )
    except RecursionError:  # a pathological nesting of plain objects, deeper than the interpreter allows
        return Inlined(None, walker.notes, "the schema is nested too deeply to read")
    return Inlined(node, walker.notes)


def _anchors(node: Any, out: dict[str, Any], depth: int = 0) -> None:
    """Every ``$anchor`` of the document, by name (the first one wins)."""
    if depth > 64:
        return
    if isinstance(node, dict):
        anchor = node.get("$anchor")
        if isinstance(anchor, str):
            out.setdefault(anchor, node)
        for value in node.values():
            _anchors(value, out, depth + 1)
    elif isinstance(node, list):
        for value in node:
            _anchors(value, out, depth + 1)


class _Walker:
    def __init__(self, root: Mapping[str, Any], max_depth: int, max_nodes: int) -> None:
        self.root = root
        self.max_depth = max_depth
        self.nodes = WorkBudget(max_nodes)  # one unit a node
        self.notes = Notes()
        self.anchors: dict[str, Any] = {}
        _anchors(root, self.anchors)

    def resolve(self, ref: str) -> Any:
        """The node ``ref`` points to in this document, or ``None``."""
        if not ref.startswith("#"):
            return None
        fragment = unquote(ref[1:])
        if fragment == "":
            return self.root
        if not fragment.startswith("/"):
            return self.anchors.get(fragment)
        node: Any = self.root
        for token in fragment[1:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node

    def walk(self, node: Any, path: Path, depth: int, stack: tuple[str, ...]) -> dict[str, Any] | None:
        self.nodes.spend(1)
        if node is True:
            return {}
        if node is False:
            return None
        if not isinstance(node, dict):
            return {}  # not a schema: read as the schema that accepts anything
        if depth > self.max_depth:
            self.notes.add(path, f"nested deeper than {self.max_depth} levels: not described")
            return {}
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._reference(node, ref, path, depth, stack)
        out: dict[str, Any] = {}
        for key, value in node.items():
            self._keyword(out, key, value, path, depth, stack)
        return self._settle(out, node, path, depth, stack)

    def _reference(
        self, node: dict[str, Any], ref: str, path: Path, depth: int, stack: tuple[str, ...]
    ) -> dict[str, Any] | None:
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if ref in stack:
            self.notes.add(path, "recursive: described once, not again inside itself")
            target: dict[str, Any] | None = {}
        else:
            found = self.resolve(ref)
            if found is None:
                self.notes.add(path, f"refers to {ref[:80]}, which is not followed")
                target = {}
            else:
                target = self.walk(found, path, depth, (*stack, ref))
        rest = self.walk(siblings, path, depth, stack) if siblings else {}
        if target is None or rest is None:
            return None
        return merge(rest, target, self.notes, path)

    def _keyword(
        self, out: dict[str, Any], key: str, value: Any, path: Path, depth: int, stack: tuple[str, ...]
    ) -> None:
        below = depth + 1
        if key in VALUE_KEYWORDS:
            # bool is an int to Python, never to JSON Schema: ``"minLength": true`` is no bound
            if isinstance(value, VALUE_KEYWORDS[key]) and (key in _BOOLEANS or not isinstance(value, bool)):
                out[key] = value
            return
        if key == "const":
            out[key] = value
        elif key == "default":
            out[key] = value
        elif key in ("properties", "patternProperties") and isinstance(value, dict):
            props: dict[str, Any] = {}
            for name, sub in value.items():
                walked = self.walk(sub, (*path, str(name)), below, stack)
                props[str(name)] = walked if walked is not None else False
            out[key] = props
        elif key == "items" and isinstance(value, list):  # draft-07 tuple form
            out["prefixItems"] = [self.walk(sub, (*path, f"[{i}]"), below, stack) for i, sub in enumerate(value)]
        elif key in ("items", "additionalProperties", "propertyNames", "contains") and isinstance(value, dict | bool):
            walked = self.walk(value, (*path, "[]") if key == "items" else path, below, stack)
            out[key] = walked if walked is not None else False
        elif key == "prefixItems" and isinstance(value, list):
            out[key] = [self.walk(sub, (*path, f"[{i}]"), below, stack) for i, sub in enumerate(value)]
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list) and value:
            out[key] = [self.walk(sub, path, below, stack) for sub in value]
        elif key in DROPPED:
            self.notes.add(path, DROPPED[key])
        # everything else ($schema, $id, $comment, the definitions, x-… extensions) says nothing to a model

    def _settle(
        self, out: dict[str, Any], original: dict[str, Any], path: Path, depth: int, stack: tuple[str, ...]
    ) -> dict[str, Any] | None:
        """Merge ``allOf``, read ``oneOf`` as ``anyOf``, and turn key-only alternatives into a note."""
        parts = out.pop("allOf", None)
        if parts is not None:
            if any(part is None for part in parts):
                return None
            for part in parts:
                out = merge(out, part, self.notes, path)
        for key in ("oneOf", "anyOf"):
            branches = out.pop(key, None)
            if branches is None:
                continue
            real = [b for b in branches if b is not None]
            if not real:
                return None
            if all(_key_only(b) for b in real):
                self.notes.add(path, "needs one of: " + " | ".join(_key_sets(real)))
                continue
            if "anyOf" in out:  # both anyOf and oneOf: the second joins the first as a constraint note
                self.notes.add(path, f"also matches one of {len(real)} other alternatives")
                continue
            siblings = {k: v for k, v in out.items() if k not in ANNOTATIONS}
            if siblings:
                real = [merge(b, siblings, self.notes, path) for b in real]
                out = {k: v for k, v in out.items() if k in ANNOTATIONS}
            out["anyOf"] = real
        return out


_BOOLEANS: Final = frozenset({"uniqueItems", "nullable", "deprecated", "readOnly", "writeOnly"})
_STRUCTURAL: Final = frozenset({"type", "properties", "items", "prefixItems", "enum", "const", "anyOf", "format"})


def _key_only(branch: dict[str, Any]) -> bool:
    """A branch that only says which keys are required (and what describes it)."""
    return "required" in branch and not (set(branch) - ANNOTATIONS - {"required"}) and not (_STRUCTURAL & set(branch))


def _key_sets(branches: list[dict[str, Any]]) -> list[str]:
    return [", ".join(str(k) for k in b.get("required", [])) or "(nothing)" for b in branches]


def _types(node: dict[str, Any]) -> list[str] | None:
    kind = node.get("type")
    if kind is None:
        return None
    kinds = [kind] if isinstance(kind, str) else [k for k in kind if isinstance(k, str)]
    return [k for k in kinds if k in _JSON_TYPES]


def merge(first: dict[str, Any], second: dict[str, Any], notes: Notes, path: Path) -> dict[str, Any]:
    """The schema both ``first`` and ``second`` describe, as far as keywords merge; ``first``
    wins where they cannot (annotations, conflicting keywords, with a note for the latter)."""
    out = dict(first)
    for key, value in second.items():
        if key not in out:
            out[key] = value
            continue
        mine = out[key]
        if mine == value or key in ANNOTATIONS:
            continue
        if key == "properties":
            props = dict(mine)
            for name, sub in value.items():
                if name in props and isinstance(props[name], dict) and isinstance(sub, dict):
                    props[name] = merge(props[name], sub, notes, (*path, name))
                elif name in props and (props[name] is False or sub is False):
                    props[name] = False
                else:
                    props.setdefault(name, sub)
            out[key] = props
        elif key == "required":
            out[key] = list(dict.fromkeys([*mine, *value]))
        elif key == "type":
            a, b = _types(out) or [], _types(second) or []
            both = [k for k in a if k in b or (k == "integer" and "number" in b)]
            both += [k for k in b if k == "integer" and "number" in a and k not in both]
            out[key] = both[0] if len(both) == 1 else both
        elif key in _LOWER and isinstance(mine, int | float):
            out[key] = max(mine, value)
        elif key in _UPPER and isinstance(mine, int | float):
            out[key] = min(mine, value)
        elif key == "enum":
            out[key] = [v for v in mine if v in value]
        elif key == "additionalProperties" and (mine is False or value is False):
            out[key] = False
        elif key == "uniqueItems":
            out[key] = bool(mine or value)
        else:
            notes.add(path, f"also: {key} {notes.show(value)}")
    return out
