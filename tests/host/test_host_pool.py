"""The host pool (trimcp/host): memo, shared connects, limits, isolation, reconnect, back-off.

These run in virtual time (``autojump_clock``) against real in-process trimcp ``Server``s
reached through a transport kind registered for the test (``pooltest``): each open takes
``SPAWN`` seconds of virtual time, so concurrent connects overlap and the limits show.  The
same behaviour against real subprocesses and HTTP servers is in test_host_pool_real.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from trimcp import (
    ConnectError,
    MessageStream,
    TransportClosed,
    TransportOptions,
    register_transport,
)
from trimcp._trio.memory import memory_stream_pair
from trimcp._trio.transports import registry
from trimcp._trio.transports.registry import Target
from trimcp.config import RemoteServerConfig, StdioServerConfig, parse_config
from trimcp.host import (
    Backoff,
    ServerNotification,
    ServerState,
    ServerUnavailable,
    StatusChanged,
    ToolsChanged,
    UnknownServer,
    config_key,
    open_pool,
)
from trimcp.server import Context, Server, serve_stream

SPAWN = 1.0


def make_server(name: str) -> Server:
    server = Server(name, "1")

    @server.tool(annotations={"readOnlyHint": True})
    async def whoami(ctx: Context) -> str:
        return name

    @server.tool
    async def write(ctx: Context, value: str) -> str:
        return f"wrote {value}"

    return server


class Fleet:
    """Opens an in-process server named by the target; records how many opens overlap."""

    def __init__(self) -> None:
        self.servers: dict[str, Server] = {}
        self.refuse: set[str] = set()
        self.opens: dict[str, int] = {}
        self.in_flight = {"stdio": 0, "remote": 0}
        self.peak = {"stdio": 0, "remote": 0}
        #: the client ends of live connections, to kill them
        self.live: dict[str, MessageStream] = {}

    def server(self, name: str) -> Server:
        return self.servers.setdefault(name, make_server(name))

    @asynccontextmanager
    async def __call__(self, target: Target, options: TransportOptions) -> AsyncIterator[MessageStream]:
        # A stdio entry arrives as its argv (its command is the server's name), a remote one as its URL.
        name = target[0] if isinstance(target, list) else str(target).rsplit("/", 1)[-1]
        kind = "stdio" if name.startswith("local") else "remote"
        self.opens[name] = self.opens.get(name, 0) + 1
        self.in_flight[kind] += 1
        self.peak[kind] = max(self.peak[kind], self.in_flight[kind])
        try:
            await trio.sleep(SPAWN)  # a process starting, a TLS handshake
            if name in self.refuse:
                raise ConnectError(f"connection refused by {name}")
        finally:
            self.in_flight[kind] -= 1
        client_end, server_end = memory_stream_pair()
        async with trio.open_nursery() as nursery:
            server = self.server(name)
            await nursery.start(lambda task_status: serve_stream(server, server_end, task_status=task_status))
            self.live[name] = server_end
            try:
                yield client_end
            finally:
                await client_end.aclose()
                nursery.cancel_scope.cancel()

    async def kill(self, name: str) -> None:
        await self.live.pop(name).aclose()


@pytest.fixture
def fleet(monkeypatch: pytest.MonkeyPatch) -> Fleet:
    monkeypatch.setattr(registry, "TRANSPORTS", registry.TRANSPORTS.copy())
    fleet = Fleet()
    register_transport("pooltest", fleet, schemes=("pooltest",))
    return fleet


def entry(name: str) -> RemoteServerConfig | StdioServerConfig:
    if name.startswith("local"):
        return StdioServerConfig(name=name, command=name)
    return RemoteServerConfig(name=name, transport="http", url=f"http://fleet.invalid/{name}")


def drain(events: Any) -> list[Any]:
    """The events already published, without waiting."""
    out = []
    while True:
        try:
            out.append(events._receive.receive_nowait())
        except trio.WouldBlock:
            return out


def pool_of(names: list[str], **kw: Any) -> Any:
    """A pool of fleet servers: the per-server transport option sends every entry to the fleet."""
    kw.setdefault("random", lambda: 0.0)
    options = {name: {"transport": "pooltest"} for name in names}
    return open_pool({n: entry(n) for n in names}, server_options=options, **kw)


async def test_connect_all_holds_the_limits_and_isolates_failures(fleet: Fleet, autojump_clock: Any) -> None:
    names = [f"local{i}" for i in range(50)] + [f"remote{i}" for i in range(50)]
    fleet.refuse = {"local7", "remote3"}
    seen_connecting = {"stdio": 0, "remote": 0}
    peak_connecting = {"stdio": 0, "remote": 0}
    async with pool_of(names) as pool:
        async with pool.events(max_buffer=10_000) as events:
            began = trio.current_time()
            statuses = await pool.connect_all()
            took = trio.current_time() - began
            for event in drain(events):
                if isinstance(event, StatusChanged) and event.old is not None:
                    kind = "stdio" if event.new.transport == "stdio" else "remote"
                    if event.new.state is ServerState.CONNECTING:
                        seen_connecting[kind] += 1
                    if event.new.state is ServerState.CONNECTING:
                        peak_connecting[kind] = max(peak_connecting[kind], seen_connecting[kind])
                    if event.old.state is ServerState.CONNECTING:
                        seen_connecting[kind] -= 1
        # The transport's own count and the pool's events agree: never more than 3 local
        # and 20 remote connects at once, and the limits were used, not undershot.
        assert fleet.peak == {"stdio": 3, "remote": 20}
        assert peak_connecting == {"stdio": 3, "remote": 20}
        # 50 local servers three at a time, 1 s each: 17 rounds, not 50 (remote ones overlap).
        assert 17 * SPAWN <= took < 18 * SPAWN
        failed = {n for n, st in statuses.items() if st.state is ServerState.FAILED}
        assert failed == {"local7", "remote3"}
        assert "connection refused by local7" in (statuses["local7"].reason or "")
        connected = [st for st in statuses.values() if st.state is ServerState.CONNECTED]
        assert len(connected) == 98
        assert all(st.tools == 2 and st.revision for st in connected)
        # A failed server does not touch the others: they still answer.
        session = await pool.session("remote4")
        assert (await session.call_tool("whoami")).text == "remote4"


async def test_session_is_memoised_and_concurrent_callers_share_one_connect(fleet: Fleet, autojump_clock: Any) -> None:
    async with pool_of(["remote1"]) as pool:
        assert pool.status()["remote1"].state is ServerState.PENDING
        assert fleet.opens == {}  # lazy: nothing connects until used
        sessions = []

        async def use() -> None:
            sessions.append(await pool.session("remote1"))

        async with trio.open_nursery() as nursery:
            for _ in range(10):
                nursery.start_soon(use)
        assert fleet.opens == {"remote1": 1}
        assert len({id(x) for x in sessions}) == 1
        assert await pool.session("remote1") is sessions[0]
        with pytest.raises(UnknownServer, match="no server 'nope' in the pool"):
            await pool.session("nope")


async def test_a_caller_cancelled_while_waiting_does_not_cancel_the_shared_connect(
    fleet: Fleet, autojump_clock: Any
) -> None:
    async with pool_of(["remote1"]) as pool:
        with trio.move_on_after(SPAWN / 2):
            await pool.session("remote1")
        session = await pool.session("remote1")
        assert fleet.opens == {"remote1": 1}
        assert (await session.call_tool("whoami")).text == "remote1"


async def test_a_killed_server_is_reconnected_on_next_use_after_a_backoff(fleet: Fleet, autojump_clock: Any) -> None:
    async with pool_of(["remote1"], backoff=Backoff(base=2.0, factor=2.0, cap=30.0, jitter=0.0)) as pool:
        async with pool.events() as events:
            first = await pool.session("remote1")
            await fleet.kill("remote1")
            # The session's end is noticed from the transport, not from a failing call.
            with trio.fail_after(1):
                while pool.status()["remote1"].state is not ServerState.FAILED:
                    await events.receive()
            status = pool.status()["remote1"]
            assert status.failures == 1 and "closed" in (status.reason or "")
            began = trio.current_time()
            second = await pool.session("remote1")
            waited = trio.current_time() - began
            assert second is not first
            assert 2.0 + SPAWN <= waited < 2.0 + SPAWN + 0.5  # base back-off, then the connect
            assert pool.status()["remote1"].connects == 2
            assert (await second.call_tool("whoami")).text == "remote1"
            # The tools were listed again after the reconnect, and subscribers told.
            kinds = drain(events)
            assert any(isinstance(e, ToolsChanged) and e.name == "remote1" for e in kinds)


async def test_backoff_grows_with_failures_in_a_row_and_is_capped(fleet: Fleet, autojump_clock: Any) -> None:
    fleet.refuse = {"remote1"}
    async with pool_of(["remote1"], backoff=Backoff(base=1.0, factor=2.0, cap=5.0, jitter=0.0)) as pool:
        waits = []
        for _ in range(5):
            began = trio.current_time()
            with pytest.raises(ConnectError, match="refused"):
                await pool.session("remote1")
            waits.append(round(trio.current_time() - began - SPAWN, 3))
        assert waits == [0.0, 1.0, 2.0, 4.0, 5.0]
        assert pool.status()["remote1"].failures == 5
        fleet.refuse.clear()
        await pool.session("remote1")
        assert pool.status()["remote1"].failures == 0


def test_backoff_jitter_stays_in_its_range() -> None:
    backoff = Backoff(base=1.0, factor=2.0, cap=30.0, jitter=0.5)
    assert backoff.delay(0, lambda: 0.9) == 0.0
    assert backoff.delay(3, lambda: 0.0) == 4.0
    assert backoff.delay(3, lambda: 0.999999) == pytest.approx(2.0, abs=1e-5)
    assert backoff.delay(10_000, lambda: 0.0) == 30.0  # no overflow after days of failures
    with pytest.raises(ValueError):
        Backoff(jitter=1.5)


async def test_a_changed_entry_is_a_new_server_and_the_old_connection_closes(fleet: Fleet, autojump_clock: Any) -> None:
    async with pool_of(["remote1"]) as pool:
        old = await pool.session("remote1")
        same = RemoteServerConfig(name="remote1", transport="http", url="http://fleet.invalid/remote1")
        pool.configure({"remote1": same})
        assert await pool.session("remote1") is old  # unchanged: kept
        changed = RemoteServerConfig(
            name="remote1", transport="http", url="http://fleet.invalid/remote1", headers={"X-Env": "staging"}
        )
        assert config_key(changed) != config_key(same)
        pool.configure({"remote1": changed})
        new = await pool.session("remote1")
        assert new is not old
        with trio.fail_after(5):
            await old.wait_closed()
        pool.configure({})
        with pytest.raises(UnknownServer):
            await pool.session("remote1")
        with trio.fail_after(5):
            await new.wait_closed()


async def test_disabled_servers_and_broken_entries_are_statuses_not_connects(fleet: Fleet, autojump_clock: Any) -> None:
    config = parse_config(
        {
            "mcpServers": {
                "off": {"type": "http", "url": "https://example.invalid/mcp", "disabled": True},
                "broken": {"type": "http"},
                "on": {"type": "http", "url": "http://fleet.invalid/on"},
            }
        }
    )
    async with open_pool(config, server_options={"on": {"transport": "pooltest"}}, disabled=["later"]) as pool:
        statuses = await pool.connect_all()
        assert statuses["off"].state is ServerState.DISABLED
        assert statuses["broken"].state is ServerState.FAILED and "url" in (statuses["broken"].reason or "")
        assert statuses["on"].state is ServerState.CONNECTED
        assert fleet.opens == {"on": 1}
        with pytest.raises(ServerUnavailable, match="'off' is disabled"):
            await pool.session("off")
        with pytest.raises(Exception, match="url"):
            await pool.session("broken")
        pool.set_disabled("on")
        assert pool.status()["on"].state is ServerState.DISABLED
        with pytest.raises(ServerUnavailable):
            await pool.session("on")
        pool.set_disabled("on", False)
        assert (await (await pool.session("on")).call_tool("whoami")).text == "on"


async def test_tool_calls_are_retried_once_only_when_harmless(fleet: Fleet, autojump_clock: Any) -> None:
    runs: list[str] = []
    server = fleet.server("remote1")

    @server.tool(annotations={"readOnlyHint": True})
    async def slow_read(ctx: Context) -> str:
        runs.append("read")
        await trio.sleep(10)
        return "read done"

    @server.tool
    async def slow_write(ctx: Context) -> str:
        runs.append("write")
        await trio.sleep(10)
        return "write done"

    async def kill_soon() -> None:
        await trio.sleep(1)
        await fleet.kill("remote1")

    async with pool_of(["remote1"]) as pool:
        await pool.list_tools("remote1")
        # The transport dies under a read-only call: run again once, on a fresh session.
        async with trio.open_nursery() as nursery:
            nursery.start_soon(kill_soon)
            assert (await pool.call_tool("remote1", "slow_read")).text == "read done"
        assert runs == ["read", "read"]
        assert pool.status()["remote1"].connects == 2
        # ... under a write: never run twice.
        async with trio.open_nursery() as nursery:
            nursery.start_soon(kill_soon)
            with pytest.raises(TransportClosed):
                await pool.call_tool("remote1", "slow_write")
        assert runs == ["read", "read", "write"]
        # A call after the loss is a first call on a new session, not a retry.
        assert (await pool.call_tool("remote1", "whoami")).text == "remote1"


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_list_changed_refreshes_and_subscriptions_and_log_level_survive_a_reconnect(
    fleet: Fleet, autojump_clock: Any, revision: str
) -> None:
    server = fleet.server("remote1")

    @server.resource("mem://status", mime_type="text/plain")
    async def status(ctx: Context) -> str:
        return "ok"

    async with pool_of(["remote1"], client_options={"revision": revision}) as pool:
        async with pool.events() as events:
            assert len(await pool.list_tools("remote1")) == 2
            await pool.subscribe_resource("remote1", "mem://status")
            await pool.set_log_level("remote1", "debug")

            async def next_event(kind: type, **match: Any) -> Any:
                with trio.fail_after(5):
                    async for event in events:
                        if isinstance(event, kind) and all(getattr(event, k) == v for k, v in match.items()):
                            return event

            # list_changed: the pool lists again by itself and says so.
            async def extra(ctx: Context) -> str:
                return "new"

            drain(events)
            server.add_tool(extra, "extra")
            await server.notify_tools_list_changed()
            changed = await next_event(ToolsChanged, name="remote1")
            assert sorted(t.name for t in changed.tools) == ["extra", "whoami", "write"]
            assert pool.status()["remote1"].tools == 3
            assert [t.name for t in await pool.list_tools("remote1")] == [t.name for t in changed.tools]

            # After a reconnect the subscription and the log level are back.
            await fleet.kill("remote1")
            with trio.fail_after(5):
                while pool.status()["remote1"].state is not ServerState.FAILED:
                    await trio.sleep(0.01)
            session = await pool.session("remote1")
            assert pool.status()["remote1"].connects == 2
            await trio.sleep(0.5)  # the stateless era reopens its listen stream in the background
            await server.notify_resource_updated("mem://status")
            updated = await next_event(ServerNotification, name="remote1", method="notifications/resources/updated")
            assert updated.params["uri"] == "mem://status"
            if revision == "2026-07-28":
                assert session.log_level == "debug"
            else:
                assert [s.connection.log_level for s in server.sessions] == ["debug"]


async def test_a_server_needing_auth_is_not_probed_again_until_the_mark_expires(
    fleet: Fleet, autojump_clock: Any, tmp_path: Any
) -> None:
    from trimcp import AuthError
    from trimcp.oauth import AuthNeededCache

    now = [1_000_000.0]
    cache = AuthNeededCache(tmp_path / "auth-needed.json", ttl=900, clock=lambda: now[0])
    original = fleet.__call__
    fleet_calls = []

    @asynccontextmanager
    async def wants_auth(target: Target, options: TransportOptions) -> AsyncIterator[MessageStream]:
        fleet_calls.append(target)
        if str(target).endswith("/locked"):
            raise AuthError("HTTP 401: authorization required")
        async with original(target, options) as stream:
            yield stream

    register_transport("pooltest", wants_auth, schemes=("pooltest",), replace=True)
    async with pool_of(["locked", "open"], auth_cache=cache) as pool:
        statuses = await pool.connect_all()
        assert statuses["locked"].state is ServerState.NEEDS_AUTH
        assert "401" in (statuses["locked"].reason or "")
        assert statuses["open"].state is ServerState.CONNECTED
        assert await cache.is_marked("http://fleet.invalid/locked")
    calls = len(fleet_calls)
    # A new pool (another process, later) skips the probe while the mark is fresh ...
    async with pool_of(["locked"], auth_cache=cache) as pool:
        with pytest.raises(ServerUnavailable, match="needs authorization"):
            await pool.session("locked")
        assert len(fleet_calls) == calls
        # ... and tries again once the user logged in.
        await pool.logged_in("locked")
        assert pool.status()["locked"].state is ServerState.PENDING
        with pytest.raises(ServerUnavailable):
            await pool.session("locked")
        assert len(fleet_calls) == calls + 1
    now[0] += 901  # expired: probed again
    async with pool_of(["locked"], auth_cache=cache) as pool:
        with pytest.raises(ServerUnavailable):
            await pool.session("locked")
        assert len(fleet_calls) == calls + 2


async def test_a_list_changed_right_after_the_connect_is_not_lost_in_the_stateless_era(
    fleet: Fleet, autojump_clock: Any
) -> None:
    server = fleet.server("remote1")

    async def extra(ctx: Context) -> str:
        return "new"

    async with pool_of(["remote1"], client_options={"revision": "2026-07-28"}) as pool:
        async with pool.events() as events:
            await pool.session("remote1")  # returns once the pool's listen stream is acknowledged
            drain(events)
            server.add_tool(extra, "extra")
            await server.notify_tools_list_changed()
            with trio.fail_after(5):
                async for event in events:
                    if isinstance(event, ToolsChanged):
                        assert "extra" in [t.name for t in event.tools]
                        break
