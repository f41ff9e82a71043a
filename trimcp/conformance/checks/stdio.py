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
"""

from __future__ import annotations

import json

from ..._sansio import jsonrpc as rpc
from ..evidence import received
from ..recorder import RecordingStream
from ..results import Results

__all__ = ["check_stdio_lines"]


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
            rec.fail("stdio.no-requests", f"{len(requests)} requests on stdout, the first {requests[0].method}",
                     [received(rpc.serialize(requests[0]))])
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
