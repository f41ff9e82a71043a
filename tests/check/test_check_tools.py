"""The tool-calling policy of ``trimcp check`` (``--call-tools``, ``--probe-tools N``, ``--no-open-world``).

Unit tests: ``values.example_argument_sets`` gives distinct argument sets, each valid against
its schema (checked here with jsonschema and its format checker), the minimal one first;
``ToolPolicy`` probes every callable tool with a required property, bounded.  CLI runs
against tests/helpers/bad_tools.py: a defect that only a non-minimal argument set reaches
(``--probe-tools 3`` finds it, 1 does not), a defect in the second tool probed, a tool whose
``taskSupport`` is ``required`` left uncalled, an open-world tool left out by
``--no-open-world``; the ``-legacy`` tool-list checks on a fake pinned to 2025-06-18; and
``features.stable-lists`` / ``tools.x-mcp-header`` on tests/helpers/bad_features26.py (2026-07-28).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import jsonschema
import pytest
from repo_paths import REPO

from trimcp._sansio import schema as s
from trimcp.conformance.checks.tool_calls import MAX_INVALID_PROBES, ToolPolicy, requires_task
from trimcp.conformance.values import FORMATS, example_argument_sets, example_arguments

REPO = REPO
BAD = str(REPO / "tests" / "helpers" / "bad_tools.py")
TIMEOUT = 60

SCHEMAS: dict[str, dict[str, Any]] = {
    "mixed": {
        "type": "object",
        "required": ["n"],
        "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 10},
            "when": {"type": "string", "format": "date-time"},
            "mail": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"},
            "kind": {"enum": ["a", "b", "c"]},
            "flag": {"type": "boolean"},
            "short": {"type": "string", "maxLength": 3},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 1},
            "maybe": {"type": ["integer", "null"]},
        },
    },
    "nested": {
        "type": "object",
        "required": ["where"],
        "properties": {
            "where": {
                "type": "object",
                "required": ["x"],
                "properties": {"x": {"type": "number"}, "label": {"type": "string"}},
            }
        },
    },
    "pattern": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string", "pattern": "^t"}}},
    "empty": {"type": "object"},
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_example_sets_are_distinct_valid_and_minimal_first(name: str) -> None:
    schema = SCHEMAS[name]
    sets = example_argument_sets(schema, 25)
    assert sets and sets[0] == example_arguments(schema)
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    for args in sets:
        validator.validate(args)
    assert len({json.dumps(a, sort_keys=True) for a in sets}) == len(sets)
    assert example_argument_sets(schema, 2) == sets[:2]


def test_example_sets_try_other_values() -> None:
    sets = example_argument_sets(SCHEMAS["mixed"], 50)
    assert len(sets) > 10
    seen = {(k, json.dumps(v)) for args in sets for k, v in args.items()}
    for expected in [
        ("kind", '"b"'),
        ("kind", '"c"'),
        ("flag", "true"),
        ("n", "10"),
        ("n", "1"),
        ("when", json.dumps(FORMATS["date-time"])),
        ("mail", '"test@example.com"'),
        ("maybe", "null"),
        ("tags", '["test"]'),
    ]:
        assert expected in seen, expected
    # The rules that no value may break: a bounded string, an array of at most one item.
    assert all(len(args.get("short", "")) <= 3 and len(args.get("tags", [])) <= 1 for args in sets)
    # Another enum member comes before another string.
    assert sets[2]["kind"] == "b"


def test_example_sets_none_for_unsupported_or_zero() -> None:
    assert example_argument_sets({"type": "object", "properties": {"x": {"oneOf": []}}, "required": ["x"]}, 3) == []
    assert example_argument_sets(SCHEMAS["mixed"], 0) == []
    # A pattern the generator cannot meet: the invalid values are dropped, never sent.
    assert (
        example_argument_sets(
            {"type": "object", "required": ["d"], "properties": {"d": {"type": "string", "pattern": "^[0-9]+$"}}}, 3
        )
        == []
    )


def _tool(name: str, schema: dict[str, Any], **extra: Any) -> s.Tool:
    return s.Tool(name=name, input_schema=schema, annotations=s.ToolAnnotations(read_only_hint=True), **extra)


def test_every_callable_tool_is_probed_bounded() -> None:
    needy = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    tools = [_tool(f"t{i}", needy) for i in range(MAX_INVALID_PROBES + 5)] + [_tool("free", {"type": "object"})]
    assert [t.name for t in ToolPolicy().probe_targets(tools)] == [f"t{i}" for i in range(MAX_INVALID_PROBES)]
    assert ToolPolicy(probe_tools=0).probe_targets(tools) == []
    assert ToolPolicy("none").probe_targets(tools) == []


def test_requires_task() -> None:
    assert requires_task(_tool("a", {"type": "object"}, execution=s.ToolExecution(task_support="required")))
    assert not requires_task(_tool("b", {"type": "object"}, execution=s.ToolExecution(task_support="optional")))
    assert not requires_task(_tool("c", {"type": "object"}))
    assert requires_task(_tool("d", {"type": "object"}, extra={"execution": {"taskSupport": "required"}}))


def _check(mode: str, *extra: str) -> dict[str, dict[str, Any]]:
    revision = "2025-06-18" if mode.startswith("legacy-") else "2025-11-25"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "trimcp.cli",
            "check",
            "--format",
            "json",
            "--revision",
            revision,
            "--only",
            "tools.*",
            *extra,
            "--",
            sys.executable,
            BAD,
            "--mode",
            mode,
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=REPO,
    )
    return {c["id"]: c for c in json.loads(proc.stdout)["checks"]}


def test_good_server_every_tool_called_with_each_set() -> None:
    checks = _check("good", "--probe-tools", "3")
    # lookup, count and fetch; background (taskSupport required) is not called without a task.
    assert checks["tools.call-read-only"]["status"] == "pass", checks["tools.call-read-only"]
    assert checks["tools.call-read-only"]["detail"].startswith("called 3 tools with 7 argument sets")
    for check in ("tools.structured-output", "tools.input-validation"):
        assert checks[check]["status"] == "pass", checks[check]


def test_a_defect_behind_a_fuller_argument_set() -> None:
    assert _check("variant-bad-output")["tools.structured-output"]["status"] == "pass"  # the minimal set only
    found = _check("variant-bad-output", "--probe-tools", "3")["tools.structured-output"]
    assert found["status"] == "fail" and "'unit': 'f'" in found["detail"], found
    assert any("sent" in e and e["sent"]["params"]["arguments"].get("unit") == "f" for e in found["evidence"])


def test_input_validation_probes_every_callable_tool() -> None:
    found = _check("second-takes-wrong-types")["tools.input-validation"]
    assert found["status"] == "fail" and found["detail"].startswith("count:"), found


def test_no_open_world_leaves_out_the_open_world_tool() -> None:
    assert _check("good")["tools.call-read-only"]["detail"] == "called 3 tools, 0 returned isError"
    closed = _check("good", "--no-open-world")["tools.call-read-only"]
    assert closed["status"] == "pass" and closed["detail"] == "called 2 tools, 0 returned isError", closed


@pytest.mark.parametrize(
    ("mode", "check", "status"),
    [
        ("legacy-dup-names", "tools.unique-names-legacy", "warn"),
        ("legacy-bad-schema", "tools.input-schema-legacy", "warn"),  # best practice: advice
    ],
)
def test_legacy_tool_list_checks(mode: str, check: str, status: str) -> None:
    assert {c: _check("legacy-good")[c]["status"] for c in (check, "tools.unique-names")} == {
        check: "pass",
        "tools.unique-names": "skip",
    }
    found = _check(mode)[check]
    assert found["status"] == status, found


def test_reference_read_only_tools_are_closed_world() -> None:
    from trimcp.reference import build_server

    tools = build_server().tools.values()
    read_only = [t for t in tools if (t.definition.get("annotations") or {}).get("readOnlyHint")]
    assert len(read_only) > 20
    # None reaches outside the process, so --no-open-world calls every one of them.
    assert [t.name for t in read_only if t.definition["annotations"].get("openWorldHint") is not False] == []


BAD26 = str(REPO / "tests" / "helpers" / "bad_features26.py")


def _check26(mode: str) -> dict[str, dict[str, Any]]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "trimcp.cli",
            "check",
            "--format",
            "json",
            "--revision",
            "2026-07-28",
            "--only",
            "features.stable-lists",
            "--only",
            "tools.*",
            "--",
            sys.executable,
            BAD26,
            "--mode",
            mode,
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=REPO,
    )
    return {c["id"]: c for c in json.loads(proc.stdout)["checks"]}


def test_stateless_tool_lists_good() -> None:
    checks = _check26("good")
    assert {c: checks[c]["status"] for c in ("features.stable-lists", "tools.x-mcp-header")} == {
        "features.stable-lists": "pass",
        "tools.x-mcp-header": "pass",
    }, checks


@pytest.mark.parametrize(
    ("mode", "check", "needle"),
    [
        ("header-invalid", "tools.x-mcp-header", "'Bad Region'"),
        ("unstable-lists", "features.stable-lists", "tools/list differs between connections"),
    ],
)
def test_stateless_tool_list_defects(mode: str, check: str, needle: str) -> None:
    checks = _check26(mode)
    assert checks[check]["status"] == "fail" and needle in checks[check]["detail"], checks[check]
    assert checks[check]["evidence"], checks[check]
    other = ({"features.stable-lists", "tools.x-mcp-header"} - {check}).pop()
    assert checks[other]["status"] == "pass", checks[other]
