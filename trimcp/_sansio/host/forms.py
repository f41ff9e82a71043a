"""Form-mode elicitation: read a ``requestedSchema`` and check the values given for it.

Theory of operation
-------------------
Spec "Client features / Elicitation", form mode, revisions 2025-06-18, 2025-11-25 and
2026-07-28 (``PrimitiveSchemaDefinition`` in each ``schema.json``; SEP-1034 defaults,
SEP-1330 enums).  A requested schema is a flat object whose properties are primitive
schemas; ``form_fields`` reads it once into ``FormField`` values (one per property, with
its kind: string, number, integer, boolean, enum or multi), collecting what is unusable
instead of raising, and ``validate_form`` checks a content dict against those fields:

* text from a person or a file is coerced to the field's type (``"3"`` -> 3 for an
  integer, ``"yes"``/``"off"`` for a boolean, an enum option's title to its value) and a
  coerced value validates to itself, so validating twice changes nothing;
* an optional field that is absent gets its schema's ``default`` (SEP-1034) when that
  default is itself valid; a given value is never replaced;
* a field whose value is wrong gets one message in ``errors`` under its name; problems
  of the form as a whole (a schema that is not a flat object of primitives, a required
  name with no property) are under the key ``""``;
* fields that the schema does not name are dropped and listed in ``ignored``: the answer
  must carry only what the server asked for (a name the user did not see must not leak),
  and the caller can still warn about a misspelt key.

A ``pattern`` is the server's, so it runs in RE2 through ``bounded.patterns`` (linear
time) and every match is charged to one ``WorkBudget`` per call (``FORM_UNITS`` by
default, about 50 ms): a pattern RE2 cannot run, or a match the budget cannot pay for,
is not checked, and ``FormResult.unchecked`` says so per field (``FormField.
pattern_problem`` says it for a pattern before any value is typed).  The server still
validates what it gets; the client only must not stall on the way.

Dates are strict here: ``date`` is ``YYYY-MM-DD`` and ``date-time`` is RFC 3339 with an
offset.  Natural-language dates need a parser and are ``trimcp.host.form_dates``' job, which
calls ``is_iso_date`` to know which values to hand it.  No I/O and no clock: ``now`` is
accepted for the checks that would need it and none of the spec's schemas has one yet.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

import attrs

from ..bounded.budget import BudgetExhausted, WorkBudget
from ..bounded.patterns import peer_pattern

__all__ = [
    "FORM",
    "FORM_UNITS",
    "FieldKind",
    "FormField",
    "FormResult",
    "form_fields",
    "is_iso_date",
    "looks_iso",
    "validate_form",
]

#: The key of ``FormResult.errors`` for problems of the form as a whole.
FORM: Final = ""
#: Work units one call may spend matching patterns (about 50 ms of CPU).
FORM_UNITS: Final = 50_000

FieldKind: TypeAlias = Literal["string", "number", "integer", "boolean", "enum", "multi"]

_FORMATS: Final = ("email", "uri", "date", "date-time")
_TRUE: Final = frozenset({"yes", "y", "true", "1", "on"})
_FALSE: Final = frozenset({"no", "n", "false", "0", "off"})
# local@domain: no spaces, one @, dot-separated domain labels (a bare host is legal in RFC 5321).
_EMAIL: Final = re.compile(
    r"[^@\s]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
)
# RFC 3986 absolute URI: a scheme, a colon, then no whitespace.
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")
_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME: Final = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})")
_INTEGER: Final = re.compile(r"[+-]?\d+(?:\.0*)?")


@attrs.frozen(kw_only=True)
class FormField:
    """One property of a requested schema, read: what a form shows and what it checks."""

    name: str
    kind: FieldKind
    required: bool = False
    title: str | None = None
    description: str | None = None
    #: The schema's ``default`` when it is valid for the field (else ``None``).
    default: Any = None
    #: ``(value, label)`` per option, for ``enum`` and ``multi``.
    choices: tuple[tuple[str, str], ...] = ()
    format: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    #: Why ``pattern`` is not checked (RE2 cannot run it), or ``None`` when it is.
    pattern_problem: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None

    def constraints(self) -> list[str]:
        """The field's limits in words, for a form to show."""
        out: list[str] = []
        if self.format:
            out.append(
                f"format {self.format}"
                + {"date": " (YYYY-MM-DD)", "date-time": " (YYYY-MM-DDTHH:MM:SS+HH:MM)"}.get(self.format, "")
            )
        for label, value in (
            ("at least {} characters", self.min_length),
            ("at most {} characters", self.max_length),
            ("at least {}", self.minimum),
            ("at most {}", self.maximum),
            ("at least {} choices", self.min_items),
            ("at most {} choices", self.max_items),
        ):
            if value is not None:
                out.append(label.format(_show_number(value)))
        if self.pattern is not None:
            unchecked = f" (not checked: {self.pattern_problem})" if self.pattern_problem else ""
            out.append(f"matching /{self.pattern}/{unchecked}")
        return out


@attrs.frozen(kw_only=True)
class FormResult:
    """``validate_form``'s answer: coerced ``content`` and one message per wrong field."""

    #: The values as they should be sent: coerced, defaults added, unknown names dropped
    #: (with errors, only the fields that passed).
    content: dict[str, Any]
    #: Field name -> message (``FORM`` for the form as a whole); empty when valid.
    errors: dict[str, str]
    #: Names in the given content that the schema does not have (dropped).
    ignored: tuple[str, ...] = ()
    #: Field name -> why its pattern was not checked (see the module docstring).
    unchecked: dict[str, str] = attrs.field(factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors


def _show_number(value: float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _count(raw: Mapping[str, Any], key: str, problems: list[str]) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problems.append(f"{key} must be a non-negative integer")
        return None
    return value


def _bound(raw: Mapping[str, Any], key: str, problems: list[str]) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        problems.append(f"{key} must be a number")
        return None
    return value


def _text(raw: Mapping[str, Any], key: str, problems: list[str]) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        problems.append(f"{key} must be a string")
        return None
    return value


def _options(raw: Any, problems: list[str], where: str) -> tuple[tuple[str, str], ...]:
    """``[{"const", "title"}, ...]`` (titled enums) as ``(value, label)`` pairs."""
    if not isinstance(raw, list) or not raw:
        problems.append(f"{where} must be a non-empty list of {{const, title}} options")
        return ()
    out: list[tuple[str, str]] = []
    for option in raw:
        if not isinstance(option, Mapping) or not isinstance(option.get("const"), str):
            problems.append(f"every option of {where} needs a string const")
            return ()
        title = option.get("title")
        out.append((option["const"], title if isinstance(title, str) else option["const"]))
    return tuple(out)


def _plain(raw: Any, labels: Any, problems: list[str], where: str) -> tuple[tuple[str, str], ...]:
    """An ``enum`` list (with the legacy parallel ``enumNames``) as ``(value, label)`` pairs."""
    if not isinstance(raw, list) or not raw or not all(isinstance(v, str) for v in raw):
        problems.append(f"{where} must be a non-empty list of strings")
        return ()
    if isinstance(labels, list) and len(labels) == len(raw) and all(isinstance(v, str) for v in labels):
        return tuple(zip(raw, labels))
    return tuple((v, v) for v in raw)


@attrs.define
class _Checks:
    """What one call spends on patterns, and which fields' patterns it could not check."""

    budget: WorkBudget
    unchecked: dict[str, str] = attrs.field(factory=dict)


def _read_field(name: str, raw: Any, required: bool, checks: _Checks) -> tuple[FormField | None, str | None]:
    if not isinstance(raw, Mapping):
        return None, "the server's schema for this field is not an object"
    problems: list[str] = []
    kind_of = raw.get("type")
    common: dict[str, Any] = {
        "name": name,
        "required": required,
        "title": _text(raw, "title", problems),
        "description": _text(raw, "description", problems),
    }
    kind: FieldKind
    extra: dict[str, Any] = {}
    if kind_of == "string" and ("enum" in raw or "oneOf" in raw):
        kind = "enum"
        extra["choices"] = (
            _options(raw["oneOf"], problems, "oneOf")
            if "oneOf" in raw
            else _plain(raw["enum"], raw.get("enumNames"), problems, "enum")
        )
    elif kind_of == "string":
        kind = "string"
        fmt = raw.get("format")
        if fmt is not None and fmt not in _FORMATS:
            problems.append(f"unknown format {fmt!r} (the spec allows {', '.join(_FORMATS)})")
        pattern = _text(raw, "pattern", problems)
        if pattern is not None:
            compiled = peer_pattern(pattern)
            if compiled.invalid:
                problems.append(f"pattern {pattern!r} does not compile as a regular expression")
            extra["pattern_problem"] = compiled.problem
        extra.update(
            format=fmt if fmt in _FORMATS else None,
            pattern=pattern,
            min_length=_count(raw, "minLength", problems),
            max_length=_count(raw, "maxLength", problems),
        )
    elif kind_of in ("number", "integer"):
        kind = "integer" if kind_of == "integer" else "number"
        extra.update(minimum=_bound(raw, "minimum", problems), maximum=_bound(raw, "maximum", problems))
    elif kind_of == "boolean":
        kind = "boolean"
    elif kind_of == "array":
        kind = "multi"
        items = raw.get("items")
        if not isinstance(items, Mapping) or not ("enum" in items or "anyOf" in items):
            problems.append("an array field must be a multi-select: items with enum or anyOf options")
        else:
            extra["choices"] = (
                _options(items["anyOf"], problems, "items.anyOf")
                if "anyOf" in items
                else _plain(items["enum"], None, problems, "items.enum")
            )
        extra.update(min_items=_count(raw, "minItems", problems), max_items=_count(raw, "maxItems", problems))
    else:
        return None, (
            f"type {kind_of!r} is not a primitive the spec allows in a form "
            "(string, number, integer, boolean, or an array of enum options)"
        )
    if problems:
        return None, "the server's schema for this field is unusable: " + "; ".join(problems)
    field = FormField(kind=kind, **common, **extra)
    if "default" in raw:
        value, error = _check(field, raw["default"], checks)
        if error is None:
            # An invalid default is not applied: it would turn a skipped optional field into an error.
            field = attrs.evolve(field, default=value)
    return field, None


def form_fields(
    requested_schema: Any,
    *,
    budget: WorkBudget | None = None,
) -> tuple[list[FormField], dict[str, str]]:
    """The fields of ``requested_schema`` in order, and what is wrong with the schema (name -> message).

    ``budget`` pays for checking the schema's defaults against their patterns
    (default: ``FORM_UNITS``); a default whose pattern is not checked is kept."""
    return _fields(requested_schema, _Checks(WorkBudget(FORM_UNITS) if budget is None else budget))


def _fields(requested_schema: Any, checks: _Checks) -> tuple[list[FormField], dict[str, str]]:
    if not isinstance(requested_schema, Mapping):
        return [], {FORM: "the requested schema is not an object"}
    if requested_schema.get("type", "object") != "object":
        return [], {FORM: f"the requested schema has type {requested_schema.get('type')!r}, not 'object'"}
    properties = requested_schema.get("properties", {})
    required = requested_schema.get("required", [])
    if not isinstance(properties, Mapping):
        return [], {FORM: "the requested schema's properties is not an object"}
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return [], {FORM: "the requested schema's required is not a list of names"}
    fields: list[FormField] = []
    errors: dict[str, str] = {}
    for name, raw in properties.items():
        field, error = _read_field(str(name), raw, name in required, checks)
        if field is not None:
            fields.append(field)
        else:
            errors[str(name)] = error or "unusable"
    missing = [r for r in required if r not in properties]
    if missing:
        errors[FORM] = f"required names with no property: {', '.join(missing)}"
    return fields, errors


def looks_iso(text: str) -> bool:
    """Whether ``text`` starts like an ISO 8601 date: a mistyped ISO value, not natural language.

    Such a value keeps its strict error: a natural-language parser would guess
    ("2026-13-01" read as 13 January) where the user plainly meant ISO and erred.
    """
    return _DATE.match(text.strip()) is not None


def is_iso_date(fmt: str | None, text: str) -> bool:
    """Whether ``text`` is a valid ISO 8601 value for format ``date`` or ``date-time``."""
    if fmt == "date":
        if not _DATE.fullmatch(text):
            return False
        try:
            dt.date.fromisoformat(text)
        except ValueError:
            return False
        return True
    if fmt == "date-time":
        if not _DATE_TIME.fullmatch(text):
            return False
        try:
            # fromisoformat wants an upper-case T; the regex above already held the rest to RFC 3339.
            dt.datetime.fromisoformat(text.upper())
        except ValueError:
            return False
        return True
    return True


def _matches(field: FormField, value: str, checks: _Checks) -> bool:
    """Whether ``value`` matches the field's pattern; ``True`` when it cannot be checked
    (noted in ``checks.unchecked``): the server, not this check, has the last word."""
    assert field.pattern is not None
    compiled = peer_pattern(field.pattern)
    if compiled.problem is not None:
        checks.unchecked[field.name] = compiled.problem
        return True
    try:
        return compiled.search(value, checks.budget)
    except BudgetExhausted:
        checks.unchecked[field.name] = f"matching would cost more than the {checks.budget.limit}-unit work budget"
        return True


def _string(field: FormField, value: Any, checks: _Checks) -> tuple[Any, str | None]:
    if not isinstance(value, str):
        return None, "expected text"
    if field.min_length is not None and len(value) < field.min_length:
        return None, f"must be at least {field.min_length} characters (got {len(value)})"
    if field.max_length is not None and len(value) > field.max_length:
        return None, f"must be at most {field.max_length} characters (got {len(value)})"
    if field.pattern is not None and not _matches(field, value, checks):
        return None, f"must match /{field.pattern}/"
    fmt = field.format
    if fmt == "email" and not _EMAIL.fullmatch(value):
        return None, f"{value!r} is not an email address (name@example.com)"
    if fmt == "uri" and not _URI.fullmatch(value):
        return None, f"{value!r} is not an absolute URI (scheme:..., e.g. https://example.com)"
    if fmt == "date" and not is_iso_date(fmt, value):
        return None, f"{value!r} is not a date in ISO 8601 form (YYYY-MM-DD)"
    if fmt == "date-time" and not is_iso_date(fmt, value):
        return None, f"{value!r} is not an RFC 3339 date-time with an offset (YYYY-MM-DDTHH:MM:SS+HH:MM)"
    return value, None


def _number(field: FormField, value: Any) -> tuple[Any, str | None]:
    integer = field.kind == "integer"
    wanted = "an integer" if integer else "a number"
    number: int | float
    if isinstance(value, bool):
        return None, f"expected {wanted}, not a boolean"
    if isinstance(value, str):
        text = value.strip()
        if integer:
            if not _INTEGER.fullmatch(text):
                return None, f"{value!r} is not an integer"
            try:
                number = int(text.split(".")[0])
            except ValueError:  # more digits than int() converts
                return None, f"{value!r} is too long"
        else:
            try:
                number = float(text)
            except ValueError:
                return None, f"{value!r} is not a number"
            if number.is_integer() and _INTEGER.fullmatch(text) and "." not in text:
                number = int(text)
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float):
        number = value
        if integer:
            if not value.is_integer():
                return None, f"{value!r} is not an integer"
            number = int(value)
    else:
        return None, f"expected {wanted}"
    if isinstance(number, float) and not math.isfinite(number):
        return None, "must be a finite number"
    if field.minimum is not None and number < field.minimum:
        return None, f"must be at least {_show_number(field.minimum)} (got {number})"
    if field.maximum is not None and number > field.maximum:
        return None, f"must be at most {_show_number(field.maximum)} (got {number})"
    return number, None


def _boolean(value: Any) -> tuple[Any, str | None]:
    if isinstance(value, bool):
        return value, None
    if isinstance(value, int) and value in (0, 1):
        return bool(value), None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True, None
        if word in _FALSE:
            return False, None
    return None, f"{value!r} is not yes/no (yes, no, true, false, y, n, on, off, 1, 0)"


def _choice(field: FormField, value: Any) -> tuple[str | None, str | None]:
    options = ", ".join(v if v == label else f"{v} ({label})" for v, label in field.choices)
    if not isinstance(value, str):
        return None, f"expected one of: {options}"
    values = [v for v, _ in field.choices]
    if value in values:
        return value, None
    # A person types what the form shows: an option's label, or its value in another case.
    key = value.strip().casefold()
    matches = {v for v, label in field.choices if key in (v.casefold(), label.casefold())}
    if len(matches) == 1:
        return matches.pop(), None
    return None, f"{value!r} is not one of: {options}"


def _multi(field: FormField, value: Any) -> tuple[Any, str | None]:
    if not isinstance(value, (list, tuple)):
        return None, "expected a list of choices"
    chosen: list[str] = []
    for item in value:
        one, error = _choice(field, item)
        if error is not None:
            return None, error
        if one not in chosen:  # choosing an option twice means choosing it
            chosen.append(one)  # type: ignore[arg-type]
    if field.min_items is not None and len(chosen) < field.min_items:
        return None, f"choose at least {field.min_items} (got {len(chosen)})"
    if field.max_items is not None and len(chosen) > field.max_items:
        return None, f"choose at most {field.max_items} (got {len(chosen)})"
    return chosen, None


def _check(field: FormField, value: Any, checks: _Checks) -> tuple[Any, str | None]:
    """``value`` coerced for ``field``, or the message saying why it does not fit."""
    if field.kind == "string":
        return _string(field, value, checks)
    if field.kind in ("number", "integer"):
        return _number(field, value)
    if field.kind == "boolean":
        return _boolean(value)
    if field.kind == "enum":
        return _choice(field, value)
    return _multi(field, value)


def validate_form(
    requested_schema: Any,
    content: Mapping[str, Any] | None,
    *,
    now: dt.datetime | None = None,
    budget: WorkBudget | None = None,
) -> FormResult:
    """Check ``content`` against a form-mode ``requestedSchema``; never raises.

    Returns a ``FormResult``: ``content`` coerced with defaults applied to absent
    optional fields, ``errors`` one message per wrong field (``FORM`` for the schema
    itself), ``ignored`` the dropped names the schema does not have.  ``now`` is for
    date checks relative to the present; no schema of the spec has one yet.  ``budget``
    pays for pattern matching (default: ``FORM_UNITS``); ``unchecked`` names the fields
    whose pattern it did not check.
    """
    del now  # part of the signature the async variant shares; see the module docstring
    checks = _Checks(WorkBudget(FORM_UNITS) if budget is None else budget)
    fields, errors = _fields(requested_schema, checks)
    given: Mapping[str, Any] = content if isinstance(content, Mapping) else {}
    if content is not None and not isinstance(content, Mapping):
        errors.setdefault(FORM, "the content is not an object")
    out: dict[str, Any] = {}
    for field in fields:
        value = given.get(field.name)
        if value is None:  # null is no primitive's value: the same as leaving the field out
            if field.required:
                errors[field.name] = "required"
            elif field.default is not None:
                out[field.name] = field.default
            continue
        coerced, error = _check(field, value, checks)
        if error is not None:
            errors[field.name] = error
        else:
            out[field.name] = coerced
    known = {f.name for f in fields} | set(errors)
    ignored = tuple(str(k) for k in given if k not in known)
    return FormResult(content=out, errors=errors, ignored=ignored, unchecked=checks.unchecked)
