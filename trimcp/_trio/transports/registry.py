"""The transport registry: how ``open_client`` turns a target into a ``MessageStream``.

Theory of operation
-------------------
A *kind* of transport (``"stdio"``, ``"http"``, ``"sse"``, ``"ws"``,
``"stream"``, or one a user adds: QUIC, gRPC, a test double) is a name bound to
a ``TransportFactory``: a callable taking the target and one frozen
``TransportOptions`` and returning an async context manager that yields a
``MessageStream`` for as long as its block lasts.  ``open_client`` only asks
the registry; it holds no list of transports, so a new one is a
``register_transport`` call and no edit of the connect function.

Resolution (``resolve``) is by the shape of the target, in this order:

* a ``MessageStream`` is used as it is: kind ``"stream"`` (one end of
  ``memory_stream_pair``, a stream opened by hand, a recording wrapper);
* a string starting with ``scheme://`` is a URL: its scheme (case-insensitive,
  RFC 3986 section 3.1) picks the kind it was registered with (``http``/``https``
  -> ``"http"``, ``ws``/``wss`` -> ``"ws"``).  A scheme nobody registered is a
  ``ValueError`` naming the registered ones: running ``foo://x`` as a command
  would fail later and far less clearly;
* anything else is a command line for a subprocess speaking stdio: ``"stdio"``
  (a string is split like a shell would, a sequence is the argv).

A caller may skip resolution by naming the kind (``open_client(url,
transport="sse")``): the 2024-11-05 HTTP+SSE transport has the same URL schemes
as Streamable HTTP, so only the caller can ask for it alone.

The built-in factories import their transport's module when first used, so the
HTTP client, httpx and trio-websocket stay unloaded until a URL asks for them.  A duplicate
registration is an error (two plugins claiming ``quic`` would otherwise shadow
each other silently) unless ``replace=True`` says it is meant.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Protocol, TypeAlias

from ..._errors import LocalProtocolError
from ..._sansio.jsonrpc import DEFAULT_MAX_MESSAGE_SIZE
from ..._sansio.shared_methods import frozen
from ..._shutdown import ShutdownPolicy
from ..stream import MessageStream
from .stdio import open_stdio_process

if TYPE_CHECKING:
    import httpx

    from ..oauth.provider import OAuthProvider
    from .http.executor import Executor
    from .http.headers_helper import HeadersHelper

__all__ = [
    "TRANSPORTS",
    "Target",
    "TransportFactory",
    "TransportOptions",
    "TransportRegistry",
    "register_transport",
    "resolve",
    "transport_for",
]

#: What ``open_client`` accepts: a command line, a URL, or a ready stream.
Target: TypeAlias = Sequence[str] | str | MessageStream

# RFC 3986 scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then "://".
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


@frozen(kw_only=True)
class TransportOptions:
    """The transport options of ``open_client``, handed to every factory as one value.

    A factory reads the ones that mean something to it and ignores the rest:
    ``env``, ``cwd``, ``on_stderr`` and ``shutdown`` (how it is stopped; ``None``:
    the default ``ShutdownPolicy``) are for a subprocess; ``headers``,
    ``headers_helper``, ``http_client``, ``auth`` and ``wrap_executor`` for HTTP (``headers`` for a
    WebSocket too).  ``max_message_size`` caps one incoming message (the stdio
    line cap too); ``connect_timeout`` bounds whatever connecting the transport
    does before it yields its stream.
    """

    env: Mapping[str, str] | None = None
    cwd: str | None = None
    on_stderr: Callable[[str], None] | None = None
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    connect_timeout: float = 30.0
    headers: Mapping[str, str] | None = None
    headers_helper: HeadersHelper | None = None
    http_client: httpx.AsyncClient | None = None
    auth: OAuthProvider | None = None
    shutdown: ShutdownPolicy | None = None
    #: Wraps the HTTP executor of each connection (``trimcp check --record`` keeps every
    #: exchange's status and headers with it); HTTP only.
    wrap_executor: Callable[[Executor], Executor] | None = None


class TransportFactory(Protocol):
    """Opens one transport: ``async with factory(target, options) as stream: ...``."""

    def __call__(self, target: Target, options: TransportOptions) -> AbstractAsyncContextManager[MessageStream]: ...


class TransportRegistry:
    """Kinds of transport by name, and the URL schemes that lead to each."""

    def __init__(self) -> None:
        self._factories: dict[str, TransportFactory] = {}
        self._schemes: dict[str, str] = {}

    def register(
        self, kind: str, factory: TransportFactory, *, schemes: Sequence[str] = (), replace: bool = False
    ) -> None:
        """Bind ``kind`` to ``factory`` and each of ``schemes`` (``"quic"``, no ``://``) to ``kind``."""
        if not kind:
            raise ValueError("a transport kind needs a name")
        # A lone string would otherwise be read letter by letter.
        wanted = [schemes.lower()] if isinstance(schemes, str) else [scheme.lower() for scheme in schemes]
        for scheme in wanted:
            if not _SCHEME.fullmatch(scheme + "://"):
                raise ValueError(f"{scheme!r} is not a URL scheme (letters, digits, '+', '-', '.')")
        if not replace:
            if kind in self._factories:
                raise ValueError(f"transport {kind!r} is already registered (pass replace=True to replace it)")
            taken = [f"{s}:// ({self._schemes[s]})" for s in wanted if s in self._schemes]
            if taken:
                raise ValueError(f"URL scheme already registered: {', '.join(taken)} (pass replace=True to take it)")
        self._factories[kind] = factory
        for scheme in wanted:
            self._schemes[scheme] = kind

    def resolve(self, target: Target) -> str:
        """The kind that opens ``target`` (see the module docstring)."""
        if isinstance(target, MessageStream):
            return "stream"
        if isinstance(target, str):
            match = _SCHEME.match(target)
            if match is not None:
                scheme = match.group(1).lower()
                kind = self._schemes.get(scheme)
                if kind is None:
                    raise ValueError(
                        f"no transport for URL scheme {scheme}:// in {target!r}; "
                        f"registered schemes: {self._scheme_list()}"
                    )
                return kind
        return "stdio"

    def transport_for(self, kind: str) -> TransportFactory:
        """The factory registered as ``kind``; ``ValueError`` naming the known kinds if none."""
        try:
            return self._factories[kind]
        except KeyError:
            known = ", ".join(sorted(self._factories))
            raise ValueError(f"no transport {kind!r}; registered transports: {known}") from None

    def copy(self) -> TransportRegistry:
        """An independent registry with the same entries (to extend without touching this one)."""
        twin = TransportRegistry()
        twin._factories = dict(self._factories)
        twin._schemes = dict(self._schemes)
        return twin

    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted(self._factories))

    def schemes(self) -> Mapping[str, str]:
        """URL scheme -> kind, a copy."""
        return dict(self._schemes)

    def _scheme_list(self) -> str:
        return ", ".join(f"{s}://" for s in sorted(self._schemes)) or "none"


# ---------------------------------------------------------------- the built-ins


def _url(target: Target, kind: str, schemes: tuple[str, ...]) -> str:
    # A forced kind may be handed a target it cannot open; say so before any I/O.
    if not isinstance(target, str):
        raise TypeError(f"transport {kind!r} needs a URL, not {target!r}")
    match = _SCHEME.match(target)
    if match is None:
        raise ValueError(f"transport {kind!r} needs a URL, not {target!r}")
    if match.group(1).lower() not in schemes:
        wanted = " or ".join(f"{s}://" for s in schemes)
        raise ValueError(f"transport {kind!r} needs a {wanted} URL, not {target!r}")
    return target


@asynccontextmanager
async def _open_stream(target: Target, options: TransportOptions) -> AsyncIterator[MessageStream]:
    if not isinstance(target, MessageStream):
        raise TypeError(f"transport 'stream' needs a MessageStream, not {target!r}")
    # The caller opened it and closes it; open_client's driver only stops using it.
    yield target


@asynccontextmanager
async def _open_stdio(target: Target, options: TransportOptions) -> AsyncIterator[MessageStream]:
    if isinstance(target, MessageStream):
        raise TypeError("transport 'stdio' needs a command line, not a MessageStream")
    argv = shlex.split(target) if isinstance(target, str) else list(target)
    if not argv:
        raise LocalProtocolError("empty server command")
    async with open_stdio_process(
        argv,
        env=options.env,
        cwd=options.cwd,
        on_stderr=options.on_stderr,
        max_line=options.max_message_size,
        shutdown=options.shutdown,
    ) as stream:
        yield stream


def _http_opener(kind: str, *, legacy_only: bool) -> TransportFactory:
    """``http``: Streamable HTTP, falling back to 2024-11-05 HTTP+SSE when initialize is
    refused; ``sse`` (``legacy_only``): only HTTP+SSE, the GET must announce the endpoint."""

    @asynccontextmanager
    async def open_http(target: Target, options: TransportOptions) -> AsyncIterator[MessageStream]:
        url = _url(target, kind, ("http", "https"))
        from .http.connect import open_http_stream  # the HTTP client is imported only when HTTP is used

        executor = None
        if options.wrap_executor is not None:
            from .http.connect import default_executor

            executor = options.wrap_executor(default_executor(options.http_client, options.connect_timeout))
        async with open_http_stream(
            url,
            headers=options.headers,
            headers_helper=options.headers_helper,
            http_client=options.http_client,
            executor=executor,
            max_message_size=options.max_message_size,
            auth=options.auth,
            connect_timeout=options.connect_timeout,
            legacy_only=legacy_only,
        ) as stream:
            yield stream

    return open_http


@asynccontextmanager
async def _open_ws(target: Target, options: TransportOptions) -> AsyncIterator[MessageStream]:
    url = _url(target, "ws", ("ws", "wss"))
    from .websocket import open_websocket_stream  # trio-websocket only when used

    async with open_websocket_stream(
        url,
        headers=options.headers,
        max_message_size=options.max_message_size,
        connect_timeout=options.connect_timeout,
    ) as stream:
        yield stream


#: The registry ``open_client`` resolves through.
TRANSPORTS = TransportRegistry()
TRANSPORTS.register("stream", _open_stream)
TRANSPORTS.register("stdio", _open_stdio)
TRANSPORTS.register("http", _http_opener("http", legacy_only=False), schemes=("http", "https"))
TRANSPORTS.register("sse", _http_opener("sse", legacy_only=True))
TRANSPORTS.register("ws", _open_ws, schemes=("ws", "wss"))


def register_transport(
    kind: str, factory: TransportFactory, *, schemes: Sequence[str] = (), replace: bool = False
) -> None:
    """Make ``open_client`` able to open ``kind`` (and URLs with ``schemes``) through ``factory``.

    ``factory(target, options)`` returns an async context manager yielding a
    ``MessageStream``; ``options`` is a ``TransportOptions``.  Registering a
    kind or a scheme twice is a ``ValueError`` unless ``replace=True``.
    """
    TRANSPORTS.register(kind, factory, schemes=schemes, replace=replace)


def resolve(target: Target) -> str:
    """The kind of transport ``open_client`` would use for ``target``."""
    return TRANSPORTS.resolve(target)


def transport_for(kind: str) -> TransportFactory:
    """The factory registered as ``kind``."""
    return TRANSPORTS.transport_for(kind)
