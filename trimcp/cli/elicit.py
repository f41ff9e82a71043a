"""Answering a server's elicitation from the ``trimcp`` command line.

Theory of operation
-------------------
Spec "Client features / Elicitation", form mode (2025-06-18 onwards).  ``trimcp tools
call`` and ``trimcp prompts get`` give ``open_client`` the handler ``handler_from_args``
builds, which answers every ``elicitation/create`` in one of four ways:

* **in the terminal** (the default when stdin is a terminal): the server's message, then
  one question per field on stderr (its title, description, type, constraints, default,
  and enum choices numbered), read from stdin, asked again with ``validate_form_async``'s
  message while the answer is wrong; then accept / decline / cancel.  An empty answer
  takes the default (or leaves an optional field out); a natural-language date is read
  by ``dateparser`` when installed.  EOF (Ctrl-D) or Ctrl-C answers ``cancel``: the
  user dismissed the form without choosing;
* ``--elicit-json FILE``: every form is answered with that object, validated (and
  coerced) first.  Content that does not fit is answered ``decline``, with the reasons
  on stderr: the user's fixed answer is a definite "not this", while ``cancel`` would
  invite the server to ask again and get the same file;
* ``--elicit decline|cancel``: that answer, without asking;
* stdin not a terminal and no flag: ``decline``, with a one-line note on stderr.

A URL-mode request is declined with a note: the command declares form mode only.
Lines are read by one worker thread at a time; when a question is cancelled the
thread's line is kept for the next question rather than lost to a stale read.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import IO, Any

import outcome
import trio

from ..host import FormField, form_fields, validate_form_async
from ..schema import to_wire
from .command_line import UsageError

__all__ = ["add_elicit_arguments", "handler_from_args", "terminal_handler"]

Handler = Callable[[Any], Awaitable[dict[str, Any]]]


def add_elicit_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--elicit-json",
        metavar="FILE",
        help="answer every elicitation form with this JSON object (validated; content that does not fit is declined)",
    )
    group.add_argument(
        "--elicit",
        choices=("decline", "cancel"),
        help="answer every elicitation so, without asking (default: ask in the "
        "terminal when stdin is one, else decline)",
    )


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            content = json.load(f)
    except OSError as exc:
        raise UsageError(f"--elicit-json: cannot read {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"--elicit-json: {path} is not JSON ({exc})") from exc
    if not isinstance(content, dict):
        raise UsageError(f"--elicit-json: {path} must hold a JSON object")
    return content


def handler_from_args(
    ns: argparse.Namespace, *, stdin: IO[str] | None = None, stderr: IO[str] | None = None
) -> Handler:
    """The elicitation handler the flags ask for; a bad ``--elicit-json`` raises ``UsageError`` now."""
    err = stderr if stderr is not None else sys.stderr
    inp = stdin if stdin is not None else sys.stdin
    if ns.elicit_json is not None:
        return _json_handler(_read_json(ns.elicit_json), err)
    if ns.elicit is not None:
        return _fixed(ns.elicit)
    try:
        interactive = inp.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if interactive:
        return terminal_handler(inp, err)
    return _not_a_terminal(err)


def _form(params: Any) -> tuple[str, Any, str | None]:
    """(message, requestedSchema, url) of an elicitation request, typed or as a dict."""
    wire = params if isinstance(params, dict) else to_wire(params)
    return str(wire.get("message", "")), wire.get("requestedSchema"), wire.get("url")


def _fixed(action: str) -> Handler:
    async def answer(params: Any) -> dict[str, Any]:
        return {"action": action}

    return answer


def _not_a_terminal(err: IO[str]) -> Handler:
    async def answer(params: Any) -> dict[str, Any]:
        message, _, _ = _form(params)
        err.write(
            f"trimcp: the server asks for input ({message!r}); declined, stdin is not a terminal "
            "(answer with --elicit-json FILE, or --elicit decline|cancel)\n"
        )
        err.flush()
        return {"action": "decline"}

    return answer


def _url_declined(err: IO[str], message: str, url: str) -> dict[str, Any]:
    err.write(f"trimcp: the server asks to open {url} ({message!r}); declined (URL mode is not offered)\n")
    err.flush()
    return {"action": "decline"}


def _json_handler(content: dict[str, Any], err: IO[str]) -> Handler:
    async def answer(params: Any) -> dict[str, Any]:
        message, schema, url = _form(params)
        if url is not None:
            return _url_declined(err, message, url)
        result = await validate_form_async(schema, content)
        if result.ignored:
            err.write(f"trimcp: --elicit-json: not in the server's form, left out: {', '.join(result.ignored)}\n")
        if not result.ok:
            reasons = "; ".join(f"{name or 'form'}: {why}" for name, why in result.errors.items())
            err.write(f"trimcp: --elicit-json does not fit the server's form ({reasons}); declined\n")
            err.flush()
            return {"action": "decline"}
        err.flush()
        return {"action": "accept", "content": result.content}

    return answer


class _Lines:
    """Lines of a blocking text stream, read by one worker thread at a time."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._reading = False
        self._send, self._receive = trio.open_memory_channel[outcome.Outcome[str]](math.inf)

    async def readline(self) -> str | None:
        """The next line without its newline, or ``None`` at EOF."""
        if not self._reading:
            self._reading = True
            token = trio.lowlevel.current_trio_token()

            def deliver(result: outcome.Outcome[str]) -> None:
                def put() -> None:
                    self._reading = False
                    self._send.send_nowait(result)

                try:
                    token.run_sync_soon(put)
                except trio.RunFinishedError:
                    pass

            trio.lowlevel.start_thread_soon(self._stream.readline, deliver)
        line = (await self._receive.receive()).unwrap()
        return None if line == "" else line.rstrip("\r\n")


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _describe(field: FormField, index: int, total: int) -> list[str]:
    kind = {"multi": "choose any (numbers or values, comma-separated)", "enum": "choose one", "boolean": "yes/no"}.get(
        field.kind, field.kind
    )
    head = f"[{index}/{total}] {field.title or field.name}"
    if field.title and field.title != field.name:
        head += f" ({field.name})"
    notes = [kind, *field.constraints()]
    head += " - " + ", ".join(notes)
    head += " - required" if field.required else " - optional"
    lines = [head]
    if field.description:
        lines.append(f"    {field.description}")
    for number, (value, label) in enumerate(field.choices, 1):
        lines.append(f"    {number}) {label}" + ("" if label == value else f"  [{value}]"))
    if field.default is not None:
        lines.append(f"    default: {_show(field.default)} (press Enter to keep it)")
    elif not field.required:
        lines.append("    (press Enter to leave it out)")
    return lines


def _interpret(field: FormField, text: str) -> Any:
    """What a typed line means for ``field``: a choice's number is that choice."""

    def pick(word: str) -> str:
        word = word.strip()
        if word.isdigit() and 1 <= int(word) <= len(field.choices):
            return field.choices[int(word) - 1][0]
        return word

    if field.kind == "enum":
        return pick(text)
    if field.kind == "multi":
        return [pick(w) for w in text.split(",") if w.strip()]
    return text


async def _ask_field(
    field: FormField,
    raw: Any,
    lines: _Lines,
    err: IO[str],
    index: int,
    total: int,
) -> tuple[bool, Any]:
    """(answered, value): ``(False, None)`` at EOF; a value of ``None`` leaves the field out."""
    err.write("\n".join(_describe(field, index, total)) + "\n")
    one = {"type": "object", "properties": {field.name: raw}, "required": [field.name]}
    while True:
        err.write("> ")
        err.flush()
        text = await lines.readline()
        if text is None:
            return False, None
        if text.strip() == "":
            if field.default is not None:
                return True, field.default
            if not field.required:
                return True, None
            err.write("    required: please give a value\n")
            continue
        result = await validate_form_async(one, {field.name: _interpret(field, text)})
        if result.ok:
            value = result.content[field.name]
            if _show(value) != _show(text):
                err.write(f"    = {_show(value)}\n")
            return True, value
        err.write(f"    {result.errors.get(field.name) or next(iter(result.errors.values()))}\n")


async def _ask_form(message: str, schema: Any, lines: _Lines, err: IO[str]) -> dict[str, Any]:
    fields, problems = form_fields(schema)
    err.write(f"\nThe server asks: {message}\n")
    if problems:
        reasons = "; ".join(f"{name or 'form'}: {why}" for name, why in problems.items())
        err.write(f"trimcp: this form cannot be shown ({reasons}); declined\n")
        return {"action": "decline"}
    content: dict[str, Any] = {}
    for index, field in enumerate(fields, 1):
        answered, value = await _ask_field(field, schema["properties"][field.name], lines, err, index, len(fields))
        if not answered:
            err.write("\n(end of input: cancelled)\n")
            return {"action": "cancel"}
        if value is not None:
            content[field.name] = value
    err.write(f"Answer: {_show(content)}\n")
    while True:
        err.write("Send it? [a]ccept, [d]ecline, [c]ancel: ")
        err.flush()
        text = await lines.readline()
        if text is None:
            err.write("\n(end of input: cancelled)\n")
            return {"action": "cancel"}
        word = text.strip().lower()
        if word in ("a", "accept", "y", "yes"):
            final = await validate_form_async(schema, content)
            return {"action": "accept", "content": final.content}
        if word in ("d", "decline", "n", "no"):
            return {"action": "decline"}
        if word in ("c", "cancel"):
            return {"action": "cancel"}


def terminal_handler(stdin: IO[str], stderr: IO[str], *, catch_interrupt: bool = True) -> Handler:
    """The interactive form: questions on ``stderr``, answers from ``stdin``; one form at a time.

    With ``catch_interrupt`` (and in the main thread) Ctrl-C during a form answers
    ``cancel`` instead of ending the command.
    """
    lines = _Lines(stdin)
    one_at_a_time = trio.Lock()

    async def answer(params: Any) -> dict[str, Any]:
        message, schema, url = _form(params)
        if url is not None:
            return _url_declined(stderr, message, url)
        async with one_at_a_time:
            if not catch_interrupt:
                return await _ask_form(message, schema, lines, stderr)
            reply: dict[str, Any] = {"action": "cancel"}
            with trio.open_signal_receiver(signal.SIGINT) as interrupts:
                async with trio.open_nursery() as nursery:

                    async def watch() -> None:
                        async for _ in interrupts:
                            stderr.write("\n(interrupted: cancelled)\n")
                            stderr.flush()
                            nursery.cancel_scope.cancel()
                            return

                    nursery.start_soon(watch)
                    reply = await _ask_form(message, schema, lines, stderr)
                    nursery.cancel_scope.cancel()
            return reply

    return answer
