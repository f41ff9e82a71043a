"""Gemini (the Gemini API and Vertex AI): function declarations, calls and function responses.

Theory of operation
-------------------
Sources (read 2026): the function calling guide
(https://ai.google.dev/gemini-api/docs/function-calling), the API reference of
``FunctionDeclaration`` and ``Schema`` (https://ai.google.dev/api/caching#Schema; Vertex
AI: https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Schema), and the
``google-genai`` SDK's pydantic models (``types.Tool``, ``FunctionDeclaration``,
``Schema``, ``FunctionResponse``; ``extra="forbid"``), against which the tests check
every declaration.

* the request's ``tools`` holds one ``{"functionDeclarations": [...]}``; a declaration is
  ``{"name", "description", "parameters"}``.  ``name`` "must start with a letter or an
  underscore", then letters, digits, underscores, dots and dashes, "with a maximum length
  of 64".  ``parameters`` "can be left unset" for a function without parameters, and must
  be for an object without properties: the API answers ``properties: should be non-empty
  for OBJECT type``.  Parameter names "must start with a letter or an underscore and must
  only contain chars a-z, A-Z, 0-9, or underscores with a maximum length of 64": others are
  sent under another name and mapped back (``repair.py``).
* ``parameters`` is a ``Schema``, "a select subset of an OpenAPI 3.0 schema object": the
  fields ``type`` (one of ``STRING``, ``NUMBER``, ``INTEGER``, ``BOOLEAN``, ``ARRAY``,
  ``OBJECT``, ``NULL``; one value, not a list), ``format``, ``title``, ``description``,
  ``nullable``, ``enum`` (strings, on ``STRING`` only: ``enum: only allowed for STRING
  type``), ``items``, ``minItems``/``maxItems``, ``properties``, ``required``,
  ``minProperties``/``maxProperties``, ``minLength``/``maxLength``, ``pattern``,
  ``minimum``/``maximum``, ``anyOf``.  Formats: ``date-time`` (and ``enum``) for strings
  (``only 'enum' is supported for STRING type`` before ``date-time`` joined it),
  ``float``/``double``, ``int32``/``int64`` for numbers.  No ``$ref``,
  ``additionalProperties``, ``const``, ``exclusiveMinimum``, ``multipleOf``: dropped with a
  note or rewritten (``const`` of a string is a one-value ``enum``).  Every node names its
  type (Vertex: "schema didn't specify the schema type field"); an ``ARRAY`` has ``items``;
  an ``OBJECT`` has properties, so a map of free keys cannot be described (an optional one
  is left out, with a note).  ``null`` is ``nullable: true``.
* the model's calls are ``functionCall`` parts (``name``, ``args``, sometimes ``id``) of the
  candidate's content; the reply goes back into the history as that content (the SDK's
  ``Content`` object is kept as it is: it may carry thought signatures).
* the results go back in one user turn of ``functionResponse`` parts (``name``, the
  call's ``id`` when it had one, ``response``).  ``response`` is a JSON object: "Use
  'output' key to specify function output and 'error' key to specify error details";
  ``structuredContent`` is the output when the tool gave it, the text otherwise.  Images
  (PNG, JPEG, WebP) and PDFs go in the response's ``parts`` as ``inlineData`` (multimodal
  function responses); other blocks are described in the text.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ...schema import EmbeddedResource, ImageContent
from ...schema.content import BlobResourceContents
from .base import EMPTY_RESULT, ProviderFormat, ToolCall, ToolOutcome, as_data, member, parse_arguments, result_text
from .shape import Dialect

__all__ = ["DIALECT", "FORMAT", "to_openapi"]

#: Media a function response carries as ``inlineData``.
INLINE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/webp", "application/pdf"})

DIALECT: Final = Dialect(
    name="Gemini",
    keywords={
        "string": frozenset({"format", "pattern", "minLength", "maxLength"}),
        "number": frozenset({"format", "minimum", "maximum"}),
        "integer": frozenset({"format", "minimum", "maximum"}),
        "array": frozenset({"minItems", "maxItems"}),
        "object": frozenset({"minProperties", "maxProperties"}),
    },
    annotations=frozenset({"title", "description"}),
    formats={
        "string": frozenset({"date-time", "enum"}),
        "number": frozenset({"float", "double"}),
        "integer": frozenset({"int32", "int64"}),
    },
    typed=True,
    free_objects=False,
    items_required=True,
    enum_types=frozenset({"string"}),
    const_as_enum=True,
    type_lists=False,
    null_flag=True,
    extra_keys=False,
)


def to_openapi(node: dict[str, Any]) -> dict[str, Any]:
    """A shaped schema in Gemini's spelling: upper-case types, the rest as it is."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type":
            out[key] = str(value).upper()
        elif key == "items":
            out[key] = to_openapi(value)
        elif key == "properties":
            out[key] = {name: to_openapi(sub) for name, sub in value.items()}
        elif key == "anyOf":
            out[key] = [to_openapi(sub) for sub in value]
        else:
            out[key] = value
    return out


def _entry(name: str, description: str | None, parameters: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if description:
        out["description"] = description
    if parameters.get("properties"):
        out["parameters"] = to_openapi(parameters)
    return out


def _tools_field(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"functionDeclarations": entries}] if entries else []


def _content(reply: Any) -> Any:
    """The model's content of a reply: a ``GenerateContentResponse`` (first candidate), a
    ``Content``, their dicts, or a list of parts; the object as given."""
    candidates = getattr(reply, "candidates", None)
    if candidates is None and isinstance(reply, dict):
        candidates = reply.get("candidates")
    if isinstance(candidates, list | tuple):
        if not candidates:
            return {"role": "model", "parts": []}
        first = candidates[0]
        content = getattr(first, "content", None)
        if content is None and isinstance(first, dict):
            content = first.get("content")
        return content if content is not None else {"role": "model", "parts": []}
    if isinstance(reply, list):
        return {"role": "model", "parts": reply}
    return reply


def _parts(reply: Any) -> list[Any]:
    parts = member(as_data(_content(reply)), "parts")
    return parts if isinstance(parts, list) else []


def _calls(reply: Any) -> list[ToolCall]:
    calls = []
    for part in _parts(reply):
        call = member(part, "function_call", "functionCall")
        if not isinstance(call, dict):
            continue
        arguments, problem = parse_arguments(member(call, "args"))
        ident = member(call, "id")
        calls.append(
            ToolCall(
                name=str(member(call, "name")),
                arguments=arguments,
                id=None if ident is None else str(ident),
                problem=problem,
            )
        )
    return calls


def _text(reply: Any) -> str:
    texts = [member(p, "text") for p in _parts(reply) if not member(p, "thought")]
    return "".join(t for t in texts if isinstance(t, str))


def _media(outcome: ToolOutcome) -> list[dict[str, Any]]:
    result = outcome.result
    parts: list[dict[str, Any]] = []
    for block in result.content if result is not None else ():
        if isinstance(block, ImageContent) and block.mime_type in INLINE_TYPES:
            parts.append({"inlineData": {"mimeType": block.mime_type, "data": block.data}})
        elif (
            isinstance(block, EmbeddedResource)
            and isinstance(block.resource, BlobResourceContents)
            and block.resource.mime_type in INLINE_TYPES
        ):
            parts.append({"inlineData": {"mimeType": block.resource.mime_type, "data": block.resource.blob}})
    return parts


def _result(outcome: ToolOutcome) -> dict[str, Any]:
    result = outcome.result
    response: dict[str, Any]
    if result is None:
        response = {"error": outcome.error or "the call failed"}
    else:
        media = _media(outcome)
        shown = [b for b in result.content if not _carried(b, media)]
        text = result_text(result, shown) if shown or result.structured_content is None else ""
        if result.is_error:
            response = {"error": text or EMPTY_RESULT}
        elif result.structured_content is not None:
            response = {"output": result.structured_content}
            if text and not _duplicates(text, result.structured_content):
                response["content"] = text
        else:
            response = {"output": text or (EMPTY_RESULT if not media else "")}
    body: dict[str, Any] = {"name": outcome.call.name, "response": response}
    if outcome.call.id is not None:
        body["id"] = outcome.call.id
    if result is not None and (parts := _media(outcome)):
        body["parts"] = parts
    return {"functionResponse": body}


def _carried(block: Any, media: list[dict[str, Any]]) -> bool:
    """Whether a block goes as an inline part (then it is not described in the text)."""
    if not media:
        return False
    if isinstance(block, ImageContent):
        return block.mime_type in INLINE_TYPES
    return (
        isinstance(block, EmbeddedResource)
        and isinstance(block.resource, BlobResourceContents)
        and block.resource.mime_type in INLINE_TYPES
    )


def _duplicates(text: str, structured: Any) -> bool:
    """Whether the text is only the structured content serialised again (the spec's advice)."""
    try:
        return bool(json.loads(text) == structured)
    except ValueError:
        return False


def _messages(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"role": "user", "parts": items}] if items else []


FORMAT: Final = ProviderFormat(
    name="gemini",
    dialect=DIALECT,
    name_pattern=re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$"),
    property_key=re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]{0,63}$"),
    description_cap=None,
    entry=_entry,
    tools_field=_tools_field,
    calls=_calls,
    assistant=_content,
    result=_result,
    messages=_messages,
    text=_text,
)
