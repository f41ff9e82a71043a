#!/usr/bin/env python3
"""What a heartbeat costs (issue 11): bytes on the wire and client CPU per heartbeat.

Theory of operation
-------------------
``open_client(heartbeat_interval=...)`` sends a ``ping`` (handshake era) or a
``server/discover`` (stateless era, 2026-07-28) after the server has been quiet for the
interval (trimcp/_trio/heartbeat.py).  This measures one heartbeat's cost by sending the
same request the heartbeat sends, ``--count`` times in a row, over stdio:

- bytes out and back per heartbeat, counted on the serialized messages (a wrapper around
  the client's stream);
- client CPU per heartbeat (``time.process_time`` of this process; the server's CPU is
  not ours);
- what that makes per idle session and hour at an interval of ``--interval`` seconds.

Servers: the reference server (``python -m trimcp.reference``) in both eras, and the
benchmarks' raw floor server (handshake era only).  Everything runs on this machine, over
pipes; nothing listens on the network.

Run:   python benchmarks/bench_heartbeat.py [--count 2000] [--interval 30]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import trio

import trimcp
from trimcp._sansio import jsonrpc
from trimcp._trio.heartbeat import heartbeat_request
from trimcp._trio.stream import NO_META, MessageStream, Received, SendMeta
from trimcp._trio.transports.stdio import open_stdio_process

HERE = Path(__file__).resolve().parent


class Counting:
    """A MessageStream that counts the bytes each way (as serialized, newline included)."""

    def __init__(self, inner: MessageStream) -> None:
        self.inner = inner
        self.sent = self.received = 0

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        self.sent += len(jsonrpc.serialize(message)) + 1
        await self.inner.send(message, meta)

    async def receive(self) -> Any:
        item = await self.inner.receive()
        if isinstance(item, Received):
            self.received += len(item.data) + 1
        return item

    async def aclose(self) -> None:
        await self.inner.aclose()

    def describe(self) -> str:
        return self.inner.describe()


async def measure(command: list[str], revision: str | None, count: int) -> dict[str, Any]:
    async with open_stdio_process(command) as raw:
        stream = Counting(raw)
        async with trimcp.open_client(stream, revision=revision) as client:
            method, params = heartbeat_request(client.driver)
            for _ in range(50):  # warm up
                await client.driver.request(method, params)
            sent, received = stream.sent, stream.received
            cpu = time.process_time()
            for _ in range(count):
                await client.driver.request(method, params, reset_timeout_on_progress=False)
            cpu = time.process_time() - cpu
            return {
                "method": method,
                "era": client.era.value,
                "bytes_out": (stream.sent - sent) / count,
                "bytes_back": (stream.received - received) / count,
                "cpu_us": cpu / count * 1e6,
            }


async def main(args: argparse.Namespace) -> None:
    python = sys.executable
    cases = [
        ("reference, handshake", [python, "-m", "trimcp.reference"], "2025-11-25"),
        ("reference, stateless", [python, "-m", "trimcp.reference"], "2026-07-28"),
        ("raw floor, handshake", [python, str(HERE / "raw_server.py")], "2025-11-25"),
    ]
    print(
        f"{args.count} heartbeats each, over stdio; cost of one idle session at one heartbeat every {args.interval:g} s"
    )
    print(
        f"{'server':24} {'request':16} {'bytes out':>9} {'bytes back':>10} {'client CPU':>11} "
        f"{'per hour':>9} {'CPU share':>9}"
    )
    for name, command, revision in cases:
        row = await measure(command, revision, args.count)
        per_hour = 3600 / args.interval
        kb_hour = (row["bytes_out"] + row["bytes_back"]) * per_hour / 1024
        share = row["cpu_us"] / 1e6 / args.interval * 100
        print(
            f"{name:24} {row['method']:16} {row['bytes_out']:9.0f} {row['bytes_back']:10.0f} "
            f"{row['cpu_us']:9.0f} µs {kb_hour:6.0f} kB {share:8.4f}%"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument(
        "--interval", type=float, default=30.0, help="the heartbeat interval the per-hour columns assume (seconds)"
    )
    trio.run(main, parser.parse_args())
