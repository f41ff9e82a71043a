"""The provider SDKs' own types, as the judges of what trimcp shapes for them (no request is sent).

Each function validates JSON data with the SDK's pydantic machinery: the Gemini SDK's
models forbid unknown fields; the Anthropic and OpenAI request types are TypedDicts
(validated with a ``TypeAdapter``, their members then compared with the documented ones)
and OpenAI's response-side ``ChatCompletionFunctionTool`` model.  The data goes through
``json.dumps`` first, as it would on the wire.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pydantic


@cache
def _strict_adapter(kind: Any) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(kind)


def _wire(value: Any) -> Any:
    return json.loads(json.dumps(value))


def check_tool_list(provider: str, tools: list[dict[str, Any]]) -> int:
    """Validate a request's ``tools`` field; return the number of tools the SDK read."""
    data = _wire(tools)
    if provider == "anthropic":
        from anthropic.types import ToolParam

        adapter = _strict_adapter(list[ToolParam])
        read = adapter.validate_python(data)
        for entry in data:
            assert set(entry) <= {"name", "description", "input_schema"}, entry
        return len(read)
    if provider in ("openai", "openai-strict"):
        from openai.types.chat import ChatCompletionFunctionTool, ChatCompletionFunctionToolParam

        _strict_adapter(list[ChatCompletionFunctionToolParam]).validate_python(data)
        models = [ChatCompletionFunctionTool.model_validate(entry) for entry in data]
        for model, entry in zip(models, data):
            assert model.function.name == entry["function"]["name"]
            assert model.model_extra in ({}, None) and model.function.model_extra in ({}, None)
        return len(models)
    from google.genai import types

    read_tools = [types.Tool.model_validate_json(json.dumps(entry)) for entry in data]
    return sum(len(t.function_declarations or ()) for t in read_tools)


def check_reply(provider: str, reply: dict[str, Any]) -> Any:
    """A model reply (as the API's JSON) read by the SDK's response model."""
    if provider == "anthropic":
        from anthropic.types import Message

        return Message.model_validate(_wire(reply))
    if provider in ("openai", "openai-strict"):
        from openai.types.chat import ChatCompletion

        return ChatCompletion.model_validate(_wire(reply))
    from google.genai import types

    return types.GenerateContentResponse.model_validate_json(json.dumps(reply))


def check_result_messages(provider: str, messages: list[dict[str, Any]]) -> None:
    """The messages that carry tool results, read by the SDK's request types."""
    data = _wire(messages)
    if provider == "anthropic":
        from anthropic.types import MessageParam

        _strict_adapter(list[MessageParam]).validate_python(data)
        return
    if provider in ("openai", "openai-strict"):
        from openai.types.chat import ChatCompletionToolMessageParam

        _strict_adapter(list[ChatCompletionToolMessageParam]).validate_python(data)
        for message in data:
            assert set(message) == {"role", "tool_call_id", "content"}, message
        return
    from google.genai import types

    for message in data:
        types.Content.model_validate_json(json.dumps(message))
