"""A model that replays a script, for testing an agent end to end without a network.

Theory of operation
-------------------
``ScriptedModel(provider, script)`` is an async callable ``model(messages, tools)``, the
shape ``trimcp.host.agent_turn`` takes, that answers turn after turn from ``script``: a
turn is a list of ``call(name, **arguments)`` (the model calls those tools, in that order,
in one reply) or a string (the model's final answer).  It answers in the provider's own
shape, as the API's JSON (an Anthropic ``Message``, an OpenAI ``ChatCompletion``, a Gemini
``GenerateContentResponse``: the tests check them against the SDKs' models), with ids it
makes up (``toolu_0_1``, ``call_0_1``, ``fc_0_1``).

It also behaves like the API where the API would refuse: before each answer it

* checks the ``tools`` it is given against the provider's documented subset
  (``check_tools``): a list the real API would refuse with a 400 fails the test here;
* checks that every scripted call names an offered tool and that its arguments satisfy
  the schema offered for it (so a script cannot call what a real model could not);
* from the second turn on, checks that the conversation it is given ends with a result
  for every call of its previous turn, matched by id (by name for Gemini, whose calls may
  carry no id).

A failed check raises ``ScriptError`` (an ``AssertionError``: a test failure).  Every
request is kept in ``requests`` (the messages and tools, copied) for the test to inspect;
``results(turn)`` gives the results the agent sent back for that turn's calls.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .._sansio.bounded.budget import WorkBudget
from .._sansio.bounded.schemas import BoundedSchema
from .._sansio.host.providers import check_tools
from .._sansio.host.providers.base import as_data, member
from .._sansio.host.providers.tools import provider_format

__all__ = ["ScriptError", "ScriptedCall", "ScriptedModel", "call"]

#: Work units to check one call's arguments against its schema.
ARGUMENT_BUDGET = 200_000


class ScriptError(AssertionError):
    """The agent or the script did something the real model API would not accept."""


@attrs.frozen
class ScriptedCall:
    """One tool call of a scripted turn: the model-facing name and the arguments."""

    name: str
    arguments: Mapping[str, Any] = attrs.field(factory=dict)


def call(name: str, /, **arguments: Any) -> ScriptedCall:
    """``ScriptedCall(name, arguments)``: ``call("mcp__notes__add", text="milk")``."""
    return ScriptedCall(name, arguments)


@attrs.frozen
class ScriptedRequest:
    """What the agent sent for one turn (copies)."""

    messages: list[Any]
    tools: list[dict[str, Any]]


Turn = str | Sequence[ScriptedCall]


class ScriptedModel:
    """Answers from a script in ``provider``'s shape; see the module docstring."""

    def __init__(self, provider: str, script: Sequence[Turn]) -> None:
        self.provider = provider_format(provider).name
        self.script = list(script)
        self.requests: list[ScriptedRequest] = []
        self._sent: list[list[tuple[str, str]]] = []  # per turn: (id, name) of the calls made

    @property
    def finished(self) -> bool:
        """Every turn of the script was played."""
        return len(self.requests) == len(self.script)

    async def __call__(self, messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        turn = len(self.requests)
        if turn >= len(self.script):
            raise ScriptError(f"the script has {len(self.script)} turns; the agent asked for one more")
        data = as_data(list(messages))
        self.requests.append(ScriptedRequest(copy.deepcopy(data), copy.deepcopy(tools)))
        problems = check_tools(self.provider, tools)
        if problems:
            raise ScriptError(f"the {self.provider} API would refuse these tools: " + "; ".join(problems[:10]))
        if turn > 0 and self._sent[-1]:
            self._check_results(data, self._sent[-1])
        step = self.script[turn]
        if isinstance(step, str):
            self._sent.append([])
            return self._reply(turn, step, [])
        offered = _offered(self.provider, tools)
        made: list[tuple[str, str]] = []
        played: list[ScriptedCall] = []
        for k, scripted in enumerate(step):
            schema = offered.get(scripted.name)
            if schema is None:
                known = ", ".join(sorted(offered)) or "none"
                raise ScriptError(f"turn {turn} calls {scripted.name!r}, which was not offered (offered: {known})")
            if self.provider == "openai-strict":  # a strict model sends null for what it leaves out
                scripted = ScriptedCall(scripted.name, _with_nulls(scripted.arguments, schema))
            _check_arguments(scripted, schema)
            made.append((_id(self.provider, turn, k), scripted.name))
            played.append(scripted)
        self._sent.append(made)
        return self._reply(turn, None, list(zip(made, played)))

    def results(self, turn: int) -> list[Any]:
        """The results the agent sent back for the calls of ``turn`` (read from the next request)."""
        if turn + 1 >= len(self.requests):
            raise ScriptError(f"no request after turn {turn} was made")
        return _results(self.provider, self.requests[turn + 1].messages)

    # ------------------------------------------------------------------ shapes

    def _reply(self, turn: int, text: str | None, calls: list[tuple[tuple[str, str], ScriptedCall]]) -> dict[str, Any]:
        if self.provider == "anthropic":
            content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            content += [
                {"type": "tool_use", "id": i, "name": c.name, "input": dict(c.arguments)} for (i, _), c in calls
            ]
            return {
                "id": f"msg_scripted_{turn}",
                "type": "message",
                "role": "assistant",
                "model": "scripted",
                "content": content,
                "stop_reason": "tool_use" if calls else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }
        if self.provider.startswith("openai"):
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = [
                    {"id": i, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for (i, _), c in calls
                ]
            choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
            return {
                "id": f"chatcmpl-scripted-{turn}",
                "object": "chat.completion",
                "created": 0,
                "model": "scripted",
                "choices": [choice],
            }
        parts: list[dict[str, Any]] = [{"text": text}] if text else []
        parts += [{"functionCall": {"id": i, "name": c.name, "args": dict(c.arguments)}} for (i, _), c in calls]
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}]}

    def _check_results(self, messages: list[Any], sent: list[tuple[str, str]]) -> None:
        got = _results(self.provider, messages)
        if self.provider == "gemini":
            answered = [member(r, "id") or member(r, "name") for r in got]
            wanted = [i for i, _ in sent]
            names = [n for _, n in sent]
            if sorted(map(str, answered)) not in (sorted(wanted), sorted(names)):
                raise ScriptError(f"the conversation does not end with a result for each call: {answered} vs {wanted}")
            return
        key = "tool_use_id" if self.provider == "anthropic" else "tool_call_id"
        answered = [member(r, key) for r in got]
        if answered != [i for i, _ in sent]:
            raise ScriptError(
                f"the conversation does not end with a result for each call, in order: {answered} vs {[i for i, _ in sent]}"
            )


def _id(provider: str, turn: int, k: int) -> str:
    prefix = {"anthropic": "toolu", "gemini": "fc"}.get(provider, "call")
    return f"{prefix}_{turn}_{k}"


def _offered(provider: str, tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Offered name -> the JSON Schema of its arguments (Gemini's Schema read back)."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools:
        if provider == "anthropic":
            out[tool["name"]] = tool["input_schema"]
        elif provider.startswith("openai"):
            out[tool["function"]["name"]] = tool["function"]["parameters"]
        else:
            for decl in tool["functionDeclarations"]:
                params = decl.get("parameters") or {"type": "OBJECT", "properties": {}}
                out[decl["name"]] = _from_openapi(params)
    return out


def _from_openapi(node: dict[str, Any]) -> dict[str, Any]:
    """A Gemini Schema as the JSON Schema it stands for."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type":
            out["type"] = str(value).lower()
        elif key == "items":
            out[key] = _from_openapi(value)
        elif key == "properties":
            out[key] = {k: _from_openapi(v) for k, v in value.items()}
        elif key == "anyOf":
            out[key] = [_from_openapi(v) for v in value]
        elif key not in ("nullable", "format", "propertyOrdering", "example"):
            out[key] = value
    if node.get("nullable"):
        out = {"anyOf": [out, {"type": "null"}]}
    return out


def _with_nulls(arguments: Mapping[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` with ``null`` for every property of ``schema`` they leave out (strict mode
    requires every property; a model sends ``null`` for those it means to omit)."""
    out = dict(arguments)
    for name, sub in (schema.get("properties") or {}).items():
        if name not in out:
            out[name] = None
        elif isinstance(out[name], Mapping) and isinstance(sub, dict):
            branches = [sub, *sub.get("anyOf", [])]
            for branch in branches:
                if isinstance(branch, dict) and branch.get("properties"):
                    out[name] = _with_nulls(out[name], branch)
                    break
    return out


def _check_arguments(scripted: ScriptedCall, schema: dict[str, Any]) -> None:
    checker = BoundedSchema(schema)
    if checker.problem is not None:
        raise ScriptError(f"the schema offered for {scripted.name!r} is unusable: {checker.problem}")
    verdict = checker.validate(dict(scripted.arguments), WorkBudget(ARGUMENT_BUDGET))
    best = verdict.best()
    if best is not None:
        raise ScriptError(
            f"the script calls {scripted.name!r} with arguments its offered schema refuses: {best.message[:200]}"
        )


def _results(provider: str, messages: list[Any]) -> list[Any]:
    """The results at the end of the conversation, in the provider's shape (as data)."""
    if not messages:
        return []
    if provider == "anthropic":
        last = messages[-1]
        content = member(last, "content")
        return [b for b in content or [] if member(b, "type") == "tool_result"] if isinstance(content, list) else []
    if provider.startswith("openai"):
        tail = []
        for message in reversed(messages):
            if member(message, "role") != "tool":
                break
            tail.append(message)
        return tail[::-1]
    parts = member(messages[-1], "parts") or []
    return [member(p, "functionResponse", "function_response") for p in parts if isinstance(p, dict)]
