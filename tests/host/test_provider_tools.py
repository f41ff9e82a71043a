"""Tool lists for Anthropic, OpenAI (default and strict) and Gemini, from the recorded corpus and from fuzzed schemas.

Every list is judged twice, by two readers that share no code with the converter: the SDK's
own types (``helpers/provider_sdks.py``) and ``check_tools``, the documented subsets written
out as rules.  Unit tests pin the reshaping decisions: references and cycles, narrowing,
strict mode's nulls and their repair, renamed keys, the notes, the description caps.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from provider_sdks import check_tool_list
from repo_paths import SPEC
from tool_schema_strategies import deep_schema, fan_out_schema, tool_input_schemas

from trimcp._sansio import schema as s
from trimcp._sansio.host.providers import PROVIDERS, LeftOut, ProviderTools, check_tools, provider_tools
from trimcp._sansio.host.providers.inline import MAX_NODES, inline_schema
from trimcp._sansio.host.providers.tools import convert_tool, provider_format


@attrs.frozen
class Offered:
    """A tool as the host hands it over (``HostTool`` has the same three members)."""

    name: str
    description: str | None
    tool: s.Tool


def offered(name: str, schema: dict[str, Any], description: str | None = "Does a thing.") -> Offered:
    return Offered(name, description, s.Tool(name=name.rsplit("__", 1)[-1], input_schema=schema))


def corpus_tools() -> list[Offered]:
    """Every distinct tool definition of the recorded corpus (all revisions, transports, servers)."""
    seen: dict[str, tuple[str, dict[str, Any]]] = {}
    for path in sorted(SPEC.glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            message = entry["message"]
            if entry["dir"] == "recv" and isinstance(message, dict) and isinstance(message.get("result"), dict):
                for tool in message["result"].get("tools", ()):
                    seen.setdefault(json.dumps(tool, sort_keys=True), (path.name.split(".")[0], tool))
    out = []
    for index, (server, tool) in enumerate(seen.values()):
        parsed = s.from_wire(s.Tool, tool)
        name = f"mcp__{server.replace('-', '_')}__{index}_{tool['name'][:30]}".replace("-", "_")
        out.append(Offered(name, parsed.description, parsed))
    return out


def test_the_corpus_holds_every_server_and_many_tools() -> None:
    tools = corpus_tools()
    servers = {t.name.split("__")[1] for t in tools}
    assert servers == {"reference", "everything", "time", "fetch", "git", "filesystem", "memory", "fastmcp", "mcp_sdk"}
    assert len(tools) >= 140


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_corpus_tool_converts_and_both_judges_accept_the_list(provider: str) -> None:
    tools = corpus_tools()
    offer = provider_tools(tools, provider)
    assert [str(x) for x in offer.left_out] == []
    assert len(offer) == len(tools)
    assert check_tools(provider, offer.tools) == []
    assert check_tool_list(provider, offer.tools) == len(tools)


def _convert_all(schema: dict[str, Any]) -> dict[str, ProviderTools]:
    tool = offered("mcp__fuzz__tool", schema)
    return {provider: provider_tools([tool], provider) for provider in PROVIDERS}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(tool_input_schemas())
def test_a_fuzzed_schema_converts_or_is_left_out_with_a_reason_and_what_converts_is_accepted(
    schema: dict[str, Any],
) -> None:
    for provider, offer in _convert_all(schema).items():
        if offer.left_out:
            (left,) = offer.left_out
            assert left.reason and left.name == "mcp__fuzz__tool"
            assert offer.tools == [] and len(offer) == 0
            continue
        assert check_tools(provider, offer.tools) == [], (provider, json.dumps(offer.tools)[:2000])
        assert check_tool_list(provider, offer.tools) == 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool_input_schemas())
def test_conversion_is_deterministic(schema: dict[str, Any]) -> None:
    first = _convert_all(schema)
    again = _convert_all(json.loads(json.dumps(schema)))
    assert {p: o.tools for p, o in first.items()} == {p: o.tools for p, o in again.items()}


def test_fuzzed_schemas_mostly_convert() -> None:
    """Left-out tools are the exception: the fuzzer's required-but-inexpressible parts."""
    counts = dict.fromkeys(PROVIDERS, 0)
    total = 0

    @settings(max_examples=120, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(tool_input_schemas())
    def count(schema: dict[str, Any]) -> None:
        nonlocal total
        total += 1
        for provider, offer in _convert_all(schema).items():
            counts[provider] += len(offer)

    count()
    # The untyped dialects lose only what no value satisfies (the fuzzer draws a required
    # ``allOf: [false, ...]`` now and then: a tool that can never be called is rightly left out).
    assert counts["anthropic"] == counts["openai"] >= total * 0.95
    assert counts["openai-strict"] >= total * 0.8
    assert counts["gemini"] >= total * 0.6


# ---------------------------------------------------------------- references


def test_references_are_inlined_and_a_cycle_is_described_once() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/node"}},
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
            }
        },
    }
    inlined = inline_schema(schema)
    assert inlined.problem is None and inlined.schema is not None
    node = inlined.schema["properties"]["root"]
    assert node["properties"]["name"] == {"type": "string"}
    assert node["properties"]["kids"]["items"] == {}  # the recursion: described once
    assert list(inlined.notes) == ["root.kids[]: recursive: described once, not again inside itself"]
    assert "$ref" not in json.dumps(inlined.schema) and "$defs" not in inlined.schema


def test_an_anchor_and_a_ref_with_siblings_resolve_and_a_remote_ref_is_not_followed() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#addr", "description": "where"},
            "b": {"$ref": "https://example.com/schema.json"},
        },
        "$defs": {"x": {"$anchor": "addr", "type": "string", "description": "an address"}},
    }
    inlined = inline_schema(schema)
    assert inlined.schema is not None
    assert inlined.schema["properties"]["a"] == {"type": "string", "description": "where"}
    assert inlined.schema["properties"]["b"] == {}
    assert "b: refers to https://example.com/schema.json, which is not followed" in list(inlined.notes)


def test_references_that_fan_out_are_refused_by_size_not_computed() -> None:
    result = convert_tool(provider_format("anthropic"), "mcp__s__t", None, fan_out_schema(30))
    assert isinstance(result, LeftOut)
    assert f"more than {MAX_NODES} nodes" in result.reason


def test_depth_is_capped() -> None:
    inlined = inline_schema(deep_schema(40))
    assert inlined.schema is not None and any("nested deeper than" in n for n in inlined.notes)


def test_allof_is_merged_and_key_only_alternatives_become_a_note() -> None:
    schema = {
        "type": "object",
        "properties": {"phone": {"type": "string"}, "email": {"type": "string"}},
        "allOf": [
            {"properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]},
            {"properties": {"n": {"minimum": 5, "maximum": 9}}},
            {"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]},
        ],
    }
    inlined = inline_schema(schema)
    assert inlined.schema is not None
    assert inlined.schema["properties"]["n"] == {"type": "integer", "minimum": 5, "maximum": 9}
    assert inlined.schema["required"] == ["n"]
    assert list(inlined.notes) == ["arguments: needs one of: phone | email"]


# ---------------------------------------------------------------- shaping


def spec_of(provider: str, schema: dict[str, Any], description: str | None = "Does a thing.") -> Any:
    offer = provider_tools([offered("mcp__s__t", schema, description)], provider)
    assert not offer.left_out, offer.left_out
    return offer.specs["mcp__s__t"]


def test_anthropic_refuses_a_root_union_so_the_shapes_are_joined_with_a_note() -> None:
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            {
                "type": "object",
                "properties": {"id": {"type": "string"}, "path": {"type": "string"}},
                "required": ["id", "path"],
            },
        ]
    }
    spec = spec_of("anthropic", schema)
    params = spec.entry["input_schema"]
    assert "anyOf" not in params and params["type"] == "object"
    assert set(params["properties"]) == {"id", "path"} and params["required"] == ["id"]
    assert spec.notes == ("arguments: one of 2 shapes; their keys are offered together",)
    assert spec.entry["description"].endswith(
        "Schema notes: arguments: one of 2 shapes; their keys are offered together"
    )


def test_strict_mode_requires_everything_makes_optionals_nullable_and_repairs_the_nulls() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 2},
            "limit": {"type": "integer", "default": 10},
            "since": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}},
        },
        "required": ["q"],
    }
    spec = spec_of("openai-strict", schema)
    params = spec.entry["function"]["parameters"]
    assert spec.entry["function"]["strict"] is True
    assert params["required"] == ["q", "limit", "since", "opts"]
    assert params["additionalProperties"] is False
    assert params["properties"]["limit"]["type"] == ["integer", "null"]
    assert params["properties"]["opts"]["type"] == ["object", "null"]
    assert params["properties"]["opts"]["properties"]["deep"]["type"] == ["boolean", "null"]
    assert set(spec.notes) == {"q: minLength 2", "limit: default 10"}
    # What the model sends back: nulls we introduced go, the one the server allows stays.
    sent = {"q": "x", "limit": None, "since": None, "opts": {"deep": None}}
    assert spec.repair.apply(sent) == {"q": "x", "since": None, "opts": {}}


def test_gemini_narrows_what_it_cannot_say_and_leaves_out_what_it_cannot_narrow() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "format": "uri"},
            "level": {"type": "integer", "enum": [1, 2, 3]},
            "meta": {"type": "object", "additionalProperties": {"type": "string"}},
            "value": {},
            "kind": {"const": "fixed"},
            "maybe": {"type": ["string", "null"]},
        },
        "required": ["name"],
    }
    spec = spec_of("gemini", schema)
    props = spec.entry["parameters"]["properties"]
    assert set(props) == {"name", "level", "value", "kind", "maybe"}  # the free-form map is left out
    assert props["name"] == {"type": "STRING"}
    assert props["level"] == {"type": "INTEGER"}
    assert props["value"] == {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}, {"type": "BOOLEAN"}]}
    assert props["kind"] == {"type": "STRING", "enum": ["fixed"]}
    assert props["maybe"] == {"type": "STRING", "nullable": True}
    assert spec.notes == (
        'name: format "uri"',
        "level: one of [1,2,3]",
        "meta: omitted: cannot be described for Gemini",
        "value: any JSON value; offered as text, a number or true/false",
    )
    required_map = {"type": "object", "properties": {"m": {"type": "object"}}, "required": ["m"]}
    left = provider_tools([offered("mcp__s__t", required_map)], "gemini").left_out
    assert [x.reason for x in left] == ["a required argument cannot be described for Gemini"]


def test_a_tool_without_arguments_has_no_gemini_parameters_and_an_empty_object_elsewhere() -> None:
    empty = {"type": "object"}
    assert "parameters" not in spec_of("gemini", empty).entry
    assert spec_of("openai", empty).entry["function"]["parameters"] == {"type": "object", "properties": {}}
    assert spec_of("anthropic", empty).entry["input_schema"] == {"type": "object", "properties": {}}


def test_property_names_a_provider_refuses_are_renamed_and_mapped_back() -> None:
    schema = {"type": "object", "properties": {"filter[id]": {"type": "string"}, "2fa": {"type": "string"}, "ok": {}}}
    anthropic = spec_of("anthropic", schema)
    assert list(anthropic.entry["input_schema"]["properties"]) == ["filter_id_", "2fa", "ok"]
    gemini = spec_of("gemini", schema)
    assert list(gemini.entry["parameters"]["properties"]) == ["filter_id_", "p_2fa", "ok"]
    assert gemini.repair.apply({"filter_id_": "a", "p_2fa": "b", "ok": 1}) == {"filter[id]": "a", "2fa": "b", "ok": 1}
    assert list(spec_of("openai", schema).entry["function"]["parameters"]["properties"]) == ["filter[id]", "2fa", "ok"]


def test_openai_descriptions_fit_1024_characters_and_keep_their_notes() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "if": {"required": ["n"]}}
    spec = spec_of("openai", schema, description="word " * 400)
    text = spec.entry["function"]["description"]
    assert len(text) <= 1024
    assert text.endswith("… [truncated]\n\nSchema notes: arguments: conditional rules (if/then/else)")
    # Anthropic documents no cap: the host's own (2048 by default, applied before) is the only one.
    assert len(spec_of("anthropic", schema, description="word " * 400).entry["description"]) > 2000


def test_notes_are_bounded_and_count_what_they_leave_out() -> None:
    props = {f"p{i:03d}": {"type": "string", "format": "x" * 80} for i in range(40)}
    spec = spec_of("gemini", {"type": "object", "properties": props}, description=None)
    text = spec.entry["description"]
    assert len(text) <= 600 and text.startswith('Schema notes: p000: format "xxx')
    assert text.endswith("more)")
    assert len(spec.notes) == 40


def test_a_name_a_provider_refuses_is_left_out_and_the_rest_of_the_list_stays() -> None:
    tools = [offered("bad name!", {"type": "object"}), offered("mcp__s__good", {"type": "object"})]
    for provider in PROVIDERS:
        offer = provider_tools(tools, provider)
        assert list(offer) == ["mcp__s__good"]
        assert [x.name for x in offer.left_out] == ["bad name!"]
        assert "does not match" in offer.left_out[0].reason


def test_a_schema_that_is_not_an_object_or_accepts_nothing_is_left_out() -> None:
    cases = (
        ({"type": "string"}, "not an object schema"),
        ({"type": "object", "allOf": [False]}, "accepts no value"),
        (False, "is not an object"),
    )
    for schema, reason in cases:
        tool = Offered("mcp__s__t", None, s.Tool(name="t", input_schema={}))
        tool = attrs.evolve(tool, tool=attrs.evolve(tool.tool, input_schema=schema))  # type: ignore[arg-type]
        for provider in PROVIDERS:
            (left,) = provider_tools([tool], provider).left_out
            assert reason in left.reason


def test_strict_limits_leave_out_a_schema_past_them() -> None:
    wide = {"type": "object", "properties": {"e": {"type": "string", "enum": [f"v{i}" for i in range(1001)]}}}
    (left,) = provider_tools([offered("mcp__s__t", wide)], "openai-strict").left_out
    assert "1000 enum values" in left.reason
    deep = deep_schema(11)
    (left,) = provider_tools([offered("mcp__s__t", deep)], "openai-strict").left_out
    assert "cannot be described" in left.reason
    assert provider_tools([offered("mcp__s__t", deep_schema(9))], "openai-strict").left_out == ()


def test_an_unknown_provider_is_a_clear_error() -> None:
    with pytest.raises(
        ValueError, match="unknown provider 'claude' \\(known: anthropic, openai, openai-strict, gemini\\)"
    ):
        provider_tools([], "claude")


# ---------------------------------------------------------------- the judge can fail


@pytest.mark.parametrize(
    ("provider", "tools", "words"),
    [
        ("anthropic", [{"name": "a b", "input_schema": {"type": "object"}}], "must match"),
        ("anthropic", [{"name": "t", "input_schema": {"anyOf": [{"type": "object"}], "type": "object"}}], "top level"),
        ("anthropic", [{"name": "t", "input_schema": {"type": "object", "properties": {"a[]": {}}}}], "key 'a[]'"),
        (
            "openai",
            [{"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}],
            "with properties",
        ),
        (
            "openai",
            [
                {
                    "type": "function",
                    "function": {
                        "name": "t",
                        "description": "x" * 1025,
                        "parameters": {"type": "object", "properties": {}},
                    },
                }
            ],
            "1024",
        ),
        (
            "openai",
            [
                {
                    "type": "function",
                    "function": {"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "array"}}}},
                }
            ],
            "needs items",
        ),
        (
            "openai-strict",
            [
                {
                    "type": "function",
                    "function": {
                        "name": "t",
                        "strict": True,
                        "parameters": {
                            "type": "object",
                            "properties": {"a": {"type": "string"}},
                            "required": [],
                            "additionalProperties": False,
                        },
                    },
                }
            ],
            "every property",
        ),
        (
            "openai-strict",
            [
                {
                    "type": "function",
                    "function": {
                        "name": "t",
                        "strict": True,
                        "parameters": {
                            "type": "object",
                            "properties": {"a": {"type": "string", "default": "x"}},
                            "required": ["a"],
                            "additionalProperties": False,
                        },
                    },
                }
            ],
            "does not support",
        ),
        (
            "gemini",
            [
                {
                    "functionDeclarations": [
                        {"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "STRING"}}}}
                    ]
                }
            ],
            "OBJECT",
        ),
        (
            "gemini",
            [
                {
                    "functionDeclarations": [
                        {
                            "name": "t",
                            "parameters": {"type": "OBJECT", "properties": {"a": {"type": "INTEGER", "enum": ["1"]}}},
                        }
                    ]
                }
            ],
            "only allowed for STRING",
        ),
        (
            "gemini",
            [
                {
                    "functionDeclarations": [
                        {"name": "t", "parameters": {"type": "OBJECT", "properties": {"a": {"type": "OBJECT"}}}}
                    ]
                }
            ],
            "non-empty",
        ),
        (
            "gemini",
            [
                {
                    "functionDeclarations": [
                        {
                            "name": "t",
                            "parameters": {
                                "type": "OBJECT",
                                "properties": {"a": {"type": "STRING", "additionalProperties": False}},
                            },
                        }
                    ]
                }
            ],
            "outside the Schema subset",
        ),
    ],
)
def test_the_documented_subset_checker_refuses_what_the_apis_refuse(provider: str, tools: Any, words: str) -> None:
    problems = check_tools(provider, tools)
    assert any(words in p for p in problems), problems


def test_sdk_types_refuse_what_their_schemas_forbid() -> None:
    """The SDK judge can fail too: Gemini's models forbid unknown fields."""
    bad = [
        {
            "functionDeclarations": [
                {
                    "name": "t",
                    "parameters": {
                        "type": "OBJECT",
                        "properties": {"a": {"type": "STRING", "additionalProperties": False}},
                    },
                }
            ]
        }
    ]
    with pytest.raises(Exception, match="additionalProperties|additional_properties|Extra inputs"):
        check_tool_list("gemini", [{"functionDeclarations": [{"name": "t", "bogus": 1}]}])
    assert check_tools("gemini", bad)


@given(st.data())
@settings(max_examples=20, deadline=None)
def test_repair_leaves_arguments_alone_when_nothing_was_reshaped(data: st.DataObject) -> None:
    value = data.draw(st.dictionaries(st.text(max_size=3), st.integers() | st.none(), max_size=4))
    spec = spec_of("anthropic", {"type": "object", "properties": {"a": {"type": "string"}}})
    assert not spec.repair
    assert spec.repair.apply(value) == value
