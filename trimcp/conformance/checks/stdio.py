"""stdio framing checks, read off the recorded conversation (spec basic/transports "stdio"
up to 2025-11-25; basic/transports/stdio in 2026-07-28).

Theory of operation
-------------------
The stdio transport hands the harness one ``Received`` per line of the server's
stdout, so the recording is the list of lines.  ``stdio.one-line-messages``: each
line must be one whole JSON-RPC message ("Messages are delimited by newlines, and
MUST NOT contain embedded newlines"): a run of lines that do not parse alone but
do parse joined is a message with embedded newlines (pretty-printed JSON, say).
``stdio.no-requests`` (2026-07-28): the server writes no JSON-RPC request; its
questions to the client travel inside InputRequiredResults.

``stdio.shutdown`` judges how the server exits once stdin closes.  A server may ask the
client something (``roots/list``, say) right after its last answer, and wait for the reply
before it exits; closing stdin on it at once would blame the server for the client's haste.
So ``settle`` lets the main connection go quiet first (the client session answers what
arrives), and a server request still unanswered when stdin closes leaves the exit unjudged.
"""

from __future__ import annotations

import json

import trio

from ..._sansio import jsonrpc as rpc
from ..evidence import received
from ..recorder import RecordingStream
from ..results import Results

__all__ = ["check_shutdown", "check_stdio_lines", "settle"]

#: How long the server must stay quiet before the harness closes its stdin, and the bound
#: on the whole wait (a chatty server is not waited for forever).
QUIET = 0.1
SETTLE_BOUND = 2.0


def _pending(recording: RecordingStream) -> list[rpc.Request]:
    """The server's requests the client has not answered (yet)."""
    answered = {m.id for m in recording.sent if isinstance(m, (rpc.Response, rpc.ErrorResponse))}
    return [m for _, m in recording.messages() if isinstance(m, rpc.Request) and m.id not in answered]


async def settle(recording: RecordingStream) -> None:
    """Wait until the server has sent nothing for ``QUIET`` s and every request it sent is
    answered (the client session answers them meanwhile), at most ``SETTLE_BOUND`` s."""
    with trio.move_on_after(SETTLE_BOUND):
        while True:
            seen = len(recording.received)
            await trio.sleep(QUIET)
            if len(recording.received) == seen and not _pending(recording):
                return


def check_shutdown(rec: Results, recording: RecordingStream) -> None:
    """``stdio.shutdown`` once the main connection's server process is gone."""
    pending = _pending(recording)
    signals = getattr(recording.inner, "signals_sent", None)
    if pending and signals:
        # It may have been waiting for the answer: its exit says nothing about EOF.
        rec.skip("stdio.shutdown", f"a server request ({pending[0].method}) was pending at shutdown")
    elif signals:
        rec.warn("stdio.shutdown", f"needed {', '.join(signals)} after stdin closed")
    else:
        rec.ok("stdio.shutdown", f"exit status {getattr(recording.inner, 'returncode', None)}")


def _parses(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def check_stdio_lines(rec: Results, recording: RecordingStream, stateless: bool) -> None:
    lines = [line for line in recording.received if line.strip()]
    if not lines:
        rec.skip("stdio.one-line-messages", "the server wrote nothing on stdout")
    else:
        _one_line(rec, lines)
    if stateless:
        requests = [msg for _, msg in recording.messages() if isinstance(msg, rpc.Request)]
        if requests:
            rec.fail(
                "stdio.no-requests",
                f"{len(requests)} requests on stdout, the first {requests[0].method}",
                [received(rpc.serialize(requests[0]))],
            )
        elif recording.messages():
            rec.ok("stdio.no-requests", f"{len(recording.messages())} messages, no request")
        else:
            rec.skip("stdio.no-requests", "the server sent no messages")


#: The most lines one cut message is looked for across.
_MAX_SPAN = 200


def _one_line(rec: Results, lines: list[bytes]) -> None:
    broken: list[bytes] = []
    run: list[bytes] = []
    for line in [*lines, None]:
        if line is not None and not _parses(line):
            run.append(line)
            continue
        found = _joined_message(run)
        if found is not None:
            broken.append(found)
        run = []
    if broken:
        rec.fail("stdio.one-line-messages", f"{len(broken)} messages span several lines", [received(broken[0])])
    else:
        rec.ok("stdio.one-line-messages", f"{len(lines)} lines, none a message cut by newlines")


def _joined_message(run: list[bytes]) -> bytes | None:
    """The first message in ``run`` (lines that do not parse alone) that parses joined."""
    for start, first in enumerate(run):
        if not first.lstrip().startswith((b"{", b"[")):
            continue
        for end in range(start + 2, min(len(run), start + _MAX_SPAN) + 1):
            joined = b"\n".join(run[start:end])
            if _parses(joined):
                return joined
    return None
