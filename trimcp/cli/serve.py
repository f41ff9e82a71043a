"""``trimcp serve``: run the reference server on stdio, Streamable HTTP, HTTP+SSE or WebSocket.

Theory of operation
-------------------
``add_serve_arguments`` declares the options of the ``serve`` subcommand and
``run_serve`` carries them out; ``trimcp.cli.commands`` only wires the two in.  Without
a listen address the reference server speaks stdio (a client launched us).
With ``--http HOST:PORT`` it serves Streamable HTTP (both eras) at
``http://HOST:PORT/mcp``, with ``--sse`` the 2024-11-05 transport at
``/sse`` (POSTs to ``/messages``), with ``--ws`` WebSocket.  ``--store URL``
(HTTP only) puts sessions, resumable streams and tasks in SQLite or Redis, so
that the server survives a restart or runs as several replicas; a store that
cannot be opened is one line on stderr and exit status 1.  Port 0 picks a
free port; the bound URL is printed on stderr either way, so a script (or the
conformance suite's launcher) can read it.

The spec advises local servers to bind to 127.0.0.1 only; a host that is not
a loopback address is refused unless ``--allow-remote`` is given (then the
``Host`` header check is off, the ``Origin`` check keeps allowing only local
origins).  The limits (``serve_http``'s and ``serve_websocket``'s keyword
arguments) have flags of their own, one flag for a limit both servers keep
(``--header-timeout``, ``--idle-timeout``, ``--max-connections``); a bad value
is an argparse usage error (exit 2, ``exits.py``).  Nothing here imports the HTTP codec or trio-websocket until a server starts.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from typing import Any, TypeVar

import trio

from .exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE

E = TypeVar("E", bound=BaseException)

#: ``serve_websocket``'s own default (not imported: that would import trio-websocket).
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve Streamable HTTP (both eras) at http://HOST:PORT/mcp",
    )
    where.add_argument(
        "--sse",
        metavar="HOST:PORT",
        help="serve the legacy HTTP+SSE transport (2024-11-05) at http://HOST:PORT/sse",
    )
    where.add_argument("--ws", metavar="HOST:PORT", help="serve WebSocket at ws://HOST:PORT")
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a HOST that is not a loopback address (the spec advises against it)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        metavar="HOST[:PORT]",
        help="a Host header the HTTP server answers (repeatable; default: its own loopback "
        "address): the name clients reach it by through a load balancer or proxy",
    )
    parser.add_argument(
        "--json-response",
        action="store_true",
        help="answer Streamable HTTP requests with one JSON body instead of an SSE stream",
    )
    parser.add_argument("--page-size", type=int, default=5, help="items per */list page (0: no pagination)")
    parser.add_argument(
        "--store",
        type=_store_url,
        default=None,
        metavar="URL",
        help="where sessions, resumable streams and tasks live (--http / --sse): memory (default), "
        "sqlite:///PATH (kept across restarts) or redis://HOST:PORT/DB (shared by replicas; "
        "needs trimcp[redis]); options as ?lease=SECONDS",
    )
    shared = parser.add_argument_group("limits (--http, --sse and --ws)")
    shared.add_argument(
        "--header-timeout",
        type=_seconds,
        default=10.0,
        metavar="S",
        help="seconds for a whole request head, or a whole WebSocket upgrade, to arrive (default 10)",
    )
    shared.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=3600.0,
        metavar="S",
        help="seconds before an idle session is closed; a WebSocket connection is its session, "
        "closed (1001) after this long with no message either way and no request outstanding "
        "(default 3600)",
    )
    shared.add_argument(
        "--max-connections",
        type=_count,
        default=1000,
        metavar="N",
        help="open connections at most; more get 503 (default 1000)",
    )
    limits = parser.add_argument_group("HTTP limits (--http / --sse)")
    limits.add_argument(
        "--connection-idle-timeout",
        type=_seconds,
        default=60.0,
        metavar="S",
        help="seconds a keep-alive connection may wait for its next request (default 60)",
    )
    limits.add_argument(
        "--max-sessions",
        type=_count,
        default=10_000,
        metavar="N",
        help="sessions at most; the least recently active idle one makes room (default 10000)",
    )
    limits.add_argument(
        "--max-body",
        type=parse_size,
        default=16 * 1024 * 1024,
        metavar="BYTES",
        help="largest request body, e.g. 1048576, 512K, 16M, 1G (default 16M)",
    )
    limits.add_argument(
        "--max-body-budget",
        type=parse_size,
        default=None,
        metavar="BYTES",
        help="memory request bodies take at once across connections, each counting what "
        "parsing it takes, 3 x its size or more (default 4 x --max-body; at least 3 x)",
    )
    ws_limits = parser.add_argument_group("WebSocket limits (--ws)")
    ws_limits.add_argument(
        "--max-message",
        type=parse_size,
        default=DEFAULT_MAX_MESSAGE_SIZE,
        metavar="BYTES",
        help="largest incoming message, e.g. 1048576, 512K, 16M; a larger one closes the "
        f"connection (1009) (default {DEFAULT_MAX_MESSAGE_SIZE // (1024 * 1024)}M)",
    )


#: What one body counts against the budget at least, in copies of its size: serve_http
#: refuses a budget that cannot hold one body of --max-body so (jsonrpc.PARSE_COPIES,
#: which the CLI does not import: it uses the public API only; a test keeps them equal).
PARSE_COPIES = 3

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def parse_size(text: str) -> int:
    """``1048576``, ``512K``, ``16M``, ``1G`` (binary units, optional ``B``/``iB``) -> bytes."""
    raw = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = raw[-1:] if raw[-1:] in ("K", "M", "G") else ""
    number = raw[: len(raw) - len(unit)]
    try:
        size = int(float(number) * _UNITS[unit]) if number else -1
    except ValueError:
        size = -1
    if size < 1:
        raise argparse.ArgumentTypeError(f"expected a size such as 1048576, 512K, 16M or 1G, got {text!r}")
    return size


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _store_url(text: str) -> str:
    from ..server import parse_store_url  # (imports the stores: only when --store is given)

    try:
        parse_store_url(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def limit_options(ns: argparse.Namespace) -> dict[str, Any]:
    """The ``serve_http`` keyword arguments the limit flags give."""
    return {
        "header_timeout": ns.header_timeout,
        "connection_idle_timeout": ns.connection_idle_timeout,
        "session_idle_timeout": ns.idle_timeout,
        "max_connections": ns.max_connections,
        "max_sessions": ns.max_sessions,
        "max_body_size": ns.max_body,
        "max_body_budget": ns.max_body_budget,
    }


def ws_limit_options(ns: argparse.Namespace) -> dict[str, Any]:
    """The ``serve_websocket`` keyword arguments the limit flags give."""
    return {
        "handshake_timeout": ns.header_timeout,
        "session_idle_timeout": ns.idle_timeout,
        "max_connections": ns.max_connections,
        "max_message_size": ns.max_message,
    }


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[::1]:PORT``, ``:PORT`` or ``PORT`` -> ``(host, port)``; host defaults to 127.0.0.1."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "", text
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"put an IPv6 address in brackets: [{host}]:{port_text}")
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"expected HOST:PORT, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"port {port} is out of range")
    return host or "127.0.0.1", port


def _announce(kind: str, url: str) -> None:
    sys.stderr.write(f"trimcp: serving the reference server ({kind}) at {url}\n")
    sys.stderr.flush()


async def _serve(ns: argparse.Namespace, host: str, port: int) -> None:
    from ..reference import build_server

    server = build_server(page_size=ns.page_size or None)
    async with trio.open_nursery() as nursery:
        if ns.ws:
            from ..server import serve_websocket

            listener = await nursery.start(partial(serve_websocket, server, host, port, **ws_limit_options(ns)))
            _announce("WebSocket", listener.url)
            return
        from ..server import serve_http

        limits = {**limit_options(ns), "store": ns.store}
        if ns.allowed_host:
            limits["allowed_hosts"] = ns.allowed_host
        if ns.http:
            bound = await nursery.start(
                partial(serve_http, server, host, port, json_response=ns.json_response, **limits)
            )
            _announce("Streamable HTTP", bound.url)
        else:
            bound = await nursery.start(partial(serve_http, server, host, port, path=None, sse_path="/sse", **limits))
            _announce("HTTP+SSE, POST to /messages", bound.url)


def run_serve(ns: argparse.Namespace) -> int:
    address = ns.http or ns.sse or ns.ws
    if address is None:
        from ..reference import main as serve_stdio_reference

        serve_stdio_reference(["--page-size", str(ns.page_size)])
        return EXIT_OK
    try:
        host, port = parse_listen(address)
    except ValueError as exc:
        sys.stderr.write(f"trimcp: {exc}\n")
        return EXIT_USAGE
    budget = ns.max_body_budget
    if budget is not None and budget < PARSE_COPIES * ns.max_body:
        sys.stderr.write(
            f"trimcp: --max-body-budget ({budget}) must hold one body of --max-body "
            f"({ns.max_body}) as it is parsed: {PARSE_COPIES} x its size\n"
        )
        return EXIT_USAGE
    if ns.store is not None and ns.ws:
        sys.stderr.write("trimcp: --store applies to --http and --sse (a WebSocket server keeps its state)\n")
        return EXIT_USAGE
    from ..server import StoreError, is_loopback

    if not is_loopback(host) and not ns.allow_remote:
        sys.stderr.write(
            f"trimcp: refusing to listen on {host}, which is not a loopback address; "
            "pass --allow-remote if you mean it\n"
        )
        return EXIT_USAGE

    # Ctrl-C is the way to stop it: commands.main turns it into one line and exit 130.
    try:
        trio.run(_serve, ns, host, port)
    except StoreError as exc:
        sys.stderr.write(f"trimcp: the store is not usable: {exc}\n")
        return EXIT_FAILED
    except OSError as exc:
        sys.stderr.write(f"trimcp: cannot listen on {address}: {exc}\n")
        return EXIT_USAGE
    except ExceptionGroup as group:
        store_errors, others = group.split(StoreError)
        if store_errors is not None and others is None:
            sys.stderr.write(f"trimcp: the store is not usable: {_first(store_errors)}\n")
            return EXIT_FAILED
        # Trio's nurseries wrap the bind error (port in use, no permission): say it in one line.
        bind_errors, rest = group.split(OSError)
        if bind_errors is None or rest is not None:
            raise
        sys.stderr.write(f"trimcp: cannot listen on {address}: {_first(bind_errors)}\n")
        return EXIT_USAGE
    return EXIT_OK


def _first(group: BaseExceptionGroup[E]) -> E:
    leaf = group.exceptions[0]
    return _first(leaf) if isinstance(leaf, BaseExceptionGroup) else leaf


__all__ = [
    "add_serve_arguments",
    "limit_options",
    "parse_listen",
    "parse_size",
    "run_serve",
    "ws_limit_options",
]
