"""Where OAuth tokens and client registrations live between runs.

Theory of operation
-------------------
A store maps string keys to plain JSON objects.  ``OAuthProvider`` keeps two
kinds of record in it: ``"tokens:<canonical server URI>"`` (the tokens, with
their absolute ``expires_at`` so expiry survives a restart, and how to reach
the token endpoint) and ``"client:<issuer>"`` (the client registration for one
authorization server).  ``token_key(server_url, issuer, kind)`` and
``stamp_expiry`` are helpers for a caller keeping records per (MCP server,
authorization server) pair, with URLs normalised (scheme and host lower-cased,
default port, fragment and a trailing slash dropped) so spelling variants of
one server share a record; the provider does not use them.

Every store satisfies the small async ``TokenStore`` protocol (``load`` /
``save`` / ``delete``; ``load`` of a missing key is ``None``, ``delete`` of a
missing key is a no-op).  Three stores exist:

``KeyringStore``
    The system keyring via the ``keyring`` package (imported lazily, so
    ``import trimcp`` stays fast).  Keyring calls block (D-Bus, Keychain, the
    Windows credential manager), so each runs in a worker thread.  A backend
    that cannot store anything - ``keyring.backends.fail``, ``null``, or a
    ``chainer`` with nothing to chain - makes the constructor raise
    ``StoreUnavailable``; a backend that fails later raises it on that call.
``FileStore``
    Opt-in only.  One JSON file, always mode 0600, rewritten atomically (a 0600
    temporary file in the same directory, fsync, ``os.replace``), updates
    serialised across tasks and processes by an ``flock`` on a sibling
    ``.lock`` file.  An existing file readable or writable by group/others, or
    owned by someone else, is refused with ``InsecureFileError``.
``MemoryStore``
    A dict; values are copied in and out so callers cannot alias them.

``default_store()`` picks the keyring when it is usable, else the opt-in file,
else memory with a logged warning.  If the keyring passes the construction
check but fails on first use, the returned store switches to the same
fallback (file or memory) and warns once.

Secrets never leave in text: the stores' error messages and warnings name
backends, exception *types* and keys, never values.  For callers handling
tokens themselves, ``Secret`` wraps one so that its ``str``/``repr``/``format``
are ``<redacted>``, and ``redact`` scrubs known secrets out of a text before it
is logged or reported (nothing in trimcp calls either yet).
"""

from __future__ import annotations

import contextlib
import copy
import errno
import hmac
import json
import logging
import os
import stat
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

import trio

from trimcp._errors import TrimcpError

logger = logging.getLogger("trimcp.auth")

REDACTED: Final = "<redacted>"
KINDS: Final = frozenset({"tokens", "client"})
_FORMAT_VERSION: Final = 1


class StoreUnavailable(TrimcpError):
    """The token store cannot be used (no keyring backend, keyring failure, bad file)."""


class InsecureFileError(StoreUnavailable):
    """A token file exists with permissions (or an owner) that would expose its tokens."""


# --------------------------------------------------------------------------- secrets


class Secret:
    """A secret string that never prints itself.

    ``str()``, ``repr()`` and ``format()`` give ``<redacted>``; ``.value`` is
    the real string, to be used only where it is sent (an Authorization header,
    a token request).  Equality is constant-time and against ``Secret`` or
    ``str``.  Not a ``str`` subclass on purpose: an f-string would otherwise
    either leak it or silently send ``<redacted>`` over the wire.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str | Secret) -> None:
        self._value: str = value.value if isinstance(value, Secret) else str(value)

    @property
    def value(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    def __str__(self) -> str:
        return REDACTED

    def __format__(self, spec: str) -> str:
        return format(REDACTED, spec)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Secret):
            other = other._value
        if not isinstance(other, str):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other.encode())

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self) -> Any:
        raise TypeError("Secret values are not picklable")


def redact(text: str, secrets: Iterable[str | Secret | None]) -> str:
    """``text`` with every occurrence of each (non-empty) secret replaced by ``<redacted>``.

    Longer secrets are replaced first, so a secret that contains another is
    removed whole.
    """
    values = {s.value if isinstance(s, Secret) else s for s in secrets if s}
    for value in sorted((v for v in values if v), key=len, reverse=True):
        text = text.replace(value, REDACTED)
    return text


def stamp_expiry(tokens: dict[str, Any], *, now: float | None = None) -> dict[str, Any]:
    """A copy of a token response with ``expires_at`` (epoch seconds) beside the token.

    Computed from ``expires_in`` when present and numeric; otherwise the copy
    has no ``expires_at`` (the token does not expire as far as we know).
    """
    out = dict(tokens)
    expires_in = tokens.get("expires_in")
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool):
        out["expires_at"] = (time.time() if now is None else now) + float(expires_in)
    return out


def is_expired(record: dict[str, Any], *, now: float | None = None, skew: float = 30.0) -> bool:
    """Whether a record's ``expires_at`` is (within ``skew`` seconds of) the past."""
    expires_at = record.get("expires_at")
    if not isinstance(expires_at, (int, float)) or isinstance(expires_at, bool):
        return False
    return (time.time() if now is None else now) + skew >= expires_at


# --------------------------------------------------------------------------- keys


def canonical_url(url: str) -> str:
    """A URL normalised for use as a key: lower-case scheme/host, no default port,
    no fragment, no trailing slash (the query is kept)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and not ((scheme == "https" and port == 443) or (scheme == "http" and port == 80)):
        host = f"{host}:{port}"
    path = parts.path.rstrip("/")
    out = urlunsplit((scheme, host, path, parts.query, ""))
    return out.replace(" ", "%20")


def token_key(server_url: str, issuer: str | None, kind: str = "tokens") -> str:
    """The canonical store key of one record: ``"<kind> <server> <issuer or ->"``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, not {kind!r}")
    iss = canonical_url(issuer) if issuer else "-"
    return f"{kind} {canonical_url(server_url)} {iss}"


# --------------------------------------------------------------------------- protocol


@runtime_checkable
class TokenStore(Protocol):
    """Async key -> JSON-object storage for tokens and client registrations."""

    async def load(self, key: str) -> dict[str, Any] | None: ...

    async def save(self, key: str, value: dict[str, Any]) -> None: ...

    async def delete(self, key: str) -> None: ...


def _check_value(value: dict[str, Any]) -> str:
    if not isinstance(value, dict):
        raise TypeError(f"a stored value must be a dict, not {type(value).__name__}")
    try:
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError) as exc:
        # The message of a json error may quote the value: keep only its type.
        raise TypeError(f"value is not JSON-serialisable ({type(exc).__name__})") from None


class MemoryStore:
    """A process-local ``TokenStore``: lost at exit."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self._data)} records>)"

    async def load(self, key: str) -> dict[str, Any] | None:
        await trio.lowlevel.checkpoint()
        value = self._data.get(key)
        return None if value is None else copy.deepcopy(value)

    async def save(self, key: str, value: dict[str, Any]) -> None:
        await trio.lowlevel.checkpoint()
        self._data[key] = json.loads(_check_value(value))

    async def delete(self, key: str) -> None:
        await trio.lowlevel.checkpoint()
        self._data.pop(key, None)


# --------------------------------------------------------------------------- keyring


def _backend_name(backend: object) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def keyring_problem(backend: object) -> str | None:
    """Why ``backend`` (a keyring backend) cannot store tokens, or ``None`` if it can."""
    from keyring.backends import chainer, fail, null

    if isinstance(backend, (fail.Keyring, null.Keyring)):
        return f"keyring backend {_backend_name(backend)} stores nothing"
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        return "keyring chainer backend has no viable backend to chain"
    return None


class KeyringStore:
    """A ``TokenStore`` in the system keyring: service ``service``, username = key.

    ``backend`` defaults to ``keyring.get_keyring()`` at construction.  Raises
    ``StoreUnavailable`` at construction if the backend cannot store anything,
    and from any call whose keyring operation fails.
    """

    def __init__(self, service: str = "trimcp", *, backend: Any = None) -> None:
        try:
            import keyring
        except ImportError:  # an optional dependency: pip install 'trimcp[keyring]'
            raise StoreUnavailable("the keyring package is not installed (pip install 'trimcp[keyring]')") from None
        if backend is None:
            try:
                backend = keyring.get_keyring()
            except Exception as exc:
                raise StoreUnavailable(f"no keyring backend could be loaded ({type(exc).__name__})") from None
        problem = keyring_problem(backend)
        if problem is not None:
            raise StoreUnavailable(problem)
        self.service = service
        self.backend = backend

    def __repr__(self) -> str:
        return f"KeyringStore(service={self.service!r}, backend={_backend_name(self.backend)})"

    async def _call(self, what: str, fn: Callable[[], Any], *, abandon: bool) -> Any:
        def run() -> Any:
            try:
                return fn()
            except Exception as exc:
                return _Failure(exc)

        result = await trio.to_thread.run_sync(run, abandon_on_cancel=abandon)
        if isinstance(result, _Failure):
            # Never chain or quote the backend's exception: it may echo its input.
            raise StoreUnavailable(
                f"keyring {what} failed in {_backend_name(self.backend)} ({type(result.exc).__name__})"
            ) from None
        return result

    async def load(self, key: str) -> dict[str, Any] | None:
        raw = await self._call("read", lambda: self.backend.get_password(self.service, key), abandon=True)
        if raw is None:
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            logger.warning("ignoring an unreadable keyring record for %s", key)
            return None
        return value

    async def save(self, key: str, value: dict[str, Any]) -> None:
        text = _check_value(value)
        await self._call(
            "write",
            lambda: self.backend.set_password(self.service, key, text),
            abandon=False,
        )

    async def delete(self, key: str) -> None:
        from keyring.errors import PasswordDeleteError

        def run() -> None:
            try:
                self.backend.delete_password(self.service, key)
            except PasswordDeleteError:
                pass  # nothing stored under this key

        await self._call("delete", run, abandon=False)


class _Failure:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


# --------------------------------------------------------------------------- file

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock_fd(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return
            except OSError:
                continue

    def _unlock_fd(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock_fd(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock_fd(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created 0600) - blocking; call in a thread."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _BINARY, 0o600)
    try:
        _lock_fd(fd)
        try:
            yield
        finally:
            _unlock_fd(fd)
    finally:
        os.close(fd)


def check_private(st: os.stat_result, path: Path) -> None:
    """Raise ``InsecureFileError`` unless ``st`` is a regular file private to this user."""
    if sys.platform == "win32":  # pragma: no cover - POSIX modes mean little there
        return
    if not stat.S_ISREG(st.st_mode):
        raise InsecureFileError(f"{path} is not a regular file; refusing to use it for tokens")
    if st.st_uid != os.geteuid():
        raise InsecureFileError(f"{path} is owned by uid {st.st_uid}, not by this user; refusing to use it for tokens")
    if st.st_mode & 0o077:
        raise InsecureFileError(
            f"{path} has mode {stat.S_IMODE(st.st_mode):04o}, readable or writable by "
            f"group/others; refusing to use it for tokens (run: chmod 600 {path})"
        )


def read_json(path: Path, *, private: bool) -> Any:
    """The JSON in ``path``; ``None`` if it is missing; ``ValueError`` if it is corrupt.

    With ``private``, the open file must pass ``check_private``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if private and _NOFOLLOW and exc.errno == errno.ELOOP:
            raise InsecureFileError(f"{path} is a symlink; refusing to use it for tokens") from None
        raise
    with os.fdopen(fd, "rb") as f:
        if private:
            check_private(os.fstat(f.fileno()), path)
        data = f.read()
    return json.loads(data.decode("utf-8"))


def write_json_atomic(path: Path, data: Any) -> None:
    """Replace ``path`` by ``data`` as JSON: a 0600 temp file, fsync, ``os.replace``."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            if sys.platform != "win32":
                os.fchmod(f.fileno(), 0o600)  # mkstemp's default, made explicit
            f.write(json.dumps(data, separators=(",", ":"), sort_keys=True).encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class FileStore:
    """An opt-in ``TokenStore`` in one private JSON file (mode 0600).

    The file is ``{"version": 1, "records": {key: value}}``.  Raises
    ``InsecureFileError`` (a ``StoreUnavailable``) at construction or on any
    call if the file is accessible to group/others, not ours, or a symlink; and
    ``StoreUnavailable`` if its content is not a token file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._tlock = trio.Lock()
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISLNK(st.st_mode):
                raise InsecureFileError(f"{self.path} is a symlink; refusing to use it for tokens")
            check_private(st, self.path)

    def __repr__(self) -> str:
        return f"FileStore({str(self.path)!r})"

    def _records(self) -> dict[str, Any]:
        try:
            doc = read_json(self.path, private=True)
        except ValueError:
            raise StoreUnavailable(f"{self.path} is not a valid token file (corrupt JSON)") from None
        if doc is None:
            return {}
        records = doc.get("records") if isinstance(doc, dict) else None
        if not isinstance(records, dict):
            raise StoreUnavailable(f"{self.path} is not a trimcp token file")
        return records

    def _update(self, change: Callable[[dict[str, Any]], bool]) -> None:
        with file_lock(self._lock_path):
            records = self._records()
            if change(records):
                write_json_atomic(self.path, {"version": _FORMAT_VERSION, "records": records})

    async def load(self, key: str) -> dict[str, Any] | None:
        value = await trio.to_thread.run_sync(lambda: self._records().get(key))
        return value if isinstance(value, dict) else None

    async def save(self, key: str, value: dict[str, Any]) -> None:
        plain = json.loads(_check_value(value))

        def change(records: dict[str, Any]) -> bool:
            records[key] = plain
            return True

        async with self._tlock:
            await trio.to_thread.run_sync(self._update, change)

    async def delete(self, key: str) -> None:
        def change(records: dict[str, Any]) -> bool:
            return records.pop(key, None) is not None

        async with self._tlock:
            await trio.to_thread.run_sync(self._update, change)


# --------------------------------------------------------------------------- choice


class FallbackStore:
    """The keyring, falling back (once, with a warning) if it fails on first use."""

    def __init__(self, primary: TokenStore, fallback: Callable[[], TokenStore]) -> None:
        self.store: TokenStore = primary
        self._fallback: Callable[[], TokenStore] | None = fallback

    def __repr__(self) -> str:
        return f"FallbackStore({self.store!r})"

    async def _run(self, op: Callable[[TokenStore], Awaitable[Any]]) -> Any:
        try:
            return await op(self.store)
        except StoreUnavailable as exc:
            if self._fallback is None:
                raise
            self.store = self._fallback()
            self._fallback = None
            logger.warning("%s; using %r instead", exc, self.store)
            return await op(self.store)

    async def load(self, key: str) -> dict[str, Any] | None:
        result: dict[str, Any] | None = await self._run(lambda s: s.load(key))
        return result

    async def save(self, key: str, value: dict[str, Any]) -> None:
        await self._run(lambda s: s.save(key, value))

    async def delete(self, key: str) -> None:
        await self._run(lambda s: s.delete(key))


def _memory_with_warning(reason: str) -> MemoryStore:
    logger.warning(
        "%s; OAuth tokens will be kept in memory only and lost when the process exits "
        "(pass file=... to opt in to a private 0600 token file)",
        reason,
    )
    return MemoryStore()


def default_store(*, file: str | os.PathLike[str] | None = None) -> TokenStore:
    """The store to use: the keyring if usable; else ``FileStore(file)`` if given;
    else a ``MemoryStore``, with a logged warning."""

    def fallback(reason: str) -> TokenStore:
        if file is not None:
            logger.info("%s; storing OAuth tokens in %s (mode 0600)", reason, file)
            return FileStore(file)
        return _memory_with_warning(reason)

    try:
        primary = KeyringStore()
    except StoreUnavailable as exc:
        return fallback(str(exc))
    # No warning on a later switch from here: FallbackStore logs it once.
    return FallbackStore(primary, lambda: FileStore(file) if file is not None else MemoryStore())
