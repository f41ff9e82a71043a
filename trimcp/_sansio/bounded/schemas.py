"""JSON Schema validation of a peer's schema at a bounded cost.

Theory of operation
-------------------
A server's ``outputSchema`` and ``inputSchema`` (spec "Server features / Tools"; JSON
Schema 2020-12 unless ``$schema`` says otherwise) are validated with ``jsonschema``,
which trusts its schema.  From a peer, four things go wrong with that:

* **regular expressions**: ``pattern``, ``patternProperties`` (and the
  ``additionalProperties`` next to it) and the ``regex`` format run on Python's
  backtracking ``re``.  Here they go through ``PeerPattern`` (RE2, linear time); one it
  cannot run is *not enforced* and named in ``Verdict.unchecked``.
  ``unevaluatedProperties`` in a schema that has ``patternProperties`` anywhere is not
  enforced either: jsonschema's own annotation walk for it matches with ``re``.
* **work**: ``{"allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}`` nested twenty
  levels deep costs a million evaluations from a few hundred bytes.  Every keyword
  application is charged to a ``WorkBudget`` (``KEYWORD_UNITS``, about what one costs),
  matches by their size, ``uniqueItems`` and ``enum`` by their length; an exhausted
  budget ends the validation with ``Verdict.exhausted`` set.
* **reach**: jsonschema's default registry *fetches* a remote ``$ref`` with a blocking
  ``urlopen`` (a request to any address the schema names, from the event loop).  Here
  the registry holds only the metaschemas and retrieves nothing; a reference that does
  not resolve is not enforced.
* **echoes**: jsonschema quotes the whole instance in every message, so a schema with a
  hundred failing ``anyOf`` branches over a 10 MB value builds a gigabyte of text.  The
  schema and the instance are first copied into subclasses of ``dict``, ``list`` and
  ``str`` whose ``repr`` is ``echo.short_repr`` (a copy charged to the budget), so each
  message costs about two hundred characters.

``BoundedSchema(schema)`` reads the schema once (its metaschema check is bounded too,
with the ``regex`` format through ``PeerPattern``) and keeps ``problem`` when it cannot
be used; ``validate(instance, budget)`` returns a ``Verdict``.  A plain schema (types,
properties, required, ``plain.py``) also gets ``plain``, a check that accepts what is
certainly valid without running a validator; the rest still comes here.  The keywords find the
current budget and notes through a context variable set for the length of one
``validate`` call: jsonschema hands a keyword only its validator, its value, the
instance and the schema.
"""

from __future__ import annotations

import contextvars
import functools
import json
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

import attrs
import jsonschema
import jsonschema.exceptions
import jsonschema.validators
import referencing
import referencing.exceptions
from jsonschema_specifications import REGISTRY as _METASCHEMAS

from .budget import BudgetExhausted, WorkBudget
from .echo import quote, short_repr
from .patterns import PeerPattern
from .plain import PlainCheck, compile_plain

__all__ = [
    "KEYWORD_UNITS",
    "READ_UNITS",
    "BoundedSchema",
    "Verdict",
]

#: Units one keyword application is charged, and one step into a subschema (jsonschema
#: builds a validator and a resource for each), and a reference resolved: with these
#: a unit stayed within 0.6-1.6 us on the schemas of ``tests/sansio/test_bounded.py``'s
#: calibration list.
KEYWORD_UNITS: Final = 4
DESCEND_UNITS: Final = 6
REFERENCE_UNITS: Final = 16
#: The default budget for reading a schema (its copy and its metaschema check): a
#: schema of a thousand properties costs about 400 000.
READ_UNITS: Final = 1_000_000
#: Values (nodes) copied per unit when a schema or an instance is copied.
_NODES_PER_UNIT: Final = 4
#: Notes kept per verdict.
_MAX_NOTES: Final = 16

ValidationError = jsonschema.exceptions.ValidationError
# Only the metaschemas, and no retrieval: an unknown URI stays unresolved.
_REGISTRY: Final[referencing.Registry[Any]] = _METASCHEMAS


@attrs.frozen
class Verdict:
    """What one validation found."""

    #: The errors found (all of them up to the caller's cap, even when ``exhausted``).
    errors: tuple[ValidationError, ...]
    #: What was not enforced, and why (a pattern RE2 cannot run, an unresolved ``$ref``).
    unchecked: tuple[str, ...] = ()
    #: The budget ran out: what is not in ``errors`` was not checked.
    exhausted: bool = False

    @property
    def valid(self) -> bool:
        """No error found and the whole instance checked (``unchecked`` aside)."""
        return not self.errors and not self.exhausted

    def best(self) -> ValidationError | None:
        """The most relevant error (jsonschema's ``best_match``), or ``None``."""
        return jsonschema.exceptions.best_match(self.errors) if self.errors else None


# ---------------------------------------------------------------- quiet copies


class _QuietStr(str):
    __slots__ = ()

    def __repr__(self) -> str:
        return quote(str(self))


class _QuietList(list[Any]):
    __slots__ = ()

    def __repr__(self) -> str:
        return short_repr(self)


class _QuietDict(dict[Any, Any]):
    __slots__ = ()

    def __repr__(self) -> str:
        return short_repr(self)


def _quiet(value: Any, budget: WorkBudget) -> Any:
    """``value`` copied into the quiet types, charged by the values it holds."""
    count = [0]

    def copy(item: Any) -> Any:
        count[0] += 1
        if count[0] % 4096 == 0:
            budget.spend(4096 // _NODES_PER_UNIT)
        if isinstance(item, str):
            return _QuietStr(item)
        if isinstance(item, dict):
            return _QuietDict((_QuietStr(k) if isinstance(k, str) else k, copy(v)) for k, v in item.items())
        if isinstance(item, (list, tuple)):
            return _QuietList(copy(v) for v in item)
        return item

    out = copy(value)
    budget.spend(1 + (count[0] % 4096) // _NODES_PER_UNIT)
    return out


# ---------------------------------------------------------------- the run


@attrs.define
class _Run:
    budget: WorkBudget
    patterns: dict[str, PeerPattern]
    has_pattern_properties: bool
    notes: dict[str, None] = attrs.field(factory=dict)

    def note(self, text: str) -> None:
        if len(self.notes) < _MAX_NOTES:
            self.notes[text] = None

    def pattern(self, source: str) -> PeerPattern:
        found = self.patterns.get(source)
        if found is None:
            found = self.patterns[source] = PeerPattern(source)
            self.budget.spend(found.compile_cost)
        return found

    def enforced(self, source: str, where: str) -> PeerPattern | None:
        found = self.pattern(source)
        if found.problem is not None:
            self.note(f"{where} {quote(source, 80)} not enforced: {found.problem}")
            return None
        return found


_RUN: Final[contextvars.ContextVar[_Run]] = contextvars.ContextVar("trimcp_bounded_schema_run")


# ---------------------------------------------------------------- keywords

Keyword = Callable[[Any, Any, Any, Any], Any]


def _charged(original: Keyword, units: int = KEYWORD_UNITS) -> Keyword:
    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _RUN.get().budget.spend(units)
        return original(validator, value, instance, schema)

    return keyword


def _pattern(validator: Any, source: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    run = _RUN.get()
    run.budget.spend(KEYWORD_UNITS)
    if not isinstance(source, str) or not validator.is_type(instance, "string"):
        return
    found = run.enforced(source, "pattern")
    if found is not None and not found.search(instance, run.budget):
        yield ValidationError(f"{quote(str(instance))} does not match {quote(str(source), 80)}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    run = _RUN.get()
    run.budget.spend(KEYWORD_UNITS)
    if not validator.is_type(instance, "object") or not isinstance(patterns, Mapping):
        return
    for source, subschema in patterns.items():
        found = run.enforced(source, "patternProperties key")
        if found is None:
            continue
        for key, value in instance.items():
            if found.search(key, run.budget):
                yield from validator.descend(value, subschema, path=key, schema_path=source)


def _additional_properties(validator: Any, extra_schema: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    run = _RUN.get()
    run.budget.spend(KEYWORD_UNITS)
    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    declared = declared if isinstance(declared, Mapping) else {}
    sources = schema.get("patternProperties", {})
    patterns = []
    for source in sources if isinstance(sources, Mapping) else ():
        found = run.enforced(source, "patternProperties key")
        if found is None:
            # Which names are "additional" depends on the pattern we cannot run.
            run.note("additionalProperties next to that pattern not enforced")
            return
        patterns.append(found)
    extras = [key for key in instance if key not in declared and not any(p.search(key, run.budget) for p in patterns)]
    if validator.is_type(extra_schema, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra_schema, path=key)
    elif extra_schema is False and extras:
        shown = ", ".join(quote(str(k), 60) for k in extras[:5])
        more = f" and {len(extras) - 5} more" if len(extras) > 5 else ""
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed ({shown}{more} {verb} unexpected)")


def _unevaluated_properties(original: Keyword) -> Keyword:
    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        run = _RUN.get()
        run.budget.spend(KEYWORD_UNITS)
        if run.has_pattern_properties:
            run.note("unevaluatedProperties not enforced in a schema with patternProperties")
            return ()
        return original(validator, value, instance, schema)

    return keyword


def _identity(value: Any, budget: WorkBudget) -> Any:
    """A hashable key equal for values JSON Schema calls equal (1 == 1.0, True != 1)."""
    budget.spend(3)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, str):
        return ("s", str(value))
    if isinstance(value, dict):
        return ("o", frozenset((str(k), _identity(v, budget)) for k, v in value.items()))
    if isinstance(value, list):
        return ("a", tuple(_identity(v, budget) for v in value))
    return ("z", None)


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    # jsonschema's own check compares unhashable items pairwise: quadratic in the array.
    run = _RUN.get()
    run.budget.spend(KEYWORD_UNITS)
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _identity(item, run.budget)
        if key in seen:
            yield ValidationError(f"{short_repr(instance)} has non-unique elements")
            return
        seen.add(key)


def _enum(original: Keyword) -> Keyword:
    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _RUN.get().budget.spend(KEYWORD_UNITS + (len(value) if isinstance(value, list) else 0))
        return original(validator, value, instance, schema)

    return keyword


def _reference(original: Keyword) -> Keyword:
    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        run = _RUN.get()
        run.budget.spend(KEYWORD_UNITS + REFERENCE_UNITS)
        try:
            # Materialised here, so that a lookup that fails is caught at its own $ref.
            return list(original(validator, value, instance, schema))
        except referencing.exceptions.Unresolvable:
            run.note(f"$ref {quote(str(value), 80)} not resolved (remote references are never fetched)")
            return ()

    return keyword


_REPLACED: Final[dict[str, Keyword]] = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "uniqueItems": _unique_items,
}
_WRAPPED: Final[dict[str, Callable[[Keyword], Keyword]]] = {
    "unevaluatedProperties": _unevaluated_properties,
    "enum": _enum,
    "$ref": _reference,
    "$dynamicRef": _reference,
    "$recursiveRef": _reference,
}


def _is_regex(instance: object) -> bool:
    """The ``regex`` format through ``PeerPattern``: only a pattern neither dialect reads
    is not a regex (one using lookaround is a regex we do not run)."""
    if not isinstance(instance, str):
        return True
    run = _RUN.get(None)
    found = run.pattern(instance) if run is not None else PeerPattern(instance)
    return not found.invalid


@functools.cache
def _bounded(cls: Any) -> Any:
    """``cls`` (a jsonschema validator class) with every keyword bounded as above."""
    if getattr(cls, "_trimcp_bounded", False):
        return cls
    keywords = {}
    for name, original in cls.VALIDATORS.items():
        if name in _REPLACED:
            keywords[name] = _REPLACED[name]
        elif name in _WRAPPED:
            keywords[name] = _WRAPPED[name](original)
        else:
            keywords[name] = _charged(original)
    checker = jsonschema.FormatChecker(())
    checker.checkers = {**cls.FORMAT_CHECKER.checkers, "regex": (_is_regex, ())}
    bounded = jsonschema.validators.extend(cls, keywords, format_checker=checker)  # type: ignore[no-untyped-call]
    bounded._trimcp_bounded = True
    # jsonschema's own ``evolve`` (every ``descend`` calls it) picks the class for a
    # subschema by its ``$schema``: the registered, unbounded one.  Ours picks the same
    # dialect, bounded.
    bounded.evolve = _evolve
    return bounded


@functools.cache
def _init_fields(cls: Any) -> tuple[tuple[str, str], ...]:
    return tuple((field.name, field.alias) for field in attrs.fields(cls) if field.init)


def _evolve(self: Any, **changes: Any) -> Any:
    _RUN.get().budget.spend(DESCEND_UNITS)
    cls: Any = type(self)
    schema = changes.setdefault("schema", self.schema)
    chosen = cls
    if isinstance(schema, dict) and "$schema" in schema:
        chosen = _bounded(_validator_class(schema, default=cls))
    for name, alias in _init_fields(cls):
        if alias not in changes:
            changes[alias] = getattr(self, name)
    return chosen(**changes)


def _validator_class(schema: Any, default: Any = jsonschema.Draft202012Validator) -> Any:
    with warnings.catch_warnings():
        # jsonschema warns about a $schema it does not know, then uses the default: the
        # default (2020-12, as the spec asks) is what we want.
        warnings.simplefilter("ignore", DeprecationWarning)
        return jsonschema.validators.validator_for(schema, default=default)


def _mentions_pattern_properties(schema: Any) -> bool:
    try:
        return '"patternProperties"' in json.dumps(schema)
    except (TypeError, ValueError, RecursionError):
        return True


class BoundedSchema:
    """A peer's JSON Schema, read once and validated at a bounded cost.

    ``problem`` is ``None`` when the schema can be used, else why not (not a JSON
    Schema; reading it cost more than ``budget``).  ``formats`` asserts ``format``
    (otherwise an annotation, as 2020-12 says).
    """

    def __init__(self, schema: Any, *, formats: bool = False, budget: WorkBudget | None = None) -> None:
        self.schema = schema
        self.problem: str | None = None
        #: Reading stopped because ``budget`` ran out (a larger one may succeed).
        self.exhausted = False
        #: The schema breaks its metaschema (the peer's mistake, not our limit).
        self.invalid = False
        self._patterns: dict[str, PeerPattern] = {}
        self._has_pattern_properties = _mentions_pattern_properties(schema)
        self._validator: Any = None
        #: A check that accepts at once what is certainly valid (``plain.py``); ``None``
        #: when the schema is not plain.  Its ``False`` only means "validate in full".
        self.plain: PlainCheck | None = None
        if not isinstance(schema, (dict, bool)):
            self.invalid = True
            self.problem = "a JSON Schema is an object or a boolean"
            return
        budget = WorkBudget(READ_UNITS) if budget is None else budget
        run = _Run(budget, self._patterns, self._has_pattern_properties)
        token = _RUN.set(run)
        try:
            quiet = _quiet(schema, budget)
            cls = _bounded(_validator_class(schema))
            meta = _bounded(_validator_class(cls.META_SCHEMA))
            checker = meta(cls.META_SCHEMA, registry=_REGISTRY, format_checker=meta.FORMAT_CHECKER)
            error = jsonschema.exceptions.best_match(checker.iter_errors(quiet))
            if error is not None:
                self.invalid = True
                where = "".join(f"/{part}" for part in error.absolute_path) or "/"
                self.problem = f"not a valid JSON Schema at {where}: {error.message}"
                return
            self._validator = cls(quiet, registry=_REGISTRY, format_checker=cls.FORMAT_CHECKER if formats else None)
            self.plain = compile_plain(schema, formats=formats)
        except BudgetExhausted:
            self.exhausted = True
            self.problem = f"reading the schema would cost more than {budget.limit} work units"
        except RecursionError:
            self.problem = "the schema nests too deeply to read"
        except (
            jsonschema.exceptions.SchemaError,
            referencing.exceptions.Unresolvable,
            TypeError,
            ValueError,
        ) as exc:
            self.problem = f"jsonschema cannot use it: {quote(str(exc))}"
        finally:
            _RUN.reset(token)

    def validate(self, instance: Any, budget: WorkBudget, *, max_errors: int = 50) -> Verdict:
        """Validate ``instance``, spending ``budget``; see ``Verdict``."""
        if self._validator is None:
            raise ValueError(f"the schema cannot be used: {self.problem}")
        run = _Run(budget, self._patterns, self._has_pattern_properties)
        token = _RUN.set(run)
        errors: list[ValidationError] = []
        exhausted = False
        try:
            for error in self._validator.iter_errors(_quiet(instance, budget)):
                errors.append(error)
                if len(errors) >= max_errors:
                    break
        except BudgetExhausted:
            exhausted = True
        except RecursionError:
            run.note("the value nests too deeply to check")
            exhausted = True
        finally:
            _RUN.reset(token)
        return Verdict(errors=tuple(errors), unchecked=tuple(run.notes), exhausted=exhausted)
