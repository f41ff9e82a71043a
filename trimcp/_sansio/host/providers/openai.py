"""OpenAI Chat Completions: function tools, in the default mode and in strict mode.

Theory of operation
-------------------
Sources (read 2026): the function calling guide
(https://platform.openai.com/docs/guides/function-calling, "Strict mode"), the Structured
Outputs guide's "Supported schemas"
(https://platform.openai.com/docs/guides/structured-outputs#supported-schemas), and the
SDK's types (``openai.types.chat.ChatCompletionFunctionToolParam``,
``shared_params.FunctionDefinition``, ``ChatCompletionToolMessageParam``,
``ChatCompletionMessageFunctionToolCall``), against which the tests check every entry.

* a tool is ``{"type": "function", "function": {"name", "description", "parameters"}}``,
  with ``"strict": true`` in strict mode.  ``name`` matches ``^[a-zA-Z0-9_-]{1,64}$`` (the
  SDK's docstring: "a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum
  length of 64").  The API refuses a description over 1024 characters (``string too
  long. Expected a string with maximum length 1024``), a root without ``properties``
  (``object schema missing properties``) and an array without ``items`` (``array schema
  missing items``), in either mode; so the description is cut to fit, with the notes
  kept, and every array gets ``items``.
* **strict mode** accepts a subset, and says so: the root is an object and not an
  ``anyOf``; every object has ``additionalProperties: false`` and lists *every* property in
  ``required`` (an optional one is made nullable: ``"type": ["string", "null"]``); every
  node has a ``type`` (or is an ``anyOf``); the keywords are ``type``, ``enum``,
  ``const``, ``anyOf``, ``properties``, ``required``, ``additionalProperties``, ``items``,
  ``description``, ``title``, and per type ``pattern``/``format`` (strings; formats
  ``date-time``, ``time``, ``date``, ``duration``, ``email``, ``hostname``, ``ipv4``,
  ``ipv6``, ``uuid``), ``multipleOf``/``maximum``/``exclusiveMaximum``/``minimum``/
  ``exclusiveMinimum`` (numbers), ``minItems``/``maxItems`` (arrays).  ``default`` is
  refused (``'default' is not permitted``), as are ``minLength``/``maxLength``.  Limits:
  10 levels of object nesting, 5000 properties, 1000 enum values, 120 000 characters of
  names and enum values; a schema past them is left out.  ``const`` is written as a
  one-value ``enum`` and ``allOf``/``not``/``if`` are never sent (``inline.py``).
* the model's calls are the assistant message's ``tool_calls`` (``id``,
  ``function.name``, ``function.arguments`` — a JSON *text*); arguments that do not parse
  are answered with the problem, not run.  The reply goes back into the history as
  ``{"role": "assistant", "content", "tool_calls"}``.
* each result is its own message ``{"role": "tool", "tool_call_id", "content"}``, whose
  content is text only: the text blocks, then a line for each block text cannot hold (an
  image, audio, a binary resource).  A tool message has no error flag: a failed call's
  text starts with ``Error:``.  ``structuredContent`` is sent as its JSON when the result
  has no text.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .base import EMPTY_RESULT, ProviderFormat, ToolCall, ToolOutcome, as_data, member, parse_arguments, result_text
from .shape import KEYWORDS_BY_TYPE, Dialect

__all__ = [
    "DIALECT",
    "FORMAT",
    "STRICT_DIALECT",
    "STRICT_FORMAT",
    "STRICT_MAX_CHARACTERS",
    "STRICT_MAX_ENUM_VALUES",
    "STRICT_MAX_PROPERTIES",
]

_NUMBER: Final = frozenset({"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"})

DIALECT: Final = Dialect(
    name="OpenAI",
    keywords=KEYWORDS_BY_TYPE,
    annotations=frozenset({"title", "description", "default", "examples"}),
    items_required=True,
)

#: The formats strict mode documents for strings.
STRICT_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
STRICT_DIALECT: Final = Dialect(
    name="OpenAI strict mode",
    keywords={
        "string": frozenset({"pattern", "format"}),
        "number": _NUMBER,
        "integer": _NUMBER,
        "array": frozenset({"minItems", "maxItems"}),
    },
    annotations=frozenset({"title", "description"}),
    formats={"string": STRICT_FORMATS},
    typed=True,
    strict=True,
    items_required=True,
    const_as_enum=True,
    max_object_depth=10,
    extra_keys=False,
    null_alone=False,
    type_lists=False,
)


#: Strict mode's documented size limits: properties, enum values, characters of names and values.
STRICT_MAX_PROPERTIES: Final = 5000
STRICT_MAX_ENUM_VALUES: Final = 1000
STRICT_MAX_CHARACTERS: Final = 120_000


DESCRIPTION_CAP: Final = 1024


def _entry(strict: bool) -> Any:
    def entry(name: str, description: str | None, parameters: dict[str, Any]) -> dict[str, Any]:
        function: dict[str, Any] = {"name": name}
        if description:
            function["description"] = description
        function["parameters"] = parameters
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}

    return entry


def _message(reply: Any) -> Any:
    """The assistant message of a reply: a ``ChatCompletion`` (first choice), its dict, or the message."""
    data = as_data(reply)
    choices = member(data, "choices")
    if isinstance(choices, list) and choices:
        return member(choices[0], "message") or {}
    return data if isinstance(data, dict) else {}


def _calls(reply: Any) -> list[ToolCall]:
    calls = []
    for raw in member(_message(reply), "tool_calls") or []:
        function = member(raw, "function") or {}
        arguments, problem = parse_arguments(member(function, "arguments"))
        calls.append(
            ToolCall(
                name=str(member(function, "name")), arguments=arguments, id=str(member(raw, "id")), problem=problem
            )
        )
    return calls


def _text(reply: Any) -> str:
    content = member(_message(reply), "content")
    if isinstance(content, list):
        return "\n".join(str(member(p, "text") or "") for p in content)
    return content if isinstance(content, str) else ""


def _assistant(reply: Any) -> dict[str, Any]:
    message = _message(reply)
    out: dict[str, Any] = {"role": "assistant", "content": member(message, "content")}
    calls = member(message, "tool_calls")
    if calls:
        out["tool_calls"] = [
            {
                "id": member(c, "id"),
                "type": "function",
                "function": {
                    "name": member(member(c, "function"), "name"),
                    "arguments": member(member(c, "function"), "arguments") or "{}",
                },
            }
            for c in calls
        ]
    return out


def _result(outcome: ToolOutcome) -> dict[str, Any]:
    result = outcome.result
    if result is None:
        text = f"Error: {outcome.error or 'the call failed'}"
    else:
        text = result_text(result) or EMPTY_RESULT
        if result.is_error:
            text = f"Error: {text}"
    return {"role": "tool", "tool_call_id": outcome.call.id or "", "content": text}


_NAME: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _format(name: str, dialect: Dialect, strict: bool) -> ProviderFormat:
    return ProviderFormat(
        name=name,
        dialect=dialect,
        name_pattern=_NAME,
        property_key=None,
        description_cap=DESCRIPTION_CAP,
        entry=_entry(strict),
        tools_field=lambda entries: entries,
        calls=_calls,
        assistant=_assistant,
        result=_result,
        messages=lambda items: items,
        text=_text,
    )


FORMAT: Final = _format("openai", DIALECT, strict=False)
STRICT_FORMAT: Final = _format("openai-strict", STRICT_DIALECT, strict=True)
