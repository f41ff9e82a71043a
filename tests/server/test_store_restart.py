"""The SQLite store survives a restart: ``trimcp serve --store sqlite:///PATH`` killed with SIGKILL
and started again on the same file.

What comes back (issue 30): a finished task with its result; a task that was running in the dead
process, reported ``failed`` once that process's lease lapsed (never ``working`` for ever); the
handshake-era session, which the new process continues; and a stream the client had left,
replayed with ``Last-Event-ID`` from where the client was, then answered with an error (the
request died with the process), every event once and in order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
from replica_client import MODERN_TASK_TOOLS, Session, modern_call, read_until_answer, seq_of, task_until
from replica_set import exchange, replica_set

from trimcp.server.store import SqliteStore

pytestmark = pytest.mark.deadline(120)


async def test_tasks_sessions_and_streams_come_back_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    url = f"sqlite://{path}?lease=1"
    got: list[tuple[str, dict[str, Any]]] = []
    async with replica_set(url, count=1) as first:
        quick = await modern_call(first.url, 1, "tools/call", MODERN_TASK_TOOLS["quick"], name="quick_task")
        quick_id = quick["result"]["taskId"]
        await task_until(first.url, quick_id, "completed")
        slow = await modern_call(first.url, 2, "tools/call", MODERN_TASK_TOOLS["slow"], name="slow_compute")
        slow_id = slow["result"]["taskId"]

        session = Session(first.url)
        await session.open()
        rid = session.next_id()
        params = {"name": "slow", "arguments": {"seconds": 60, "steps": 120}, "_meta": {"progressToken": "p"}}
        body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
        async with exchange(first.url, "POST", session.headers, body) as r:
            for _ in range(2):
                event = await r.next_event()
                assert event is not None and event.id is not None
                got.append((event.id, event.data))
        # The client left; the server went on writing the stream to the file.
        key, cursor = seq_of(got[-1][0])
        store = SqliteStore(path)
        async with store.running():
            with trio.fail_after(20):
                while (log := await store.read_stream(session.id, key, cursor)) is None or len(log.events) < 2:
                    await trio.sleep(0.05)
        first.kill(0)
        await first.wait_dead(0)

    async with replica_set(url, count=1) as second:
        done = await modern_call(second.url, 10, "tasks/get", {"taskId": quick_id}, name=quick_id)
        assert done["result"]["status"] == "completed"
        assert done["result"]["result"]["content"][0]["text"] == "quick task done"
        failed = await task_until(second.url, slow_id, "failed")
        assert failed["error"]["code"] == -32603

        session.url = second.url
        echoed = await session.request("tools/call", {"name": "echo", "arguments": {"message": "still here"}})
        assert echoed[-1]["result"]["content"][0]["text"] == "still here"

        resume = {**session.headers, "last-event-id": got[-1][0]}
        with trio.fail_after(30):
            async with exchange(second.url, "GET", resume) as r:
                assert r.status_code == 200
                await read_until_answer(r, rid, got)
    assert [seq_of(i)[1] for i, _ in got] == list(range(1, len(got) + 1))
    progress = [m["params"]["progress"] for _, m in got if m.get("method") == "notifications/progress"]
    assert progress == list(range(1, len(progress) + 1)) and len(progress) >= 4
    assert got[-1][1]["id"] == rid and got[-1][1]["error"]["code"] == -32603
