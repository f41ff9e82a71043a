"""Sampling with tools: the harness plays a model that uses a tool once, then judges the server's reply.

Theory of operation
-------------------
Spec: ``client/sampling`` (2025-11-25 and 2026-07-28), Security Considerations:
"Servers MUST ensure that when replying to a `stopReason: "toolUse"`, each
`ToolUseContent` item is responded to with a `ToolResultContent` item with a
matching `toolUseId`, and that the user message contains only tool results".

The harness declares ``sampling.tools``.  ``ToolUseSampler`` answers a
``sampling/createMessage`` that offers tools (and does not forbid them with
``toolChoice.mode: "none"``, nor already carries tool results) with
``stopReason: "toolUse"`` and one ``tool_use`` block naming the first offered
tool; everything else gets the canned text answer.  It does so at most
``MAX_TOOL_USES`` times a run, so a server that loops is not fed forever.  The
harness never offers tools itself: a server that does not sample with tools
sees no difference but the declared capability.

``judge_tool_balance`` reads the tour's recording afterwards, both directions
in the order they crossed.  Each answer the harness sent with ``toolUse``
(handshake era: a JSON-RPC response to the server's request; stateless era:
the ``inputResponses`` entry of the retry) opens an exchange; the server's
next ``sampling/createMessage`` before the exchange ends is its reply, and
must hold one user message made only of ``tool_result`` blocks answering
every ``tool_use`` id.  The exchange ends when the client request it belongs
to gets its final answer (handshake era: any answer to a client request,
since the harness asks one thing at a time; stateless era: an answer that is
not another InputRequiredResult): a server that stops the loop there broke
nothing it could be judged on.  No toolUse answer sent: ``skip``.
"""

from __future__ import annotations

from typing import Any

from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..evidence import received
from ..recorder import RecordingStream
from ..results import Results, Tour

CHECK = "features.sampling-tool-balance"
MAX_TOOL_USES = 2
TOOL_USE_PREFIX = "trimcp-check-tool-use-"
TEXT_ANSWER: dict[str, Any] = {
    "role": "assistant",
    "content": {"type": "text", "text": "trimcp check"},
    "model": "trimcp-check",
}


class ToolUseSampler:
    """The harness's sampling handler: a model that uses an offered tool (at most ``MAX_TOOL_USES`` times)."""

    def __init__(self) -> None:
        self.uses = 0

    async def __call__(self, params: s.CreateMessageRequestParams) -> dict[str, Any]:
        tools = params.tools or []
        forbidden = params.tool_choice is not None and params.tool_choice.mode == "none"
        answered = any(isinstance(b, s.ToolResultContent) for m in params.messages for b in m.blocks)
        if not tools or forbidden or answered or self.uses >= MAX_TOOL_USES:
            return TEXT_ANSWER
        self.uses += 1
        return {
            "role": "assistant",
            "model": "trimcp-check",
            "stopReason": "toolUse",
            "content": [
                {"type": "tool_use", "id": f"{TOOL_USE_PREFIX}{self.uses}", "name": tools[0].name, "input": {}}
            ],
        }


def _tool_use_ids(answer: Any) -> list[str]:
    if not isinstance(answer, dict) or answer.get("stopReason") != "toolUse":
        return []
    content = answer.get("content")
    blocks = content if isinstance(content, list) else [content]
    return [
        b["id"] for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


def reply_problem(params: dict[str, Any], ids: list[str]) -> str | None:
    """What the reply to a toolUse answer with ``ids`` gets wrong, or ``None``."""
    messages = params.get("messages")
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        answered = {b.get("toolUseId") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"}
        if not answered & set(ids):
            continue
        missing = [i for i in ids if i not in answered]
        if missing:
            return f"no tool_result for toolUseId {missing[0]!r} in the user message holding the others"
        others = sorted(
            {
                str(b.get("type")) if isinstance(b, dict) else type(b).__name__
                for b in blocks
                if not (isinstance(b, dict) and b.get("type") == "tool_result")
            }
        )
        if others:
            return f"the user message with the tool results also holds {', '.join(others)}"
        return None
    return f"no user message with a tool_result for toolUseId {ids[0]!r}"


def _events(recording: RecordingStream) -> list[tuple[str, rpc.Message]]:
    """Both directions in crossing order: ``("send", msg)`` and ``("recv", msg)``."""
    before = recording.sends_before()
    out: list[tuple[str, rpc.Message]] = []
    sent = 0
    for index, msg in recording.messages():
        while sent < before[index]:
            out.append(("send", recording.sent[sent]))
            sent += 1
        out.append(("recv", msg))
    out.extend(("send", m) for m in recording.sent[sent:])
    return out


def judge_tool_balance(tour: Tour) -> None:
    _judge(tour.rec, tour.recording)


def _judge(rec: Results, recording: RecordingStream) -> None:
    asked: set[rpc.RequestId] = set()  # the server's sampling requests (handshake era)
    pending: list[str] | None = None  # the tool-use ids of the open exchange
    opened = judged = 0
    for direction, msg in _events(recording):
        if direction == "send":
            answers: list[Any] = []
            if isinstance(msg, rpc.Response) and msg.id in asked:
                answers = [msg.result]
            elif isinstance(msg, rpc.Request):
                responses = (msg.params or {}).get("inputResponses")
                answers = list(responses.values()) if isinstance(responses, dict) else []
            for answer in answers:
                if ids := _tool_use_ids(answer):
                    pending, opened = ids, opened + 1
            continue
        for params in _sampling_asks(msg, asked):
            if pending is None:
                continue
            judged += 1
            problem = reply_problem(params, pending)
            if problem:
                rec.fail(CHECK, f"reply to stopReason toolUse ({', '.join(pending)}): {problem}", [received(msg)])
                return
            pending = None
        if isinstance(msg, rpc.ErrorResponse) or (
            isinstance(msg, rpc.Response) and msg.result.get("resultType") != s.ResultType.INPUT_REQUIRED
        ):
            pending = None  # the client request's final answer: the exchange is over
    if judged:
        rec.ok(
            CHECK,
            f"{judged} of {opened} toolUse answers replied to, each tool_use id answered by a "
            "tool_result in a user message of tool results only",
        )
    elif opened:
        rec.skip(CHECK, f"the server answered none of the {opened} toolUse answers with another sampling request")
    else:
        rec.skip(CHECK, "the server did not sample with tools")


def _sampling_asks(msg: rpc.Message, asked: set[rpc.RequestId]) -> list[dict[str, Any]]:
    if isinstance(msg, rpc.Request) and msg.method == "sampling/createMessage":
        asked.add(msg.id)
        return [msg.params or {}]
    if isinstance(msg, rpc.Response) and msg.result.get("resultType") == s.ResultType.INPUT_REQUIRED:
        requests = msg.result.get("inputRequests")
        return [
            r.get("params") or {}
            for r in (requests.values() if isinstance(requests, dict) else ())
            if isinstance(r, dict) and r.get("method") == "sampling/createMessage"
        ]
    return []
