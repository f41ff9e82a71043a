"""Headers helpers: headers computed at run time (tokens that expire, signed headers).

Theory of operation
-------------------
Besides static headers, an HTTP MCP connection may take a *headers helper*:

* a callable returning a mapping of header names to values (it may be async),
  for an application that already holds a token source; or
* a command (a list of arguments, or a string split like a shell would) whose
  standard output is a JSON object of headers, or ``Name: value`` lines - the
  shape tools such as ``gh auth token`` wrappers print.

The transport asks the helper when the connection opens, again whenever it
starts a new MCP session (after the server dropped the old one), and once
more when a request is answered 401 (the request is then retried once with
the fresh headers).  A helper that fails or prints something unusable raises
``ConnectError`` with what it printed, so a broken credential script is
reported as such rather than as an HTTP error.  A command runs with a
timeout, and its output is capped.

``DynamicHeaders`` keeps the headers computed at run time - the helper's and
the OAuth provider's ``Authorization`` - and hands their union to the planner,
which puts them on every request it plans.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Final

import trio

from ...._errors import ConnectError
from ...._sansio.http.client.plan import HttpPlanner

__all__ = ["DynamicHeaders", "HeadersHelper", "run_headers_helper"]

HeadersHelper = Callable[[], Mapping[str, str] | Awaitable[Mapping[str, str]]] | Sequence[str] | str

#: Most output a helper command may print.
MAX_HELPER_OUTPUT: Final = 64 * 1024


def parse_helper_output(text: str) -> list[tuple[str, str]]:
    """Headers from a helper's output: a JSON object, or ``Name: value`` lines."""
    stripped = text.strip()
    if not stripped:
        return []
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except ValueError as exc:
            raise ConnectError(f"headers helper printed invalid JSON: {exc}") from None
        if not isinstance(obj, dict) or not all(isinstance(v, str) for v in obj.values()):
            raise ConnectError("headers helper JSON must be an object of string values")
        return [(str(k), v) for k, v in obj.items()]
    headers: list[tuple[str, str]] = []
    for line in stripped.splitlines():
        if not line.strip():
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise ConnectError(f"headers helper printed a line that is not 'Name: value': {line[:80]!r}")
        headers.append((name.strip(), value.strip()))
    return headers


async def run_headers_helper(helper: HeadersHelper, *, timeout: float = 30.0) -> list[tuple[str, str]]:
    """Run ``helper`` once and return its headers (``ConnectError`` when it fails)."""
    if callable(helper):
        with trio.move_on_after(timeout) as scope:
            result = helper()
            if isinstance(result, Awaitable):
                result = await result
        if scope.cancelled_caught:
            raise ConnectError(f"headers helper took longer than {timeout} s")
        if not isinstance(result, Mapping):
            raise ConnectError(f"headers helper returned {type(result).__name__}, not a mapping")
        return [(str(k), str(v)) for k, v in result.items()]
    argv = shlex.split(helper) if isinstance(helper, str) else list(helper)
    if not argv:
        raise ConnectError("empty headers helper command")
    try:
        with trio.fail_after(timeout):
            done = await trio.run_process(
                argv, capture_stdout=True, capture_stderr=True, check=False, stdin=subprocess.DEVNULL
            )
    except trio.TooSlowError:
        raise ConnectError(f"headers helper {shlex.join(argv)} took longer than {timeout} s") from None
    except OSError as exc:
        raise ConnectError(f"cannot run headers helper {shlex.join(argv)}: {exc}") from None
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip()[-500:]
        raise ConnectError(f"headers helper {shlex.join(argv)} exited {done.returncode}: {tail}")
    if len(done.stdout) > MAX_HELPER_OUTPUT:
        raise ConnectError(f"headers helper printed more than {MAX_HELPER_OUTPUT} bytes")
    return parse_helper_output(done.stdout.decode("utf-8", "replace"))


class DynamicHeaders:
    """The helper's and the OAuth provider's headers, pushed into ``planner``."""

    def __init__(
        self,
        planner: HttpPlanner,
        helper: HeadersHelper | None,
        auth_headers: Callable[[], Awaitable[list[tuple[str, str]]]] | None = None,
    ) -> None:
        self.planner = planner
        self.helper = helper
        #: The OAuth provider's current headers (``AuthHook.headers``), if there is one.
        self.auth_headers = auth_headers
        self._helper: list[tuple[str, str]] = []
        self._auth: list[tuple[str, str]] = []

    @property
    def helper_retries(self) -> bool:
        """Whether a 401 is worth asking the helper again."""
        return self.helper is not None

    async def refresh(self) -> None:
        """Ask the helper (``ConnectError`` when it fails) and the provider again."""
        if self.helper is not None:
            self._helper = await run_headers_helper(self.helper)
        if self.auth_headers is not None:
            self._auth = await self.auth_headers()  # (calls set_auth when they changed)
        if self.helper is not None or self.auth_headers is not None:
            self._push()

    def set_auth(self, headers: list[tuple[str, str]]) -> None:
        """The provider's headers changed (a new token)."""
        self._auth = list(headers)
        self._push()

    def _push(self) -> None:
        self.planner.set_dynamic_headers([*self._helper, *self._auth])
