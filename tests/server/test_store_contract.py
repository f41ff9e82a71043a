"""The store contract (trimcp.server.store): one suite, run on the memory, SQLite and Redis stores.

Every backend must give the same answers: the session cap and idle timeout, stream logs with
their numbering, caps, gaps and take-over, task moves applied atomically, replica leases and
the bus.  Time is a hand-driven clock given to the store (sessions, leases) or passed in
(tasks), so nothing here sleeps on the wall clock; the Redis store talks to a real
``redis-server`` (conftest ``redis_server``), each test under a key prefix of its own.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio import task_table as tt
from trimcp._sansio.store import bus
from trimcp._sansio.store.location import parse_store_url
from trimcp._sansio.store.records import SessionRecord
from trimcp._sansio.store.stream_log import ORPHANED_REQUEST_CODE, StreamMeta
from trimcp.server.store import EventBatch, MemoryStore, RedisStore, SqliteStore, Store, StoreError

BACKENDS = ("memory", "sqlite", "redis")
T0 = 1_764_000_000.0
_prefixes = itertools.count()


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def make_store(kind: str, clock: Clock, tmp_path: Path, request: pytest.FixtureRequest, **limits: Any) -> Store:
    if kind == "memory":
        return MemoryStore(clock=clock, **limits)
    if kind == "sqlite":
        return SqliteStore(tmp_path / "state.db", clock=clock, **limits)
    url = request.getfixturevalue("redis_server")
    location = parse_store_url(f"{url}?prefix=t{next(_prefixes)}x{id(request)}")
    return RedisStore(location, clock=clock, **limits)


@pytest.fixture(params=BACKENDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def store(kind: str, clock: Clock, tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    made = make_store(kind, clock, tmp_path, request, replay_events=4, replay_bytes=1000, max_tasks=3)
    async with made.running():
        yield made


def record(session_id: str, *, subs: tuple[str, ...] = (), operating: bool = True) -> SessionRecord:
    return SessionRecord(
        session_id,
        T0,
        T0,
        protocol_version="2025-11-25",
        client_info={"name": "c", "version": "1"},
        client_capabilities={"roots": {}},
        operating=operating,
        subscriptions=subs,
    )


def never_busy(_: str) -> bool:
    return False


# ---------------------------------------------------------------- sessions


async def test_a_session_record_round_trips_and_ends(store: Store) -> None:
    assert (await store.add_session(record("s1"), max_sessions=None, busy=never_busy)).admitted
    loaded = await store.load_session("s1")
    assert loaded is not None and loaded.client_capabilities == {"roots": {}} and loaded.operating
    changed = attrs.evolve(loaded, log_level="error")
    assert await store.save_session(changed)
    again = await store.load_session("s1")
    assert again is not None and again.log_level == "error"
    assert await store.end_session("s1")
    assert await store.load_session("s1") is None
    assert not await store.save_session(changed)
    assert not await store.end_session("s1")


async def test_at_the_cap_the_least_recently_active_idle_session_makes_room(store: Store, clock: Clock) -> None:
    for n in range(3):
        clock.now += 1
        assert (await store.add_session(record(f"s{n}"), max_sessions=3, busy=never_busy)).admitted
    clock.now += 1
    store.note_activity("s0")  # s1 is now the least recently active
    clock.now += 1
    admission = await store.add_session(record("s3"), max_sessions=3, busy=never_busy)
    assert admission.admitted and admission.evicted == "s1"
    assert await store.load_session("s1") is None and await store.count_sessions() == 3
    # A busy session is passed over (and counts as active); all busy: refused.
    admission = await store.add_session(record("s4"), max_sessions=3, busy=lambda s: s == "s2")
    assert admission.evicted == "s0"
    refused = await store.add_session(record("s5"), max_sessions=3, busy=lambda _: True)
    assert not refused.admitted and refused.evicted is None
    assert await store.load_session("s5") is None and await store.count_sessions() == 3


async def test_idle_sessions_expire_unless_busy(store: Store, clock: Clock) -> None:
    for name in ("old", "busy", "fresh"):
        await store.add_session(record(name), max_sessions=None, busy=never_busy)
    clock.now += 50
    store.note_activity("fresh")
    clock.now += 60
    ended = await store.expire_sessions(100.0, busy=lambda s: s == "busy")
    assert ended == ["old"]
    assert await store.load_session("busy") is not None  # and it counts as active now
    clock.now += 60
    assert sorted(await store.expire_sessions(100.0, busy=never_busy)) == ["fresh"]
    clock.now += 50
    assert await store.expire_sessions(100.0, busy=never_busy) == ["busy"]


async def test_fan_out_finds_operating_sessions_by_subscription(store: Store) -> None:
    await store.add_session(record("a", subs=("res://x",)), max_sessions=None, busy=never_busy)
    await store.add_session(record("b", subs=("res://y",)), max_sessions=None, busy=never_busy)
    await store.add_session(record("c", subs=("res://x",), operating=False), max_sessions=None, busy=never_busy)
    assert await store.session_ids(subscribed_to="res://x") == ["a"]
    assert sorted(await store.session_ids()) == ["a", "b"]
    loaded = await store.load_session("b")
    assert loaded is not None
    await store.save_session(loaded.with_subscriptions(["res://x"]))
    assert sorted(await store.session_ids(subscribed_to="res://x")) == ["a", "b"]
    assert await store.session_ids(subscribed_to="res://y") == []


# ---------------------------------------------------------------- stream logs


def batch(key: str, *events: tuple[int | None, bytes], final: tuple[Any, ...] = (), done: bool = False) -> EventBatch:
    return EventBatch("s1", key, StreamMeta("r1" if key != "0" else "", final, False), events, done)


async def test_the_standalone_stream_is_numbered_by_the_store(store: Store) -> None:
    assert await store.append_events([batch("0", (None, b"a"), (None, b"b"))]) == [2]
    assert await store.append_events([batch("0", (None, b"c"))]) == [3]
    got = await store.read_stream("s1", "0", 1)
    assert got is not None and got.events == ((2, b"b"), (3, b"c")) and got.last_seq == 3 and not got.gap
    assert await store.read_stream("s1", "nope", 0) is None


async def test_a_post_stream_keeps_its_owners_numbers(store: Store) -> None:
    await store.append_events([batch("k1", (1, b"one"), (2, b"two"))])
    await store.append_events([batch("k1", (2, b"two again"), (3, b"three"))])  # a repeat is ignored
    got = await store.read_stream("s1", "k1", 0)
    assert got is not None and got.events == ((1, b"one"), (2, b"two"), (3, b"three"))
    await store.append_events([batch("k1", (6, b"six"))])  # 4 and 5 never came: lost
    got = await store.read_stream("s1", "k1", 3)
    assert got is not None and got.events == ((6, b"six"),) and got.gap
    got = await store.read_stream("s1", "k1", 5)
    assert got is not None and not got.gap


async def test_the_log_caps_drop_the_oldest_and_say_so(store: Store) -> None:
    # replay_events=4, replay_bytes=1000 (the fixture)
    await store.append_events([batch("k1", *((n, b"x") for n in range(1, 7)))])
    got = await store.read_stream("s1", "k1", 0)
    assert got is not None and [s for s, _ in got.events] == [3, 4, 5, 6] and got.gap
    got = await store.read_stream("s1", "k1", 2)
    assert got is not None and not got.gap
    await store.append_events([batch("k2", (1, b"y" * 600), (2, b"z" * 600))])
    got = await store.read_stream("s1", "k2", 0)
    assert got is not None and got.events == ((2, b"z" * 600),) and got.gap
    await store.append_events([batch("k3", (1, b"w" * 5000))])  # the newest always stays
    got = await store.read_stream("s1", "k3", 0)
    assert got is not None and got.events == ((1, b"w" * 5000),)


async def test_a_finished_stream_takes_nothing_more(store: Store) -> None:
    await store.append_events([batch("k1", (1, b"answer"), final=(7,), done=True)])
    await store.append_events([batch("k1", (2, b"late"))])
    got = await store.read_stream("s1", "k1", 0)
    assert got is not None and got.meta.finished and got.events == ((1, b"answer"),)
    assert not await store.take_over_stream("s1", "k1", 1)


async def test_a_dead_owners_stream_is_answered_with_errors_after_what_the_client_has(store: Store) -> None:
    answered = rpc.serialize(rpc.Response(8, {}))
    await store.append_events(
        [batch("k1", (1, b'{"jsonrpc":"2.0","method":"notifications/progress"}'), (2, answered), final=(7, 8))]
    )
    # The client says it has event 5 (written to it, not yet to the store, when the owner died).
    assert await store.take_over_stream("s1", "k1", 5)
    got = await store.read_stream("s1", "k1", 5)
    assert got is not None and got.meta.finished
    ((seq, payload),) = got.events
    error = json.loads(payload)
    assert seq == 6 and error["id"] == 7 and error["error"]["code"] == ORPHANED_REQUEST_CODE
    assert not await store.take_over_stream("s1", "k1", 5)  # once only


async def test_ending_a_session_drops_its_streams(store: Store) -> None:
    await store.add_session(record("s1"), max_sessions=None, busy=never_busy)
    await store.append_events([batch("0", (None, b"a")), batch("k1", (1, b"b"))])
    await store.end_session("s1")
    assert await store.read_stream("s1", "0", 0) is None
    assert await store.read_stream("s1", "k1", 0) is None


async def test_one_connection_holds_a_stream_for_a_lease(store: Store, clock: Clock) -> None:
    assert await store.hold_stream("s1", "0", "conn-a", force=False)
    assert await store.stream_holder("s1", "0") == "conn-a"
    assert not await store.hold_stream("s1", "0", "conn-b", force=False)
    assert await store.hold_stream("s1", "0", "conn-a", force=False)  # renewal
    assert await store.hold_stream("s1", "0", "conn-b", force=True)  # a resume takes it over
    assert await store.stream_holder("s1", "0") == "conn-b"
    clock.now += store.lease + 1
    assert await store.stream_holder("s1", "0") is None
    assert await store.hold_stream("s1", "0", "conn-a", force=False)


# ---------------------------------------------------------------- tasks


def task(task_id: str, now: float = T0, ttl_ms: int | None = 60_000, runner: str = "r1") -> tt.TaskRecord:
    return tt.new_record(task_id, now, ttl_ms=ttl_ms, poll_interval_ms=500, runner=runner)


async def test_a_task_is_found_once_created_and_ids_are_unique(store: Store) -> None:
    assert await store.get_task("t1", T0) is None
    await store.create_task(task("t1"), T0)
    got = await store.get_task("t1", T0)
    assert got is not None and got.status == tt.WORKING and got.runner == "r1"
    with pytest.raises(tt.TaskStateError, match="already in use"):
        await store.create_task(task("t1"), T0)


async def test_moves_follow_the_diagram_and_a_refused_move_writes_nothing(store: Store) -> None:
    await store.create_task(task("t1"), T0)
    moved = await store.change_task("t1", T0 + 1, lambda r: tt.complete(r, {"content": []}, T0 + 1))
    assert moved is not None and moved[0].status == tt.COMPLETED
    with pytest.raises(tt.TaskStateError, match="from 'completed' to 'cancelled'"):
        await store.change_task("t1", T0 + 2, lambda r: tt.cancel(r, T0 + 2))
    got = await store.get_task("t1", T0 + 2)
    assert got is not None and got.status == tt.COMPLETED and got.result == {"content": []}
    assert await store.change_task("nope", T0, lambda r: None) is None


async def test_concurrent_answers_from_many_replicas_are_all_kept(store: Store) -> None:
    await store.create_task(task("t1"), T0)
    keys = [f"k{n}" for n in range(12)]
    request = {"method": "elicitation/create", "params": {"message": "?"}}
    await store.change_task("t1", T0, lambda r: tt.ask(r, dict.fromkeys(keys, request), T0))

    async def answer(key: str) -> None:
        await store.change_task("t1", T0, lambda r: tt.answer(r, {key: {"action": "accept"}}, T0))

    async with trio.open_nursery() as nursery:
        for key in keys:
            nursery.start_soon(answer, key)
    got = await store.get_task("t1", T0)
    assert got is not None and got.status == tt.WORKING and sorted(got.answers) == sorted(keys)
    taken = await store.change_task("t1", T0, lambda r: tt.take_answers(r, keys[:3]))
    assert taken is not None and sorted(taken[1]) == keys[:3] and len(taken[0].answers) == 9


async def test_the_table_makes_room_from_finished_tasks_and_expires_them(store: Store) -> None:
    # max_tasks=3 (the fixture)
    for n in range(3):
        await store.create_task(task(f"t{n}", T0 + n), T0 + n)
    with pytest.raises(tt.TaskStateError, match="too many tasks"):
        await store.create_task(task("t3"), T0 + 3)
    await store.change_task("t1", T0 + 4, lambda r: tt.complete(r, {}, T0 + 4))
    await store.create_task(task("t3"), T0 + 5)
    assert await store.get_task("t1", T0 + 5) is None  # the finished one made room
    await store.change_task("t3", T0 + 6, lambda r: tt.fail(r, {"code": -1, "message": "x"}, T0 + 6))
    assert await store.get_task("t3", T0 + 6) is not None
    assert await store.get_task("t3", T0 + 5 + 61) is None  # terminal and past its TTL
    assert await store.get_task("t0", T0 + 1000) is not None  # never dropped while working


async def test_an_orphaned_task_fails_with_a_json_rpc_error(store: Store) -> None:
    await store.create_task(task("t1", runner="dead"), T0)
    moved = await store.change_task("t1", T0 + 1, lambda r: tt.orphan(r, T0 + 1))
    assert moved is not None and moved[1]
    wire = moved[0].to_wire(detailed=True)
    assert wire["status"] == "failed" and wire["error"]["code"] == tt.ORPHANED_CODE
    assert "stopped" in wire["statusMessage"]


# ---------------------------------------------------------------- leases and the bus


async def test_this_replica_holds_a_lease(store: Store) -> None:
    assert await store.replica_alive(store.replica_id)
    assert not await store.replica_alive("someone-else")


@pytest.fixture
def shared_kind(kind: str) -> str:
    if kind == "memory":
        pytest.skip("the memory store is one process's: no other replica shares it")
    return kind


async def test_replicas_see_each_others_leases_and_messages(
    shared_kind: str, clock: Clock, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    a = make_store(shared_kind, clock, tmp_path, request)
    location = a.location
    b = (
        SqliteStore(tmp_path / "state.db", clock=clock)
        if shared_kind == "sqlite"
        else RedisStore(location, clock=clock)
    )
    got: list[tuple[bus.BusMessage, str]] = []
    arrived = trio.Event()

    def handler(message: bus.BusMessage, origin: str) -> None:
        got.append((message, origin))
        arrived.set()

    async with b.running():
        b.subscribe(handler)
        async with a.running():
            assert await b.replica_alive(a.replica_id)
            await a.publish(bus.TaskChanged("t9"))
            with trio.fail_after(10):
                await arrived.wait()
            assert got == [(bus.TaskChanged("t9"), a.replica_id)]
            clock.now += a.lease + 1  # a's lease lapses unless renewed
            assert not await b.replica_alive(a.replica_id)
            clock.now -= a.lease + 1
        assert not await b.replica_alive(a.replica_id)  # a clean stop ends it at once


async def test_the_memory_bus_reaches_this_process(store: Store, kind: str) -> None:
    got: list[bus.BusMessage] = []
    stop = store.subscribe(lambda m, _origin: got.append(m))
    if kind != "memory":
        pytest.skip("covered across two stores above")
    await store.publish(bus.SessionEnded("s1"))
    stop()
    await store.publish(bus.SessionEnded("s2"))
    assert got == [bus.SessionEnded("s1")]


def test_bus_messages_round_trip_and_strangers_decode_to_none() -> None:
    for message in (
        bus.SessionEnded("s"),
        bus.SessionChanged("s"),
        bus.ClientMessage("s", '{"jsonrpc":"2.0","id":1,"result":{}}'),
        bus.StreamAppended("s", "k1", 3),
        bus.Notify("notifications/resources/updated", {"uri": "x"}),
        bus.TaskChanged("t"),
    ):
        assert bus.decode(bus.encode(message, "r1")) == (message, "r1")
    for junk in (b"", b"[]", b'{"kind":"what","from":"r"}', b'{"kind":"task"}', b"\xff"):
        assert bus.decode(junk) is None


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("postgres://x", "unknown store 'postgres'"),
        ("sqlite://", "needs a file"),
        ("redis://h:99999/0", "port"),
        ("redis://h/zero", "database is a number"),
        ("memory?lease=1", "expected a store URL"),
        ("sqlite:///x.db?lease=-1", "lease must be a positive"),
        ("redis://h/0?colour=red", "unknown store option 'colour'"),
        ("redis://h/0?prefix=a b", "prefix must be"),
    ],
)
def test_store_urls_that_name_no_store_say_what_is_accepted(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_store_url(url)


def test_store_urls() -> None:
    assert parse_store_url("memory").kind == "memory"
    sq = parse_store_url("sqlite:///var/lib/trimcp.db?lease=3")
    assert (sq.kind, sq.path, sq.lease) == ("sqlite", "/var/lib/trimcp.db", 3.0)
    rd = parse_store_url("redis://:secret@cache.local:6380/2?prefix=mcp")
    assert (rd.host, rd.port, rd.db, rd.password, rd.prefix) == ("cache.local", 6380, 2, "secret", "mcp")
    assert "secret" not in rd.describe()


async def test_a_sqlite_file_of_another_layout_is_refused_not_misread(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    store = SqliteStore(path)
    with pytest.raises(StoreError, match="schema 99"):
        async with store.running():
            pass
