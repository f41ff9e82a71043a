"""``trimcp._sansio.bounded``: budgets, a peer's patterns in RE2, bounded schemas, echoes.

The differential test holds ``PeerPattern`` against Python's ``re`` on patterns both
dialects read the same way (no ``$`` before a newline, no ``.`` against ``\\r``),
on inputs short enough for a backtracking engine to be quick.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp._sansio.bounded.budget import BudgetExhausted, WorkBudget
from trimcp._sansio.bounded.echo import quote, short_repr
from trimcp._sansio.bounded.patterns import MAX_PATTERN_LENGTH, PeerPattern, Unsupported, to_re2
from trimcp._sansio.bounded.schemas import BoundedSchema
from trimcp._sansio.host.forms import form_fields, validate_form

BIG = 10**9


def matches(pattern: str, text: str) -> bool:
    compiled = PeerPattern(pattern)
    assert compiled.problem is None, compiled.problem
    return compiled.search(text, WorkBudget(BIG))


# ---------------------------------------------------------------- budget


def test_a_budget_raises_at_the_spend_that_passes_its_limit() -> None:
    budget = WorkBudget(10)
    budget.spend(4)
    budget.spend(6)
    assert budget.remaining == 0
    with pytest.raises(BudgetExhausted):
        budget.spend(1)


# ---------------------------------------------------------------- patterns: the dialect


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (r"^\u0041$", "A", True),
        (r"^\u{1F600}$", "\U0001f600", True),
        (r"^\uD83D\uDE00$", "\U0001f600", True),  # a surrogate pair is one code point
        (r"^\x41\cA$", "A\x01", True),
        (r"^a\0b$", "a\x00b", True),
        (r"^.$", "\n", False),
        (r"^.$", "\r", False),  # ECMA-262's dot excludes every line terminator
        (r"^.$", "\u2028", False),
        (r"^.$", "é", True),
        (r"^\s$", "\u00a0", True),  # ECMA-262's \s is Unicode
        (r"^\s$", "\u3000", True),
        (r"^\S$", "\u00a0", False),
        (r"^[\s]$", "\ufeff", True),
        (r"^a$", "a\n", False),  # $ is the end of the input, not before a final newline
        (r"^[]$", "", False),  # [] matches nothing
        (r"^[^]$", "\n", True),  # [^] matches anything
        (r"^[[]$", "[", True),
        (r"^[\b]$", "\x08", True),
        (r"^\a\e$", "ae", True),  # identity escapes of letters
        (r"^\/\-$", "/-", True),
        (r"^(?<year>\d{4})$", "2026", True),
        (r"^\d+$", "١٢", False),  # \d is ASCII in both
        (r"\p{Lu}", "É", True),
        (r"x{", "x{", True),  # a brace that is no quantifier is itself
    ],
)
def test_ecma_262_means_the_same_in_re2(pattern: str, text: str, expected: bool) -> None:
    assert matches(pattern, text) is expected


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("(?=a)a", "lookaround"),
        ("(?<!a)b", "lookaround"),
        (r"(a)\1", "backreference"),
        (r"(?<n>a)\k<n>", "named backreference"),
        (r"\uD800", "lone surrogate"),
        ("[a", "unterminated"),
    ],
)
def test_what_re2_cannot_run_is_unsupported(pattern: str, reason: str) -> None:
    with pytest.raises(Unsupported, match=reason):
        to_re2(pattern)
    compiled = PeerPattern(pattern)
    assert compiled.problem is not None
    with pytest.raises(ValueError, match="not enforced"):
        compiled.search("a", WorkBudget(BIG))


def test_a_lookaround_is_a_regex_we_do_not_run_a_broken_pattern_is_invalid() -> None:
    for unsupported in ("(?=a)a", r"(?<n>a)\k<n>", r"(a)\1", r"\p{Script=Greek}", "a{1001}"):
        assert not PeerPattern(unsupported).invalid, unsupported
    for broken in ("(unclosed", "a**", "*a", "[a", "a)", "a\\"):
        assert PeerPattern(broken).invalid, broken


def test_caps_on_length_and_program_size() -> None:
    assert "longer than" in str(PeerPattern("a" * (MAX_PATTERN_LENGTH + 1)).problem)
    huge = PeerPattern(r"(\p{L}|a){200}z")  # 16 characters, 240 000 instructions
    assert huge.problem is not None and "larger than" in huge.problem
    assert not huge.invalid


def test_a_match_is_charged_by_input_times_program_before_it_runs() -> None:
    compiled = PeerPattern("(a|b)*a(a|b){20}")
    cost = compiled.match_cost("a" * 100_000)
    assert cost > 10_000
    budget = WorkBudget(cost - 1)
    with pytest.raises(BudgetExhausted):
        compiled.search("a" * 100_000, budget)
    assert compiled.search("a" * 100_000, WorkBudget(cost)) is True


def test_the_backtracking_classic_runs_in_linear_time() -> None:
    # (a+)+$ against a*N + "!" doubles in Python's re with each a; here it is one pass.
    assert not matches("(a+)+$", "a" * 100_000 + "!")
    assert matches("(a+)+$", "a" * 100_000)


def test_a_lone_surrogate_from_json_is_matched_not_crashed_on() -> None:
    # "\\ud800" is a legal JSON escape; RE2 matches UTF-8, which cannot carry it (a fuzz find).
    lone = "x\ud800y"
    assert matches("^x.y$", lone)
    assert matches("[^a-z]", lone)
    assert not matches("^[a-z]+$", lone)
    assert check({"type": "string", "pattern": "^x"}, lone).valid
    raw = PeerPattern("a\udcb8b")  # in the pattern itself: named, not run
    assert raw.problem is not None and "surrogate" in raw.problem and not raw.invalid


_ATOMS = st.sampled_from(["a", "b", "ab", "[ab]", "[^a]", r"\d", r"\w", "(a|b)", "(?:ab|ba)", "x"])
_QUANTIFIERS = st.sampled_from(["", "*", "+", "?", "{2}", "{1,3}", "*?", "+?"])


@st.composite
def safe_patterns(draw: Any) -> str:
    pieces = [draw(_ATOMS) + draw(_QUANTIFIERS) for _ in range(draw(st.integers(1, 5)))]
    pattern = "".join(pieces)
    if draw(st.booleans()):
        pattern = "^" + pattern
    if draw(st.booleans()):
        pattern += "$"
    if draw(st.booleans()):
        pattern = pattern + "|" + draw(_ATOMS)
    return pattern


@settings(max_examples=400, deadline=None)
@given(safe_patterns(), st.text(alphabet="ab1x_!", max_size=12))
def test_peer_patterns_agree_with_python_re_where_the_dialects_agree(pattern: str, text: str) -> None:
    assert matches(pattern, text) is (re.search(pattern, text) is not None)


# ---------------------------------------------------------------- schemas


def check(schema: Any, instance: Any, units: int = BIG, **kw: Any) -> Any:
    reading = BoundedSchema(schema, **kw)
    assert reading.problem is None, reading.problem
    return reading.validate(instance, WorkBudget(units))


def test_pattern_keywords_run_in_re2() -> None:
    verdict = check({"type": "string", "pattern": "(a+)+$"}, "a" * 40 + "!")
    assert [e.message for e in verdict.errors] == ["'" + "a" * 40 + "!' does not match '(a+)+$'"]
    schema = {"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False}
    messages = sorted(e.message for e in check(schema, {"xa": "s", "y": 1}).errors)
    assert messages == ["'s' is not of type 'integer'", "Additional properties are not allowed ('y' was unexpected)"]
    assert check(schema, {"xa": 1}).valid


def test_a_pattern_re2_cannot_run_is_named_not_enforced() -> None:
    verdict = check({"type": "string", "pattern": "(?=a)a"}, "b")
    assert verdict.valid and "lookaround" in verdict.unchecked[0]
    beside = check({"patternProperties": {"(?=x)": {}}, "additionalProperties": False}, {"y": 1})
    assert beside.valid and any("additionalProperties" in note for note in beside.unchecked)


def test_unevaluated_properties_beside_pattern_properties_is_not_enforced() -> None:
    plain = check({"properties": {"a": {}}, "unevaluatedProperties": False}, {"a": 1, "b": 2})
    assert len(plain.errors) == 1
    mixed = check({"patternProperties": {"^a": {}}, "unevaluatedProperties": False}, {"b": 2})
    assert mixed.valid and "unevaluatedProperties" in mixed.unchecked[0]


def test_a_subschema_naming_another_draft_is_still_bounded() -> None:
    # jsonschema's own evolve would hand this subschema to the unbounded draft-07 class.
    schema = {
        "properties": {
            "a": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string", "pattern": "(?=a)a"}
        }
    }
    verdict = check(schema, {"a": "b"})
    assert verdict.valid and "lookaround" in verdict.unchecked[0]


def test_a_remote_ref_is_not_resolved_and_never_fetched() -> None:
    verdict = check({"properties": {"a": {"$ref": "http://169.254.169.254/latest"}}}, {"a": 1})
    assert verdict.valid and "never fetched" in verdict.unchecked[0]
    local = {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}
    assert len(check(local, {"a": "x"}).errors) == 1


def _fanout(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"$defs": {"l0": {"type": "object"}}, "$ref": f"#/$defs/l{levels - 1}"}
    for level in range(1, levels):
        schema["$defs"][f"l{level}"] = {"allOf": [{"$ref": f"#/$defs/l{level - 1}"}] * 2}
    return schema


def test_exponential_fan_out_ends_at_the_budget_deterministically() -> None:
    reading = BoundedSchema(_fanout(40))
    first, second = WorkBudget(50_000), WorkBudget(50_000)
    assert reading.validate({}, first).exhausted and reading.validate({}, second).exhausted
    assert first.spent == second.spent == 50_000
    assert check(_fanout(6), {}).valid


def test_unique_items_is_linear_and_keeps_json_equality() -> None:
    schema = {"type": "array", "uniqueItems": True}
    assert len(check(schema, [{"a": 1}, {"a": 1.0}]).errors) == 1  # 1 == 1.0
    assert check(schema, [True, 1, [1], [True]]).valid  # true is not 1
    assert check(schema, [{"a": i} for i in range(20_000)], units=200_000).valid


def test_messages_quote_a_huge_value_briefly() -> None:
    verdict = check({"anyOf": [{"type": "string"}] * 100}, {"k": "v" * 1_000_000})
    message = verdict.errors[0].message
    assert len(message) < 500 and "(1000000 characters)" in message


def test_the_regex_format_of_the_metaschema_reads_the_ecma_dialect() -> None:
    assert BoundedSchema({"pattern": r"^\p{L}+$"}).problem is None  # Python's re has no \p
    assert BoundedSchema({"pattern": r"^\u0041$"}).problem is None
    broken = BoundedSchema({"pattern": "(unclosed"})
    assert broken.invalid and "regex" in str(broken.problem)


def test_reading_a_huge_schema_is_bounded_too() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(5_000)}}
    reading = BoundedSchema(schema, budget=WorkBudget(10_000))
    assert reading.exhausted and reading.problem is not None and not reading.invalid


def test_deep_nesting_is_a_problem_not_a_crash() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5_000):
        node["items"] = {}
        node = node["items"]
    assert BoundedSchema(deep).problem is not None
    value: Any = []
    for _ in range(5_000):
        value = [value]
    verdict = check({"type": "array", "items": {"$ref": "#"}}, value)
    assert verdict.exhausted and "nests too deeply" in verdict.unchecked[0]
    assert check({"type": "array", "items": {"$ref": "#"}}, [[[]]]).valid


def test_formats_are_asserted_only_when_asked() -> None:
    assert check({"format": "email"}, "nope").valid
    assert not check({"format": "email"}, "nope", formats=True).valid


# ---------------------------------------------------------------- forms


def test_a_forms_hostile_default_is_judged_in_linear_time() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "(a+)+$", "default": "a" * 30 + "!"}},
    }
    [field], problems = form_fields(schema)
    assert problems == {} and field.default is None  # the default breaks the pattern: not applied
    assert validate_form(schema, {"code": "a" * 30 + "!"}).errors == {"code": "must match /(a+)+$/"}


def test_a_form_pattern_re2_cannot_run_is_shown_and_reported_unchecked() -> None:
    schema = {"type": "object", "properties": {"pin": {"type": "string", "pattern": "^(?=\\d)\\d{4}$"}}}
    [field], _ = form_fields(schema)
    assert field.pattern_problem is not None and "not checked" in field.constraints()[0]
    result = validate_form(schema, {"pin": "12"})
    assert result.ok and result.content == {"pin": "12"}
    assert "lookaround" in result.unchecked["pin"]


def test_a_forms_patterns_share_one_budget() -> None:
    schema = {
        "type": "object",
        "properties": {f"f{i}": {"type": "string", "pattern": "(a|b)*a(a|b){20}"} for i in range(50)},
    }
    result = validate_form(schema, {f"f{i}": "a" * 50_000 for i in range(50)}, budget=WorkBudget(100_000))
    assert result.ok and len(result.unchecked) > 40
    assert all("budget" in why for why in result.unchecked.values())


# ---------------------------------------------------------------- echo


def test_quote_escapes_controls_and_cuts_long_values() -> None:
    assert quote("a\x1b[2Jb\nc") == r"'a\x1b[2Jb\nc'"
    long = quote("x" * 10_000)
    assert len(long) < 240 and long.endswith("... (10000 characters)")
    assert quote(b"\x00" * 500).endswith("(500 bytes)")


def test_short_repr_walks_only_what_it_shows() -> None:
    big = {"k": ["v" * 50] * 100_000}
    shown = short_repr(big)
    assert len(shown) < 400 and "(100000 items)" in shown
    assert "int of" in short_repr(10**100)
