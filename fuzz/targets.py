"""Fuzz targets for trimcp's sans-io core: pure functions of one ``bytes`` input.

Each target raises only what the code under test documents (and ``AssertionError``
when one of its own oracles fails); anything else is a bug.  ``fuzz/run.py``
drives them under atheris or hypothesis; ``tests/fuzzing/test_fuzz_targets.py`` runs them
in the test suite.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from trimcp import Connection, RemoteProtocolError, Role
from trimcp import schema as s
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection.lifecycle import OPERATING
from trimcp._sansio.framing import FramingOverflow
from trimcp._sansio.framing.lines import LineDecoder, frame

#: Small limits, so the oversize paths are reachable from short inputs.
MAX_SIZE = 2048
MAX_LINE = 64


# ------------------------------------------------------------------ parse_payload


def fuzz_parse_payload(data: bytes) -> None:
    """parse_payload never raises except for oversize input; what it accepts round-trips."""
    for payload in _texts(data):
        try:
            parsed = rpc.parse_payload(payload, max_size=MAX_SIZE)
        except RemoteProtocolError:
            assert len(payload) > MAX_SIZE
            continue
        assert isinstance(parsed, rpc.ParsedPayload)
        if not parsed.is_batch:
            assert len(parsed.messages) + len(parsed.invalid) == 1
        for bad in parsed.invalid:
            assert isinstance(bad.error, rpc.ErrorObject)
            assert bad.id is None or rpc.is_valid_id(bad.id)
        for msg in parsed.messages:
            wire = rpc.serialize(msg)
            frame(wire)  # a serialized message never contains a raw newline
            again = rpc.parse_payload(wire, max_size=len(wire))
            assert not again.invalid and again.messages == [msg], (msg, wire)


def _texts(data: bytes) -> list[bytes | str]:
    out: list[bytes | str] = [data]
    try:
        out.append(data.decode("utf-8"))
    except UnicodeDecodeError:
        pass
    return out


# ------------------------------------------------------------------ LineDecoder


def _expected_lines(data: bytes) -> tuple[list[bytes], bool]:
    """What a LineDecoder(MAX_LINE) yields for ``data`` then EOF, and whether it then
    fails (an oversize line: the lines before it are still yielded; a partial line)."""
    *complete, rest = data.split(b"\n")
    lines = []
    for piece in complete:
        if piece.endswith(b"\r"):
            piece = piece[:-1]
        if len(piece) > MAX_LINE:
            return lines, True
        if piece.strip():
            lines.append(piece)
    return lines, len(rest) - rest.endswith(b"\r") > MAX_LINE or bool(rest.strip())


def fuzz_line_decoder(data: bytes) -> None:
    """Feeding the bytes split at random points yields exactly the lines of feeding them
    whole, up to the failure when there is one."""
    expected, fails = _expected_lines(data)
    rng = random.Random(data)
    for _ in range(3):
        cuts = sorted(rng.sample(range(len(data) + 1), min(len(data) + 1, rng.randint(0, 8))))
        chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)]) if b > a]
        decoder = LineDecoder(max_line=MAX_LINE)
        got: list[bytes] = []
        try:
            for chunk in chunks:
                got.extend(decoder.receive_data(chunk))
            got.extend(decoder.receive_data(b""))
        except FramingOverflow as exc:
            got.extend(exc.completed)
            assert fails, (chunks, got)
        except RemoteProtocolError:
            assert fails, (chunks, got)  # a partial line at EOF
        else:
            assert not fails, chunks
            assert decoder.eof and decoder.buffered == 0
        assert got == expected, (chunks, got, expected)


# ------------------------------------------------------------------ Connection


def _handshake() -> tuple[Connection, Connection]:
    client = Connection(
        Role.CLIENT,
        info={"name": "fuzz-client", "version": "0"},
        capabilities={"roots": {"listChanged": True}, "sampling": {}},
        max_message_size=MAX_SIZE,
    )
    server = Connection(
        Role.SERVER,
        info={"name": "fuzz-server", "version": "0"},
        capabilities={"tools": {"listChanged": True}, "resources": {"subscribe": True}, "prompts": {}, "logging": {}},
        max_message_size=MAX_SIZE,
    )
    client.initialize()
    for _ in range(3):
        for msg in client.outgoing():
            server.receive_bytes(rpc.serialize(msg))
        for msg in server.outgoing():
            client.receive_bytes(rpc.serialize(msg))
    assert client.state is OPERATING and server.state is OPERATING
    # Something pending on both sides, so answers in the input can hit a waiter.
    client.send_request("tools/list")
    client.send_request("tools/call", {"name": "x"}, progress_token="tok")
    server.send_request("roots/list")
    client.outgoing()
    server.outgoing()
    return client, server


def fuzz_connection(data: bytes) -> None:
    """An established Connection (either role) survives any input, whole or line by line."""
    for feed_lines in (False, True):
        for conn in _handshake():
            texts = [line for line in data.split(b"\n") if line.strip()] if feed_lines else [data]
            for text in texts:
                try:
                    conn.receive_bytes(text)
                except RemoteProtocolError:
                    assert len(text) > MAX_SIZE
                    continue
                for msg in conn.outgoing():
                    frame(rpc.serialize(msg))
            conn.close()


# ------------------------------------------------------------------ schema

SCHEMA_TARGETS: tuple[Any, ...] = (
    s.InitializeResult,
    s.ListToolsResult,
    s.CallToolResult,
    s.ReadResourceResult,
    s.GetPromptResult,
    s.ListPromptsResult,
    s.CreateMessageRequestParams,
    s.ContentBlock,
)


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def fuzz_schema(data: bytes) -> None:
    """from_wire raises only SchemaError; what it accepts round-trips through to_wire."""
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return
    for cls in SCHEMA_TARGETS:
        try:
            obj = s.from_wire(cls, value)
        except s.SchemaError:
            continue
        assert s.to_wire(obj) == value, cls


TARGETS: dict[str, Callable[[bytes], None]] = {
    "parse_payload": fuzz_parse_payload,
    "line_decoder": fuzz_line_decoder,
    "connection": fuzz_connection,
    "schema": fuzz_schema,
}

# The other areas' targets, each in a file of its own.
from fuzz.targets_h1 import TARGETS as _H1
from fuzz.targets_h1_server import TARGETS as _H1_SERVER
from fuzz.targets_host import TARGETS as _HOST
from fuzz.targets_wire import TARGETS as _WIRE

TARGETS.update(_H1)
TARGETS.update(_H1_SERVER)
TARGETS.update(_HOST)
TARGETS.update(_WIRE)
