"""Speaking MCP over HTTP by hand to replicas (tests/helpers/replica_set.py): every request on a
connection of its own, so that consecutive requests reach different replicas.

``Session`` is a handshake-era session (2025-11-25: initialize, ``Mcp-Session-Id`` on every
request); ``modern_call`` sends one 2026-07-28 request with its ``_meta`` envelope and mirrored
headers (the tasks extension and elicitation declared); ``task_until`` polls ``tasks/get``.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import trio
from replica_set import Response, exchange

from trimcp._sansio.connection import stateless as sl

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
CLIENT = {"name": "replica-test", "version": "1"}
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}


async def send(
    url: str, headers: dict[str, str], body: Any = None, method: str = "POST"
) -> tuple[int, dict[str, str], str]:
    """One whole exchange: status, headers, body."""
    async with exchange(url, method, headers, body) as r:
        return r.status_code, r.headers, await r.text()


class Session:
    """A handshake-era session spoken by hand, every request on a new connection."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.headers: dict[str, str] = {}
        self._ids = itertools.count(1)

    def next_id(self) -> int:
        return next(self._ids)

    async def open(self, capabilities: dict[str, Any] | None = None) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": "initialize",
            "params": {"protocolVersion": HANDSHAKE, "capabilities": capabilities or {}, "clientInfo": CLIENT},
        }
        status, headers, text = await send(self.url, ACCEPT, body)
        assert status == 200, text
        self.headers = {**ACCEPT, "mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": HANDSHAKE}
        status, _, _ = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert status == 202

    @property
    def id(self) -> str:
        return self.headers["mcp-session-id"]

    async def post(self, body: dict[str, Any]) -> tuple[int, dict[str, str], str]:
        return await send(self.url, self.headers, body)

    async def request(self, method: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Every message of the answer stream, the answer last (a JSON answer: it alone)."""
        rid = self.next_id()
        messages: list[dict[str, Any]] = []
        body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        async with exchange(self.url, "POST", self.headers, body) as r:
            assert r.status_code == 200
            if r.headers.get("content-type", "").startswith("application/json"):
                return [json.loads(await r.text())]  # (the server may answer either way)
            while (event := await r.next_event()) is not None:
                messages.append(event.data)
                if event.data.get("id") == rid and "method" not in event.data:
                    break
        return messages


def modern(rid: int, method: str, params: dict[str, Any], caps: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = sl.build_envelope(MODERN, caps or {}, CLIENT, None)
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": meta}}


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {**ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return headers


async def modern_call(
    url: str, rid: int, method: str, params: dict[str, Any], *, name: str | None = None
) -> dict[str, Any]:
    status, _, text = await send(url, modern_headers(method, name), modern(rid, method, params, TASKS))
    assert status == 200, text
    answer: dict[str, Any] = json.loads(text)
    return answer


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def seq_of(event_id: str | None) -> tuple[str, int]:
    assert event_id is not None
    key, _, seq = event_id.rpartition(".")
    return key, int(seq)


async def read_until_answer(r: Response, rid: int, got: list[tuple[str, dict[str, Any]]]) -> None:
    # (A replica that dies under the stream ends it: what arrived before is kept.)
    while (event := await r.next_event()) is not None:
        assert event.id is not None
        got.append((event.id, event.data))
        if event.data.get("id") == rid and "method" not in event.data:
            return


async def task_status(url: str, rid: int, task_id: str) -> dict[str, Any]:
    answer = await modern_call(url, rid, "tasks/get", {"taskId": task_id}, name=task_id)
    result: dict[str, Any] = answer["result"]
    return result


async def task_until(url: str, task_id: str, status: str, seen: list[str] | None = None) -> dict[str, Any]:
    """Poll ``tasks/get`` (each on the next replica) until the task has ``status``; ``seen``
    collects every status met on the way."""
    seen = [] if seen is None else seen
    task: dict[str, Any] = {}
    with trio.move_on_after(30):
        for rid in itertools.count(1000):
            task = await task_status(url, rid, task_id)
            seen.append(task["status"])
            if task["status"] == status:
                return task
            await trio.sleep(0.1)
    raise AssertionError(f"task {task_id} never became {status}: {seen[-5:]} {task}")


#: Arguments of the reference server's task tools the tests run.
MODERN_TASK_TOOLS: dict[str, dict[str, Any]] = {
    "quick": {"name": "quick_task", "arguments": {}},
    "slow": {"name": "slow_compute", "arguments": {"seconds": 300}},
}
