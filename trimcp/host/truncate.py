"""Fitting a tool result into an agent's context, as a Trio host does it.

Theory of operation
-------------------
Spec "Server features / Tools", ``CallToolResult``.  The decisions are the pure
core's (``trimcp._sansio.host.truncation``): ``plan_truncation`` is phase 1, an O(n)
estimate; a result under half the limit passes unchanged, and nothing else runs -
no counter, no thread, no file.  Otherwise this module does the I/O around phase 2:

1. the exact count: ``counter`` (sync or async) is called once on
   ``plan.count_input()``; a sync counter runs in a worker thread, since a tokenizer
   on megabytes of text would stall every other task of the agent;
2. the cut: ``plan.finish(count)``, also in a worker thread for the same reason (it
   parses a large JSON text once), with Pillow downscaling images that do not fit
   (``images.py``) when it is installed;
3. with ``save_full_output`` (a directory), the untruncated result's JSON is written
   there, owner-only (0600), to a file named from a hash of its content, and the
   notice names it.  The file is written only when something was cut.

The limit is ``max_tokens`` when given, else the ``MAX_MCP_OUTPUT_TOKENS``
environment variable when it is a usable integer (a warning otherwise), else 25 000.
``truncate_result_sync`` does the same without Trio, for callers outside an event loop.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final, TypeVar

import attrs
import trio

from .._sansio.host.shrink import dumps
from .._sansio.host.truncation import DEFAULT_MAX_TOKENS, ImageHook, TruncationPlan, plan_truncation
from .._sansio.schema import CallToolResult, to_wire
from .counters import AnyCounter
from .images import pillow_hook

__all__ = ["MAX_TOKENS_ENV", "max_tokens_from_env", "truncate_result", "truncate_result_sync"]

logger = logging.getLogger("trimcp.host")

MAX_TOKENS_ENV: Final = "MAX_MCP_OUTPUT_TOKENS"
#: The core needs this much room for its notice.
MIN_MAX_TOKENS: Final = 64

R = TypeVar("R", CallToolResult, Mapping[str, Any])

#: Default for ``image_hook``: Pillow's downscaling when installed (looked up per call).
_PILLOW: Final = object()


def max_tokens_from_env(environ: Mapping[str, str] | None = None) -> int:
    """``MAX_MCP_OUTPUT_TOKENS`` when set to an integer >= 64, else 25 000 (with a
    warning when it is set to something else)."""
    env = os.environ if environ is None else environ
    raw = env.get(MAX_TOKENS_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_MAX_TOKENS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < MIN_MAX_TOKENS:
        logger.warning(
            "ignoring %s=%r (not an integer >= %d); using %d", MAX_TOKENS_ENV, raw, MIN_MAX_TOKENS, DEFAULT_MAX_TOKENS
        )
        return DEFAULT_MAX_TOKENS
    return value


def _hook(image_hook: object) -> ImageHook | None:
    if image_hook is _PILLOW:
        return pillow_hook()
    return image_hook  # type: ignore[return-value]


def _full_output(result: CallToolResult | Mapping[str, Any], directory: Path | str) -> tuple[Path, bytes]:
    """Where the untruncated JSON goes, and its bytes: the name is its SHA-256 prefix,
    so the same output saved twice is one file."""
    wire = to_wire(result) if isinstance(result, CallToolResult) else result
    body = dumps(dict(wire)).encode("utf-8")
    name = f"mcp-output-{hashlib.sha256(body).hexdigest()[:24]}.json"
    return Path(directory) / name, body


def _write_private(path: Path, body: bytes) -> None:
    """Write ``body`` readable by the owner only; never through a symlink planted at the name."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_CREAT
        with os.fdopen(fd, "wb", closefd=False) as stream:
            stream.write(body)
    finally:
        os.close(fd)


def _plan(result: R, max_tokens: int | None) -> TruncationPlan:
    limit = max_tokens_from_env() if max_tokens is None else max_tokens
    return plan_truncation(result, max_tokens=limit)


def _finish(
    plan: TruncationPlan,
    exact: int | None,
    image_hook: object,
    directory: Path | str | None,
) -> tuple[Any, Path | None, bytes]:
    """The cut, and the full output to save (path and bytes) when there is one to save.
    The image hook is looked up only here: finding Pillow costs more than passing a
    small result through."""
    plan = attrs.evolve(plan, image_hook=_hook(image_hook))
    if directory is None:
        return plan.finish(exact), None, b""
    path, body = _full_output(plan.result, directory)
    out = attrs.evolve(plan, full_output_path=str(path)).finish(exact)
    if out is plan.result:  # nothing was cut: nothing to save
        return out, None, b""
    return out, path, body


async def truncate_result(
    result: R,
    *,
    max_tokens: int | None = None,
    counter: AnyCounter | None = None,
    image_hook: ImageHook | None | object = _PILLOW,
    save_full_output: Path | str | None = None,
) -> R:
    """``result`` (a ``CallToolResult`` or its wire dict) within ``max_tokens``, of the
    kind it was given; the same object when nothing had to be cut.

    ``max_tokens``: the limit; by default ``MAX_MCP_OUTPUT_TOKENS`` or 25 000.
    ``counter``: an exact token counter, ``counter(text) -> int`` or an async one; called
    at most once, and never for a result estimated under half the limit.
    ``image_hook``: shrinks an image that does not fit (default: Pillow downscaling when
    Pillow is installed; ``None`` replaces such an image with a placeholder).
    ``save_full_output``: a directory; when something is cut, the untruncated result's
    JSON is written there (mode 0600) and the notice names the file.
    """
    plan = _plan(result, max_tokens)
    if not plan.needs_exact_count:
        return result
    exact: int | None = None
    if counter is not None:
        if _is_async(counter):
            exact = await counter(plan.count_input())  # type: ignore[misc]
        else:
            (answer,) = await trio.to_thread.run_sync(_count, counter, plan.count_input())
            exact = await answer if inspect.isawaitable(answer) else answer
    out, path, body = await trio.to_thread.run_sync(_finish, plan, exact, image_hook, save_full_output)
    if path is not None:
        await trio.to_thread.run_sync(_write_private, path, body)
    typed: R = out
    return typed


def _is_async(counter: object) -> bool:
    # An object whose __call__ is ``async def`` is an async counter too.
    call = type(counter).__call__ if callable(counter) else None
    return inspect.iscoroutinefunction(counter) or inspect.iscoroutinefunction(call)


def _count(counter: Callable[[str], int | Awaitable[int]], text: str) -> tuple[int | Awaitable[int]]:
    # In a tuple: a plain function that returns an awaitable is awaited back in Trio.
    return (counter(text),)


def truncate_result_sync(
    result: R,
    *,
    max_tokens: int | None = None,
    counter: Callable[[str], int] | None = None,
    image_hook: ImageHook | None | object = _PILLOW,
    save_full_output: Path | str | None = None,
) -> R:
    """``truncate_result`` for callers outside Trio: a synchronous counter, blocking I/O."""
    plan = _plan(result, max_tokens)
    if not plan.needs_exact_count:
        return result
    exact = counter(plan.count_input()) if counter is not None else None
    out, path, body = _finish(plan, exact, image_hook, save_full_output)
    if path is not None:
        _write_private(path, body)
    typed: R = out
    return typed
