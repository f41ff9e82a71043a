"""Replicas are interchangeable: three ``trimcp serve`` processes sharing a real Redis, behind a
round-robin TCP proxy (tests/helpers/replica_set.py), killed with SIGKILL mid-stream and mid-task.

Every request goes on a TCP connection of its own, so consecutive requests reach different
replicas (the proxy records where each went).  What is checked (issue 30):

* a handshake-era session created on one replica continues on every other - its log level,
  and a server request (elicitation) answered through another replica;
* an SSE stream whose replica is killed resumes on another with ``Last-Event-ID``: every event
  the dead replica produced reaches the client exactly once, in order, and the request is then
  answered with an error (the replica that ran it is gone) numbered after what the client has;
* an ext-tasks task created on one replica is polled, updated and cancelled on others, and one
  whose runner was killed is reported ``failed`` (with its JSON-RPC error) once the runner's
  lease lapsed - never left ``working``;
* a resource update published on one replica reaches a ``subscriptions/listen`` stream and a
  session's GET stream held by others.

The replicas run with ``lease=1``: a killed replica is known dead after one second.  Waits are
bounded polls of real processes (nothing here can run on a virtual clock).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio
from replica_client import (
    Session,
    modern,
    modern_call,
    modern_headers,
    read_until_answer,
    send,
    seq_of,
    task_status,
    task_until,
    text_of,
)
from replica_set import ReplicaSet, exchange, replica_set

from trimcp._sansio.store.location import parse_store_url
from trimcp.reference.server import COUNTER_URI
from trimcp.server.store import RedisStore

pytestmark = pytest.mark.deadline(120)

_prefixes = itertools.count()


@pytest.fixture
def store_url(redis_server: str) -> str:
    return f"{redis_server}?lease=1&prefix=rep{next(_prefixes)}"


@pytest.fixture
async def replicas(store_url: str) -> AsyncIterator[ReplicaSet]:
    async with replica_set(store_url, count=3) as rs:
        yield rs


# ---------------------------------------------------------------- sessions


async def test_a_session_continues_on_every_replica(replicas: ReplicaSet) -> None:
    session = Session(replicas.url)
    await session.open({"elicitation": {}})
    set_level = {
        "jsonrpc": "2.0",
        "id": session.next_id(),
        "method": "logging/setLevel",
        "params": {"level": "warning"},
    }
    assert (await session.post(set_level))[0] == 200
    # Each call below reaches the next replica: every one knows the session, and takes up the
    # new log level as the announcement reaches it (the bus: eventual, README).
    with trio.fail_after(10):
        while True:
            rounds = []
            for _ in range(3):
                messages = await session.request("tools/call", {"name": "log_levels", "arguments": {}})
                assert text_of(messages[-1]["result"]) == "logged at debug, info, warning and error"
                rounds.append([m["params"]["level"] for m in messages if m.get("method") == "notifications/message"])
            if rounds == [["warning", "error"]] * 3:
                break
    assert set(replicas.proxy.routed) == set(replicas.ports)

    # A server request (elicitation) sent by one replica, answered through another.
    rid = session.next_id()
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "elicit", "arguments": {"message": "who?"}},
    }
    async with exchange(replicas.url, "POST", session.headers, body) as r:
        served_by = replicas.proxy.routed[-1]
        question = await r.next_event()
        assert question is not None and question.data["method"] == "elicitation/create"
        answer = {
            "jsonrpc": "2.0",
            "id": question.data["id"],
            "result": {"action": "accept", "content": {"name": "Ada", "age": 36}},
        }
        posted = await session.post(answer)
        assert posted[0] == 202 and replicas.proxy.routed[-1] != served_by
        result = await r.next_event()
    assert result is not None and result.data["id"] == rid
    assert text_of(result.data["result"]) == '{"action": "accept", "content": {"age": 36, "name": "Ada"}}'

    # DELETE on one replica ends it on all.
    status, _, _ = await send(replicas.url, session.headers, method="DELETE")
    assert status in (200, 204)
    with trio.fail_after(10):
        while [(await session.post({"jsonrpc": "2.0", "id": n, "method": "ping"}))[0] for n in range(3)] != [404] * 3:
            pass


async def _events_after(store: RedisStore, session_id: str, key: str, cursor: int, at_least: int) -> int:
    """Wait until the store's log of the stream holds ``at_least`` events after ``cursor``."""
    with trio.fail_after(20):
        while True:
            log = await store.read_stream(session_id, key, cursor)
            if log is not None and len(log.events) >= at_least:
                return log.last_seq
            await trio.sleep(0.05)


@pytest.mark.parametrize("client_left_first", [True, False], ids=["detached", "attached"])
async def test_a_stream_cut_by_a_replicas_death_resumes_elsewhere(
    replicas: ReplicaSet, store_url: str, client_left_first: bool
) -> None:
    session = Session(replicas.url)
    await session.open()
    rid = session.next_id()
    params = {"name": "slow", "arguments": {"seconds": 60, "steps": 120}, "_meta": {"progressToken": "p"}}
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    got: list[tuple[str, dict[str, Any]]] = []
    store = RedisStore(parse_store_url(store_url))
    async with store.running():
        async with exchange(replicas.url, "POST", session.headers, body) as r:
            owner = replicas.index_of(replicas.proxy.routed[-1])
            for _ in range(2):
                event = await r.next_event()
                assert event is not None and event.id is not None
                got.append((event.id, event.data))
            if not client_left_first:
                # Killed while the client reads: what the replica wrote still arrives.
                replicas.kill(owner)
                await replicas.wait_dead(owner)
                await read_until_answer(r, rid, got)
        key, cursor = seq_of(got[-1][0])
        if client_left_first:
            # The client went away; the replica went on, writing the stream to the store.
            await _events_after(store, session.id, key, cursor, 3)
            replicas.kill(owner)
            await replicas.wait_dead(owner)
        resume = {**session.headers, "last-event-id": got[-1][0]}
        with trio.fail_after(30):
            async with exchange(replicas.url, "GET", resume) as r:
                assert r.status_code == 200
                assert replicas.proxy.routed[-1] != replicas.port_of(owner)
                await read_until_answer(r, rid, got)
        stored = await store.read_stream(session.id, key, 0)
    assert stored is not None and stored.meta.finished
    # Nothing lost, nothing repeated: the stream's events arrived once each, numbered 1, 2, ...
    assert [seq_of(i)[1] for i, _ in got] == list(range(1, len(got) + 1))
    assert {s for s, _ in stored.events} <= {seq_of(i)[1] for i, _ in got}
    progress = [m["params"]["progress"] for _, m in got if m.get("method") == "notifications/progress"]
    assert progress == list(range(1, len(progress) + 1)) and len(progress) >= (4 if client_left_first else 2)
    final = got[-1][1]
    assert final["id"] == rid and final["error"]["code"] == -32603
    assert "stopped before answering" in final["error"]["message"]


# ---------------------------------------------------------------- tasks


async def test_a_task_is_polled_updated_and_cancelled_on_other_replicas(replicas: ReplicaSet) -> None:
    created = await modern_call(
        replicas.url,
        1,
        "tools/call",
        {"name": "confirm_delete", "arguments": {"filename": "f.txt"}},
        name="confirm_delete",
    )
    runner = replicas.proxy.routed[-1]
    task_id = created["result"]["taskId"]
    seen: list[str] = []
    asked = await task_until(replicas.url, task_id, "input_required", seen)
    (key,) = asked["inputRequests"]
    answer = {key: {"action": "accept", "content": {"confirm": True}}}
    replicas.proxy.avoid(runner)
    await modern_call(replicas.url, 2, "tasks/update", {"taskId": task_id, "inputResponses": answer}, name=task_id)
    assert replicas.proxy.routed[-1] != runner  # answered through another replica
    done = await task_until(replicas.url, task_id, "completed", seen)
    assert text_of(done["result"]) == "f.txt: deleted (simulated)"

    created = await modern_call(
        replicas.url, 3, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}}, name="slow_compute"
    )
    runner = replicas.proxy.routed[-1]
    task_id = created["result"]["taskId"]
    replicas.proxy.avoid(runner)
    await modern_call(replicas.url, 4, "tasks/cancel", {"taskId": task_id}, name=task_id)
    assert replicas.proxy.routed[-1] != runner
    await task_until(replicas.url, task_id, "cancelled", seen)
    polled_on = set(replicas.proxy.routed)
    assert polled_on == set(replicas.ports)


async def test_a_task_whose_runner_died_fails_once_its_lease_lapses(replicas: ReplicaSet) -> None:
    created = await modern_call(
        replicas.url,
        1,
        "tools/call",
        {"name": "slow_compute", "arguments": {"seconds": 300}},
        name="slow_compute",
    )
    runner = replicas.index_of(replicas.proxy.routed[-1])
    task_id = created["result"]["taskId"]
    seen: list[str] = []
    assert (await task_status(replicas.url, 2, task_id))["status"] == "working"
    replicas.kill(runner)
    await replicas.wait_dead(runner)
    failed = await task_until(replicas.url, task_id, "failed", seen)
    assert failed["error"]["code"] == -32603 and "stopped before it finished" in failed["error"]["message"]
    assert "stopped" in failed["statusMessage"]
    # Failed for good, wherever it is asked.
    for rid in range(3):
        assert (await task_status(replicas.url, 10 + rid, task_id))["status"] == "failed"


# ---------------------------------------------------------------- notifications


async def test_a_resource_update_reaches_listen_streams_on_other_replicas(replicas: ReplicaSet) -> None:
    # 2026-07-28: a subscriptions/listen request held open on one replica.
    listen = modern(1, "subscriptions/listen", {"notifications": {"resourceSubscriptions": [COUNTER_URI]}})
    headers = modern_headers("subscriptions/listen")
    async with exchange(replicas.url, "POST", headers, listen) as r:
        listener = replicas.proxy.routed[-1]
        ack = await r.next_event()
        assert ack is not None and ack.data["method"] == "notifications/subscriptions/acknowledged"
        await modern_call(replicas.url, 2, "tools/call", {"name": "bump_counter", "arguments": {}}, name="bump_counter")
        assert replicas.proxy.routed[-1] != listener
        with trio.fail_after(10):
            update = await r.next_event()
        assert update is not None and update.data["method"] == "notifications/resources/updated"
        assert update.data["params"]["uri"] == COUNTER_URI

    # 2025-11-25: a session subscribed on one replica, its GET stream on another, the update
    # published by a third.
    session = Session(replicas.url)
    await session.open()
    subscribe = {
        "jsonrpc": "2.0",
        "id": session.next_id(),
        "method": "resources/subscribe",
        "params": {"uri": COUNTER_URI},
    }
    assert (await session.post(subscribe))[0] == 200
    async with exchange(replicas.url, "GET", session.headers) as r:
        assert r.status_code == 200
        reader = replicas.proxy.routed[-1]
        await session.request("tools/call", {"name": "bump_counter", "arguments": {}})
        assert replicas.proxy.routed[-1] != reader
        with trio.fail_after(10):
            update = await r.next_event()
        assert update is not None and update.data["method"] == "notifications/resources/updated"
        assert update.data["params"] == {"uri": COUNTER_URI}
