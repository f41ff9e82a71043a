"""Record real conversations into the spec/ corpus.

Theory of operation
-------------------
For every server of ``spec/_servers.py``, every revision (2024-11-05, 2025-03-26,
2025-06-18, 2025-11-25, 2026-07-28) and every transport the server has (stdio;
Streamable HTTP; 2024-11-05 HTTP+SSE), ``trimcp.open_client(..., revision=REV)``
talks to it through a ``RecordingStream`` (``trimcp/conformance/recorder.py``) and
runs ``_converse.converse``: lists (every page, following ``nextCursor``), reads,
prompts, tool calls, one with progress, a cancellation, errors, and the tools that
make the server ask the client.  The transcript goes to
``spec/<revision>/<server>.jsonl`` (stdio), ``<server>.http.jsonl`` (Streamable HTTP)
or ``<server>.sse.jsonl`` (HTTP+SSE), with a ``.meta.json`` beside it
(``write_transcript``: the transport, the revision, the server's info, the HTTP
exchanges), in the format ``trimcp check --record`` writes.  Over HTTP every entry
gets an ``"http"`` member (``trimcp.conformance.http_evidence.annotate``): the request headers and the POST's
status on a ``send`` entry, the status and headers of the response that brought a
``recv`` entry.  Volatile values (session ids, ports, the temporary folder, the
recording time) are normalized (``_http.normalize``) so that re-recording an
unchanged server gives an empty diff.  A server that does not speak a revision
(the 2026-07-28 stateless era needs ``server/discover``) gets no file for it; the
summary says so.

Usage: python spec/record.py [--only NAME ...] [--transport stdio|http|sse ...] [--revision REV ...]
"""

from __future__ import annotations

import argparse
import functools
import json
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import trio

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

import _converse
import _http
from _servers import SERVERS, Launch, Server

import trimcp
from trimcp.conformance.http_evidence import annotate
from trimcp.conformance.recorder import HttpCapture, RecordingStream
from trimcp.conformance.transcript import write_transcript

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
SUFFIX = {"stdio": "", "streamable-http": ".http", "sse": ".sse"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_port(port: int, proc: trio.Process, timeout: float = 30.0) -> None:
    with trio.fail_after(timeout):
        while True:
            if proc.returncode is not None:
                raise RuntimeError(f"server exited with {proc.returncode} before listening")
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
            except OSError:
                await trio.sleep(0.1)
                continue
            await stream.aclose()
            return


async def record_one(server: Server, launch: Launch, revision: str, tmp: Path, page: str) -> dict[str, Any] | None:
    """Run one conversation; the transcript and its meta, or None when the server refused the revision."""
    if launch.transport == "stdio":
        async with trimcp.open_stdio_process(launch.argv, env=launch.env, cwd=str(tmp)) as proc:
            rec = RecordingStream(proc)
            outcome = await _converse.run(rec, server, revision, tmp, page)
        return None if outcome is None else {"entries": rec.transcript(), "outcome": outcome, "capture": None}
    assert launch.url is not None
    port = int(launch.url.split(":")[2].split("/")[0])
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            proc = await nursery.start(
                functools.partial(
                    trio.run_process,
                    launch.argv,
                    env=launch.env,
                    cwd=str(tmp),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    check=False,
                )
            )
            try:
                await _wait_port(port, proc)
                from trimcp._trio.transports.http.connect import open_http_stream
                from trimcp._trio.transports.http.pool import PoolExecutor

                capture = HttpCapture(PoolExecutor(connect_timeout=10))
                async with open_http_stream(
                    launch.url, executor=capture, legacy_only=launch.transport == "sse", legacy_fallback=False
                ) as stream:
                    rec = RecordingStream(stream, capture=capture)
                    outcome = await _converse.run(rec, server, revision, tmp, page, capture=capture)
                    entries = rec.transcript()
                    tags = list(rec.http_tags)
                await trio.sleep(0.2)  # let a DELETE at close be answered before the server goes
            finally:
                proc.terminate()
    if outcome is None:
        return None
    return {"entries": annotate(entries, tags, capture, launch.transport), "outcome": outcome, "capture": capture}


async def main(only: list[str], transports: list[str], revisions: list[str]) -> int:
    summary: list[str] = []
    with tempfile.TemporaryDirectory(prefix="trimcp-corpus-") as tmpname:
        tmp = Path(tmpname)
        async with _http.loopback_page() as page:
            for server in SERVERS.values():
                if only and server.name not in only:
                    continue
                if server.setup is not None:
                    server.setup(tmp)
                for transport in ("stdio", "streamable-http", "sse"):
                    if transports and transport.split("-")[-1] not in transports:
                        continue
                    for revision in revisions or REVISIONS:
                        if transport == "sse" and revision != "2024-11-05":
                            continue
                        line = await _record_and_write(server, transport, revision, tmp, page)
                        if line:
                            summary.append(line)
                            print(line, flush=True)
    return 0


async def _record_and_write(server: Server, transport: str, revision: str, tmp: Path, page: str) -> str | None:
    factory = {"stdio": lambda t, p: server.stdio(t), "streamable-http": server.http, "sse": server.sse}[transport]
    if factory is None:
        return None
    launch = factory(tmp, _free_port())
    if launch is None:
        return f"{server.name} ({transport}): not installed, its files are left as they are"
    try:
        got = await record_one(server, launch, revision, tmp, page)
    except Exception as exc:
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        return f"{server.name} {revision} {transport}: FAILED: {type(exc).__name__}: {exc}"
    if got is None:
        return f"{server.name} {revision} {transport}: the server does not speak {revision}"
    outcome: _converse.Outcome = got["outcome"]
    if outcome.revision != revision:
        return f"{server.name} {revision} {transport}: negotiated {outcome.revision}: not written"
    norm = _http.Normalizer(tmp, page)
    entries = [norm.entry(e) for e in got["entries"]]
    meta: dict[str, Any] = {
        "target": server.name,
        "transport": transport,
        "era": outcome.era,
        "revision": outcome.revision,
        "server_info": outcome.server_info,
        "steps": outcome.steps,
    }
    if got["capture"] is not None:
        meta["http_exchanges"] = [norm.exchange(x.as_obj()) for x in got["capture"].exchanges]
    stem = server.name + SUFFIX[transport]
    path = write_transcript(HERE, entries, meta, name=stem)
    # A fixed recording time: re-recording an unchanged server gives an empty diff.
    sidecar = path.with_name(f"{stem}.meta.json")
    data = json.loads(sidecar.read_text(encoding="utf-8"))
    data.pop("recorded_at", None)
    sidecar.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return f"{path.relative_to(REPO)}: {len(entries)} messages"


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], choices=sorted(SERVERS))
    ap.add_argument("--transport", action="append", default=[], choices=("stdio", "http", "sse"))
    ap.add_argument("--revision", action="append", default=[], choices=REVISIONS)
    ns = ap.parse_args()
    sys.exit(trio.run(main, ns.only, ns.transport, ns.revision))
