"""The reference server carries the fixtures the official conformance suite's server scenarios call
(tests/conformance/run.py runs the suite itself; this checks the fixtures without Node)."""

from __future__ import annotations

import pytest

from trimcp.reference.server import JSON_SCHEMA_2020_12_INPUT, build_server

FIXTURE_TOOLS = [
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    "test_custom_header",
    "test_reconnection",
]


@pytest.mark.parametrize("name", FIXTURE_TOOLS)
def test_fixture_tool_is_registered(name: str) -> None:
    assert name in build_server().tools


def test_json_schema_2020_12_keywords_survive() -> None:
    schema = build_server().tools["json_schema_2020_12_tool"].definition["inputSchema"]
    for keyword in ("$schema", "$defs", "allOf", "if", "then", "else", "additionalProperties"):
        assert schema[keyword] == JSON_SCHEMA_2020_12_INPUT[keyword]
    assert schema["$defs"]["address"]["$anchor"] == "addressDef"


def test_custom_header_fixture_marks_a_string_parameter() -> None:
    schema = build_server().tools["test_custom_header"].definition["inputSchema"]
    region = schema["properties"]["region"]
    assert region["type"] == "string" and region["x-mcp-header"] == "Region"
