"""Open a page in a real headless Chromium and watch it through the DevTools protocol.

``open_page(path)`` starts ``chromium --headless`` (Debian's package; ``.ci/run`` installs it
when missing) with a private profile, its DevTools endpoint on 127.0.0.1 at a port the
browser picks, no background networking, and speaks the DevTools protocol (JSON over one
WebSocket, trio-websocket) to it: a new tab is attached, the Runtime, Log and Network
domains are enabled, and the page is loaded.  Everything the page says is kept:
console calls with their level, uncaught exceptions, the browser's own log entries
(a Content-Security-Policy refusal, a failed load) and every request the page makes.
``Page.evaluate(expression)`` returns a JavaScript expression's JSON value, as rendered.

``chromium()`` finds the binary (``None``: the tests that need it skip, saying why).

The browser runs in a process group of its own.  At the end the whole group is killed and
waited for before the profile is removed: Chromium's helper processes outlive a killed main
process for a moment and may still write into the profile (CI once failed to remove it,
"Directory not empty").
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import trio
from trio_websocket import WebSocketConnection, open_websocket_url

#: The binaries that may be Chromium, in the order Debian, other distributions and Chrome name them.
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",  # CI containers run as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)
_LISTENING = re.compile(r"DevTools listening on (ws://127\.0\.0\.1:\d+/\S+)")


def chromium() -> str | None:
    for name in NAMES:
        found = shutil.which(name)
        if found is not None:
            return found
    return None


@attrs.define
class Page:
    """A loaded tab: what it logged and requested, and ``evaluate`` to read it."""

    ws: WebSocketConnection
    session: str
    #: Console calls: (level, text), the level as DevTools names it (log, warning, error, ...).
    console: list[tuple[str, str]] = attrs.field(factory=list)
    #: Uncaught exceptions, as their description.
    exceptions: list[str] = attrs.field(factory=list)
    #: The browser's log entries: (level, source, text), e.g. ("error", "security", "Refused to ...").
    log: list[tuple[str, str, str]] = attrs.field(factory=list)
    #: Every URL the page requested (the page's own file included).
    requests: list[str] = attrs.field(factory=list)
    _ids: itertools.count[int] = attrs.field(factory=lambda: itertools.count(1))
    _loaded: trio.Event = attrs.field(factory=trio.Event)

    @property
    def errors(self) -> list[str]:
        """Everything that counts as a console error: error and warning console calls,
        uncaught exceptions, and the browser's error and warning log entries."""
        return (
            [f"console.{level}: {text}" for level, text in self.console if level in ("error", "warning", "assert")]
            + [f"uncaught: {text}" for text in self.exceptions]
            + [f"{source} {level}: {text}" for level, source, text in self.log if level in ("error", "warning")]
        )

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one command to the tab and return its result (events are kept on the way)."""
        ident = next(self._ids)
        await self.ws.send_message(
            json.dumps({"id": ident, "method": method, "params": params or {}, "sessionId": self.session})
        )
        while True:
            message = json.loads(await self.ws.get_message())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._event(message)

    async def settle(self, seconds: float = 0.3) -> None:
        """Read the events the tab sends for ``seconds`` (after a load or a click)."""
        with trio.move_on_after(seconds):
            while True:
                self._event(json.loads(await self.ws.get_message()))

    async def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression`` in the page (an exception is an error here)."""
        result = await self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.console.append((params.get("type", ""), text))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.exceptions.append(str(details.get("exception", {}).get("description") or details.get("text")))
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            self.log.append((entry.get("level", ""), entry.get("source", ""), entry.get("text", "")))
        elif method == "Network.requestWillBeSent":
            self.requests.append(params.get("request", {}).get("url", ""))
        elif method == "Page.loadEventFired":
            self._loaded.set()


async def _devtools_url(process: trio.Process, deadline: float) -> str:
    """The browser's DevTools WebSocket URL, read off its stderr."""
    assert process.stderr is not None
    seen = b""
    with trio.fail_after(deadline):
        while True:
            chunk = await process.stderr.receive_some(4096)
            if not chunk:
                raise RuntimeError(f"chromium exited before listening: {seen.decode(errors='replace')[-2000:]}")
            seen += chunk
            found = _LISTENING.search(seen.decode(errors="replace"))
            if found is not None:
                return found.group(1)


@asynccontextmanager
async def open_page(path: Path, *, binary: str, start_timeout: float = 60.0) -> AsyncIterator[Page]:
    """``path`` loaded in a fresh headless Chromium tab (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="trimcp-chromium-") as profile:
        group: int | None = None
        async with trio.open_nursery() as nursery:
            process: trio.Process = await nursery.start(
                partial(
                    trio.run_process,
                    [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    check=False,
                    start_new_session=True,
                )
            )
            group = process.pid
            try:
                url = await _devtools_url(process, start_timeout)

                async def drain() -> None:  # keep reading stderr so the browser never blocks on it
                    assert process.stderr is not None
                    while await process.stderr.receive_some(65536):
                        pass

                nursery.start_soon(drain)
                async with open_websocket_url(url, max_message_size=64 * 1024 * 1024) as ws:
                    target = await _browser_call(ws, "Target.createTarget", {"url": "about:blank"})
                    attached = await _browser_call(
                        ws, "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
                    )
                    page = Page(ws, attached["sessionId"])
                    for domain in ("Runtime", "Log", "Network", "Page"):
                        await page.call(f"{domain}.enable")
                    await page.call("Page.navigate", {"url": path.resolve().as_uri()})
                    with trio.fail_after(start_timeout):
                        while not page._loaded.is_set():
                            page._event(json.loads(await ws.get_message()))
                    await page.settle()
                    yield page
            finally:
                _kill_group(group)
                process.kill()
                nursery.cancel_scope.cancel()
        await _group_gone(group)


def _kill_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _group_members(group: int) -> list[int]:
    """The live (not zombie) processes of ``group``, read off ``/proc``."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone while we looked
        state, pgrp = fields[0], int(fields[2])
        if pgrp == group and state not in ("Z", "X"):
            members.append(int(entry))
    return members


async def _group_gone(group: int | None, timeout: float = 10.0) -> None:
    """Wait (bounded) until no process of the browser's group is left to write to its profile."""
    if group is None or not os.path.isdir("/proc"):
        return
    with trio.move_on_after(timeout):
        while _group_members(group):
            _kill_group(group)
            await trio.sleep(0.02)


async def _browser_call(ws: WebSocketConnection, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One command to the browser itself (no session); events before the answer are not for a tab yet."""
    await ws.send_message(json.dumps({"id": 0, "method": method, "params": params}))
    while True:
        message = json.loads(await ws.get_message())
        if message.get("id") == 0:
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            result: dict[str, Any] = message["result"]
            return result
