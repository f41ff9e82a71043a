"""trimcp.host.validate_form / validate_form_async: every primitive schema of every revision."""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any

import jsonschema
import pytest
import trio
import trio.lowlevel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import SHARED, SPEC

from trimcp.host import FormResult, validate_form, validate_form_async

SPEC = SPEC
FORM_REVISIONS = ("2025-06-18", "2025-11-25", "2026-07-28")
NOW = dt.datetime(2026, 12, 1, 18, 0, tzinfo=dt.UTC)


def obj(required: list[str] | None = None, **props: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


# One field schema per primitive kind, with the first revision that has its shape.
FIELDS: dict[str, tuple[str, dict[str, Any]]] = {
    "text": ("2025-06-18", {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5}),
    "email": ("2025-06-18", {"type": "string", "format": "email"}),
    "uri": ("2025-06-18", {"type": "string", "format": "uri"}),
    "day": ("2025-06-18", {"type": "string", "format": "date"}),
    "when": ("2025-06-18", {"type": "string", "format": "date-time"}),
    "count": ("2025-06-18", {"type": "integer", "minimum": 1, "maximum": 10}),
    "ratio": ("2025-06-18", {"type": "number", "minimum": 0, "maximum": 1}),
    "flag": ("2025-06-18", {"type": "boolean"}),
    "legacy": ("2025-06-18", {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]}),
    "plain": ("2025-06-18", {"type": "string", "enum": ["one", "two"]}),
    "titled": (
        "2025-11-25",
        {"type": "string", "oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#0f0", "title": "Green"}]},
    ),
    "multi": (
        "2025-11-25",
        {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2},
    ),
    "tmulti": (
        "2025-11-25",
        {"type": "array", "items": {"anyOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]}},
    ),
}


def _definitions(rev: str) -> dict[str, Any]:
    path = SHARED / "spec" / rev / "schema.json"
    if not path.exists():
        pytest.skip(f"no schema.json for {rev}")
    doc = json.loads(path.read_text())
    return doc


@pytest.mark.parametrize("rev", FORM_REVISIONS)
def test_the_field_schemas_are_the_revisions_own(rev: str) -> None:
    # The fixtures are valid PrimitiveSchemaDefinitions of each revision that has their shape,
    # so the checks below are about schemas a server may really send.
    doc = _definitions(rev)
    key = "$defs" if "$defs" in doc else "definitions"
    primitive = {"$ref": f"#/{key}/PrimitiveSchemaDefinition", key: doc[key]}
    validator = jsonschema.validators.validator_for(doc)(primitive)
    for name, (since, schema) in FIELDS.items():
        if rev >= since:
            validator.validate(schema)
            assert validate_form(obj(**{name: schema}), {}).ok, name


GOOD: list[tuple[str, Any, Any]] = [
    ("text", "abc", "abc"),
    ("email", "a.b@example.com", "a.b@example.com"),
    ("email", "root@localhost", "root@localhost"),
    ("uri", "https://example.com/x?y=1", "https://example.com/x?y=1"),
    ("uri", "urn:isbn:0451450523", "urn:isbn:0451450523"),
    ("day", "2026-02-28", "2026-02-28"),
    ("when", "2026-02-28T10:00:00Z", "2026-02-28T10:00:00Z"),
    ("when", "2026-02-28T10:00:00.5+05:30", "2026-02-28T10:00:00.5+05:30"),
    ("count", "3", 3),
    ("count", 3, 3),
    ("count", 3.0, 3),
    ("count", " 10 ", 10),
    ("count", "4.0", 4),
    ("ratio", "0.5", 0.5),
    ("ratio", 1, 1),
    ("ratio", "0", 0),
    *[("flag", word, True) for word in ("yes", "Y", "TRUE", "1", "on", "On", True, 1)],
    *[("flag", word, False) for word in ("no", "N", "false", "0", "OFF", False, 0)],
    ("legacy", "r", "r"),
    ("legacy", "Green", "g"),
    ("legacy", "red", "r"),
    ("plain", "two", "two"),
    ("plain", "TWO", "two"),
    ("titled", "#f00", "#f00"),
    ("titled", "green", "#0f0"),
    ("multi", ["a"], ["a"]),
    ("multi", ["b", "a", "b"], ["b", "a"]),
    ("tmulti", [], []),
    ("tmulti", ["Why", "x"], ["y", "x"]),
]


@pytest.mark.parametrize(("name", "given_value", "expected"), GOOD)
def test_a_good_value_is_coerced(name: str, given_value: Any, expected: Any) -> None:
    result = validate_form(obj(**{name: FIELDS[name][1]}), {name: given_value})
    assert result.errors == {}
    assert result.ok
    assert result.content == {name: expected}
    assert type(result.content[name]) is type(expected)


BAD: list[tuple[str, Any, str]] = [
    ("text", "a", "at least 2 characters"),
    ("text", "abcdef", "at most 5 characters"),
    ("text", 12, "expected text"),
    ("email", "not-an-email", "not an email"),
    ("email", "a b@example.com", "not an email"),
    ("uri", "example.com", "absolute URI"),
    ("uri", "http://a b", "absolute URI"),
    ("day", "2026-02-30", "ISO 8601"),
    ("day", "20260228", "ISO 8601"),
    ("day", "next monday", "ISO 8601"),
    ("when", "2026-02-28T10:00:00", "offset"),
    ("when", "2026-02-28", "offset"),
    ("when", "2026-02-28 10:00:00Z", "offset"),
    ("count", "3.5", "not an integer"),
    ("count", 3.5, "not an integer"),
    ("count", "0", "at least 1"),
    ("count", 11, "at most 10"),
    ("count", True, "boolean"),
    ("count", "ten", "not an integer"),
    ("ratio", "1.5", "at most 1"),
    ("ratio", "nan", "finite"),
    ("ratio", "x", "not a number"),
    ("flag", "maybe", "yes/no"),
    ("flag", 2, "yes/no"),
    ("legacy", "blue", "not one of: r (Red), g (Green)"),
    ("plain", 1, "expected one of"),
    ("titled", "#00f", "not one of"),
    ("multi", [], "at least 1"),
    ("multi", ["a", "b", "c"], "at most 2"),
    ("multi", "a", "a list"),
    ("multi", ["d"], "not one of"),
    ("tmulti", ["z"], "not one of"),
]


@pytest.mark.parametrize(("name", "given_value", "message"), BAD)
def test_a_bad_value_gets_one_clear_message(name: str, given_value: Any, message: str) -> None:
    result = validate_form(obj(**{name: FIELDS[name][1]}), {name: given_value}, now=NOW)
    assert not result.ok
    assert list(result.errors) == [name]
    assert message in result.errors[name]
    assert name not in result.content


def test_required_fields_and_null() -> None:
    schema = obj(["a", "b"], a={"type": "string"}, b={"type": "integer"}, c={"type": "boolean"})
    result = validate_form(schema, {"a": "x", "b": None})
    assert result.errors == {"b": "required"}
    assert result.content == {"a": "x"}
    assert validate_form(schema, {"a": "", "b": 0}).content == {"a": "", "b": 0}


def test_defaults_fill_absent_optional_fields_only() -> None:
    # SEP-1034: every primitive may carry a default; the reference server's tool uses these.
    schema = obj(
        ["req"],
        req={"type": "string", "default": "r"},
        name={"type": "string", "default": "John Doe"},
        age={"type": "integer", "default": 30},
        score={"type": "number", "default": 95.5},
        status={"type": "string", "enum": ["active", "inactive"], "default": "active"},
        verified={"type": "boolean", "default": True},
        tags={"type": "array", "items": {"enum": ["a", "b"]}, "default": ["b"]},
        bad={"type": "integer", "minimum": 5, "default": 1},
    )
    result = validate_form(schema, {"req": "given", "age": "31"})
    assert result.ok
    assert result.content == {
        "req": "given",
        "name": "John Doe",
        "age": 31,
        "score": 95.5,
        "status": "active",
        "verified": True,
        "tags": ["b"],
    }
    # A default that breaks its own constraints is not applied (the field stays absent).
    assert "bad" not in result.content
    # A required field is not filled by its default: the user must have seen and given it.
    assert validate_form(schema, {}).errors == {"req": "required"}


def test_unknown_fields_are_dropped_and_listed() -> None:
    result = validate_form(obj(a={"type": "string"}), {"a": "x", "emial": "y"})
    assert result.ok
    assert result.content == {"a": "x"}
    assert result.ignored == ("emial",)


@pytest.mark.parametrize(
    "schema",
    [
        None,
        [],
        {"type": "array"},
        {"type": "object", "properties": []},
        {"type": "object", "properties": {}, "required": "a"},
    ],
)
def test_a_schema_that_is_not_an_object_is_a_form_error(schema: Any) -> None:
    result = validate_form(schema, {"a": 1})
    assert not result.ok
    assert list(result.errors) == [""]


@pytest.mark.parametrize(
    ("prop", "message"),
    [
        ({"type": "object", "properties": {}}, "not a primitive"),
        ({"type": "array", "items": {"type": "string"}}, "multi-select"),
        ({"type": "string", "format": "ipv4"}, "unknown format"),
        ({"type": "string", "pattern": "("}, "does not compile"),
        ({"type": "integer", "minimum": "0"}, "minimum must be a number"),
        ({"type": "string", "minLength": -1}, "minLength"),
        ({"type": "string", "enum": []}, "non-empty"),
        ({"type": "string", "oneOf": [{"title": "x"}]}, "const"),
        ("string", "not an object"),
    ],
)
def test_a_field_schema_that_is_not_a_primitive_is_that_fields_error(prop: Any, message: str) -> None:
    result = validate_form(obj(f=prop, g={"type": "string"}), {"f": "x", "g": "y"})
    assert list(result.errors) == ["f"]
    assert message in result.errors["f"]
    assert result.content == {"g": "y"}
    assert result.ignored == ()


def test_required_name_without_property_and_non_object_content() -> None:
    assert "nope" in validate_form(obj(["nope"], a={"type": "string"}), {}).errors[""]
    assert validate_form(obj(a={"type": "string"}), ["a"]).errors == {"": "the content is not an object"}  # type: ignore[arg-type]


def test_pattern_when_a_server_sends_one() -> None:
    # 2025-11-25's page shows pattern in its StringSchema example (not in the schema.json).
    schema = obj(p={"type": "string", "pattern": "^[A-Za-z]+$"})
    assert validate_form(schema, {"p": "abc"}).ok
    assert "must match" in validate_form(schema, {"p": "ab1"}).errors["p"]


# --- properties ---------------------------------------------------------------------------

_KINDS = sorted(FIELDS)


@st.composite
def _form(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(_KINDS), unique=True, max_size=len(_KINDS)))
    required = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    props: dict[str, Any] = {}
    for name in names:
        prop = dict(FIELDS[name][1])
        if draw(st.booleans()):
            value = next(v for n, v, _ in GOOD if n == name)
            prop["default"] = (
                value if name not in ("count", "ratio", "flag") else {"count": 2, "ratio": 0.25, "flag": False}[name]
            )
        props[name] = prop
    candidates = [
        *(st.tuples(st.just(n), st.just(v)) for n, v, _ in GOOD if n in names),
        *(st.tuples(st.just(n), st.just(v)) for n, v, _ in BAD if n in names),
        st.tuples(st.sampled_from(["zz", "extra"]), st.integers()),
    ]
    content = dict(draw(st.lists(st.one_of(*candidates), max_size=8))) if names else {}
    return obj(required, **props), content


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_form())
def test_properties(form: tuple[dict[str, Any], dict[str, Any]]) -> None:
    schema, content = form
    result = validate_form(schema, content)
    names = set(schema["properties"])
    # Errors name only schema fields; the content only holds schema fields.
    assert set(result.errors) <= names
    assert set(result.content) <= names
    assert set(result.ignored) == set(content) - names
    # Defaults never override a given value: every field given and valid keeps its coerced value.
    for name, value in result.content.items():
        if content.get(name) is not None:
            assert (
                validate_form(obj(**{name: schema["properties"][name]}), {name: content[name]}).content[name] == value
            )
    # Valid content always validates to itself (coercion is idempotent): what was kept is
    # valid, so only required fields that were wrong or missing can fail again.
    again = validate_form(schema, result.content)
    assert {k: again.content[k] for k in result.content} == result.content
    assert set(again.errors) <= set(schema.get("required", [])) - set(result.content)
    if result.ok:
        assert again.ok and again.ignored == ()


# --- async: natural-language dates --------------------------------------------------------

DATES = obj(["day"], day={"type": "string", "format": "date"}, when={"type": "string", "format": "date-time"})


async def test_async_leaves_iso_alone_and_never_calls_the_parser() -> None:
    def parser(text: str, now: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
        raise AssertionError("called")

    result = await validate_form_async(
        DATES, {"day": "2026-12-07", "when": "2026-12-07T15:00:00Z"}, now=NOW, date_parser=parser
    )
    assert result == FormResult(content={"day": "2026-12-07", "when": "2026-12-07T15:00:00Z"}, errors={})


async def test_async_parser_result_is_written_as_iso_and_validated_again() -> None:
    seen: list[tuple[str, dt.datetime, dt.tzinfo]] = []

    async def parser(text: str, now: dt.datetime, tz: dt.tzinfo) -> dt.datetime | dt.date | None:
        seen.append((text, now, tz))
        await trio.lowlevel.checkpoint()
        return {"monday": dt.date(2026, 12, 7), "monday 3pm": dt.datetime(2026, 12, 7, 15, 0)}.get(text)

    paris = "Europe/Paris"
    result = await validate_form_async(
        DATES, {"day": "monday", "when": "monday 3pm"}, now=NOW, tz=paris, date_parser=parser
    )
    assert result.errors == {}
    assert result.content == {"day": "2026-12-07", "when": "2026-12-07T15:00:00+01:00"}
    assert [s[0] for s in seen] == ["monday", "monday 3pm"]
    assert all(s[1] == NOW and str(s[2]) == paris for s in seen)

    result = await validate_form_async(DATES, {"day": "someday"}, now=NOW, date_parser=parser)
    assert result.errors == {"day": "could not read 'someday' as a date"}


async def test_async_sync_parser_and_other_errors_kept() -> None:
    schema = obj(["day", "n"], day={"type": "string", "format": "date"}, n={"type": "integer"})
    result = await validate_form_async(
        schema,
        {"day": "tomorrow", "n": "x"},
        now=NOW,
        date_parser=lambda text, now, tz: (now + dt.timedelta(days=1)).date(),
    )
    assert result.content == {"day": "2026-12-02"}
    assert list(result.errors) == ["n"]


async def test_cancelling_the_caller_cancels_the_parse(autojump_clock: trio.abc.Clock) -> None:
    finished = []

    async def slow(text: str, now: dt.datetime, tz: dt.tzinfo) -> dt.date:
        await trio.sleep(3600)
        finished.append(text)
        return dt.date(2026, 1, 1)

    with trio.move_on_after(5) as scope:
        await validate_form_async(DATES, {"day": "later"}, now=NOW, date_parser=slow)
    assert scope.cancelled_caught
    assert finished == []
    assert trio.current_time() == pytest.approx(5)


async def test_without_dateparser_non_iso_says_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dateparser", None)  # import dateparser -> ImportError
    result = await validate_form_async(DATES, {"day": "next monday"}, now=NOW)
    assert "ISO 8601" in result.errors["day"]
    assert "trimcp[dates]" in result.errors["day"]


async def test_with_dateparser_relative_to_now_and_tz() -> None:
    pytest.importorskip("dateparser")
    result = await validate_form_async(
        DATES, {"day": "next Monday", "when": "next Monday at 3pm"}, now=NOW, tz="Europe/Paris"
    )
    assert result.errors == {}
    # 2026-12-01 is a Tuesday; future-preferring, in Paris (UTC+1 in winter).
    assert result.content == {"day": "2026-12-07", "when": "2026-12-07T15:00:00+01:00"}
    result = await validate_form_async(DATES, {"day": "no date here at all"}, now=NOW)
    assert "could not read" in result.errors["day"]
    # A mistyped ISO date is not guessed at (dateparser would read 13 January).
    for text in ("2026-13-01", "2026-02-30", "2026-02-28 10:00"):
        result = await validate_form_async(DATES, {"day": "2026-01-01", "when": text}, now=NOW)
        assert "RFC 3339" in result.errors["when"], text
