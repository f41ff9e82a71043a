"""The terminal elicitation form of ``trimcp tools call`` / ``prompts get``, and its flags."""

from __future__ import annotations

import argparse
import io
import json
import os
import pathlib
import re
import select
import signal
import subprocess
import sys
import time
from typing import Any

import pytest
import trio
from repo_paths import REPO

from trimcp.cli.command_line import UsageError
from trimcp.cli.elicit import handler_from_args, terminal_handler

ROOT = REPO

# The reference server's test_elicitation_sep1034_defaults / sep1330_enums forms, merged.
FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "titledSingle": {
            "type": "string",
            "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}],
        },
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2"], "enumNames": ["Option One", "Option Two"]},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "v1", "title": "First Choice"},
                    {"const": "v2", "title": "Second Choice"},
                    {"const": "v3", "title": "Third Choice"},
                ]
            },
            "maxItems": 2,
        },
        "verified": {"type": "boolean", "default": True},
        "day": {"type": "string", "format": "date"},
    },
    "required": ["age", "titledSingle"],
}


def _params(schema: Any = FORM, message: str = "Tell me") -> dict[str, Any]:
    return {"message": message, "requestedSchema": schema}


async def _answer(lines: str, params: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
    err = io.StringIO()
    handler = terminal_handler(io.StringIO(lines), err, catch_interrupt=False)
    with trio.fail_after(30):
        reply = await handler(params or _params())
    return reply, err.getvalue()


async def test_one_question_per_field_with_choices_defaults_and_reasking() -> None:
    answers = (
        "\n".join(
            [
                "",  # name: keep the default
                "old",
                "-3",
                "42",  # age: asked again twice
                "",
                "2",  # titledSingle is required: asked again, then choice 2
                "option one",  # legacyEnum by its label
                "1, 3, 1",  # titledMulti by numbers, a repeat dropped
                "no",  # verified
                "2026-02-30",
                "2026-02-28",  # day: asked again
                "a",
            ]
        )
        + "\n"
    )
    reply, shown = await _answer(answers)
    assert reply == {
        "action": "accept",
        "content": {
            "name": "John Doe",
            "age": 42,
            "titledSingle": "value2",
            "legacyEnum": "opt1",
            "titledMulti": ["v1", "v3"],
            "verified": False,
            "day": "2026-02-28",
        },
    }
    assert "The server asks: Tell me" in shown
    assert "[1/7] Name (name) - string - optional" in shown
    assert "User name" in shown and 'default: "John Doe"' in shown
    assert "[2/7] age - integer, at least 0, at most 150 - required" in shown
    assert "'old' is not an integer" in shown and "must be at least 0 (got -3)" in shown
    assert "    required: please give a value" in shown
    assert "    1) First Option  [value1]" in shown and "    2) Option Two  [opt2]" in shown
    assert "at most 2 choices" in shown
    assert "is not a date in ISO 8601 form" in shown
    assert shown.count("> ") == 11  # one per line typed before the accept


@pytest.mark.parametrize(("word", "action"), [("d", "decline"), ("cancel", "cancel"), ("", None)])
async def test_the_last_question_is_accept_decline_or_cancel(word: str, action: str | None) -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    reply, shown = await _answer(f"y\n{word}\n" + ("" if action else "what\n"), _params(schema))
    # An unclear answer is asked again; the input then ends, which is a cancel.
    assert reply == {"action": action or "cancel"}
    assert shown.count("Send it?") == (1 if action else 3)


async def test_end_of_input_cancels() -> None:
    reply, shown = await _answer("", _params())
    assert reply == {"action": "cancel"}
    assert "end of input" in shown


async def test_a_schema_that_cannot_be_shown_is_declined() -> None:
    reply, shown = await _answer("x\n", _params({"type": "object", "properties": {"o": {"type": "object"}}}))
    assert reply == {"action": "decline"}
    assert "cannot be shown" in shown and "o: type 'object'" in shown


async def test_url_mode_is_declined() -> None:
    err = io.StringIO()
    handler = terminal_handler(io.StringIO(""), err, catch_interrupt=False)
    assert await handler({"mode": "url", "message": "m", "url": "https://example.com/x"}) == {"action": "decline"}
    assert "https://example.com/x" in err.getvalue()


async def test_a_natural_language_date_is_read() -> None:
    pytest.importorskip("dateparser")
    schema = {"type": "object", "properties": {"day": {"type": "string", "format": "date"}}}
    reply, shown = await _answer("tomorrow\na\n", _params(schema))
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", reply["content"]["day"])
    assert f'= "{reply["content"]["day"]}"' in shown


async def test_a_cancelled_question_keeps_the_line_for_the_next(autojump_clock: trio.abc.Clock) -> None:
    # The server cancels its request while the user has typed nothing; what they type
    # afterwards answers the next form instead of vanishing into a stale read.
    read_fd, write_fd = os.pipe()
    with open(read_fd, encoding="utf-8") as stdin, open(write_fd, "w", encoding="utf-8") as feed:  # noqa: ASYNC230 - a pipe
        err = io.StringIO()
        handler = terminal_handler(stdin, err, catch_interrupt=False)
        schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
        with trio.move_on_after(10) as scope:
            await handler(_params(schema))
        assert scope.cancelled_caught
        feed.write("7\na\n")
        feed.close()  # then EOF: a reader that lost the "7" would end in a cancel, not hang
        # No deadline here: the autojump clock would fire it while the worker thread reads
        # (real time); the pipe already holds the lines, so this returns at once.
        assert await handler(_params(schema)) == {"action": "accept", "content": {"n": 7}}
        assert err.getvalue().count("[1/1] n") == 2


def _ns(**kw: Any) -> argparse.Namespace:
    return argparse.Namespace(**{"elicit_json": None, "elicit": None, **kw})


async def test_elicit_json_answers_validated_or_declines(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"age": "7", "titledSingle": "First Option", "extra": 1}))
    err = io.StringIO()
    handler = handler_from_args(_ns(elicit_json=str(path)), stderr=err)
    reply = await handler(_params())
    assert reply == {
        "action": "accept",
        "content": {"name": "John Doe", "age": 7, "titledSingle": "value1", "verified": True},
    }
    assert "left out: extra" in err.getvalue()
    narrow = {"type": "object", "properties": {"age": {"type": "integer", "maximum": 5}}, "required": ["age"]}
    assert await handler(_params(narrow)) == {"action": "decline"}
    assert "does not fit the server's form (age: must be at most 5 (got 7)); declined" in err.getvalue()


@pytest.mark.parametrize(("text", "message"), [("[1]", "a JSON object"), ("{", "not JSON")])
def test_a_bad_elicit_json_file_is_a_usage_error(tmp_path: pathlib.Path, text: str, message: str) -> None:
    path = tmp_path / "a.json"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        handler_from_args(_ns(elicit_json=str(path)))
    with pytest.raises(UsageError, match="cannot read"):
        handler_from_args(_ns(elicit_json=str(tmp_path / "missing.json")))


async def test_fixed_answers_and_no_terminal() -> None:
    assert await handler_from_args(_ns(elicit="cancel"))(_params()) == {"action": "cancel"}
    assert await handler_from_args(_ns(elicit="decline"))(_params()) == {"action": "decline"}
    err = io.StringIO()
    assert await handler_from_args(_ns(), stdin=io.StringIO(""), stderr=err)(_params()) == {"action": "decline"}
    assert err.getvalue().count("\n") == 1 and "stdin is not a terminal" in err.getvalue()


# --- the real command in a pseudo-terminal -------------------------------------------------


class _Terminal:
    """``trimcp tools call elicit`` (the reference server's tool) with a pty as stdin and stderr."""

    def __init__(self) -> None:
        master, slave = os.openpty()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.master = master
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "trimcp.cli", "tools", "call", "elicit", "--tool-arg", "message=Who are you?"],
            stdin=slave,
            stderr=slave,
            stdout=subprocess.PIPE,
            env=env,
            cwd=ROOT,
        )
        os.close(slave)
        self.seen = b""

    def expect(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} never shown; got {self.seen.decode(errors='replace')!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    self.seen += os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    raise AssertionError(f"{text!r} never shown; got {self.seen!r}") from None

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def result(self) -> tuple[int, Any]:
        out, _ = self.proc.communicate(timeout=30)
        os.close(self.master)
        return self.proc.returncode, json.loads(out.decode()) if out.strip() else None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def terminal() -> Any:
    term = _Terminal()
    yield term
    term.close()


def test_pty_form_asks_again_then_accepts(terminal: _Terminal) -> None:
    terminal.expect("The server asks: Who are you?")
    terminal.expect("[1/2] name - string - required")
    terminal.expect("> ")
    terminal.send("Ada\n")
    terminal.expect("[2/2] age - integer, at least 0 - optional")
    terminal.send("-1\n")
    terminal.expect("must be at least 0 (got -1)")
    terminal.send("36\n")
    terminal.expect("Send it?")
    terminal.send("a\n")
    code, out = terminal.result()
    assert code == 0
    assert out == {"action": "accept", "content": {"age": 36, "name": "Ada"}}


def test_pty_end_of_input_cancels(terminal: _Terminal) -> None:
    terminal.expect("[1/2] name")
    terminal.expect("> ")
    terminal.send("\x04")  # Ctrl-D at the start of a line: EOF for a terminal in canonical mode
    code, out = terminal.result()
    assert (code, out) == (0, {"action": "cancel"})


def test_pty_ctrl_c_cancels_the_form_not_the_command(terminal: _Terminal) -> None:
    terminal.expect("[1/2] name")
    terminal.expect("> ")
    # The child is not in the pty's session, so the ^C key would not reach it; send its signal.
    terminal.proc.send_signal(signal.SIGINT)
    terminal.expect("interrupted: cancelled")
    code, out = terminal.result()
    assert (code, out) == (0, {"action": "cancel"})


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trimcp.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=60,
    )


@pytest.mark.parametrize("revision", ["2025-06-18", "2026-07-28"])
def test_the_flags_answer_tools_call_and_prompts_get_in_both_eras(tmp_path: pathlib.Path, revision: str) -> None:
    # 2026-07-28 asks inside an InputRequiredResult round; the same handler answers.
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"name": "Al", "age": "42", "context": "code review"}))
    done = _run(
        "tools", "call", "elicit", "--tool-arg", "message=hi", "--elicit-json", str(answers), "--revision", revision
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"action": "accept", "content": {"age": 42, "name": "Al"}}
    assert "left out: context" in done.stderr
    done = _run(
        "prompts", "get", "test_input_required_result_prompt", "--elicit-json", str(answers), "--revision", revision
    )
    assert done.returncode == 0, done.stderr
    assert "Use this context: code review" in done.stdout
    done = _run("tools", "call", "elicit", "--tool-arg", "message=hi", "--revision", revision)
    assert json.loads(done.stdout) == {"action": "decline"}
    assert "stdin is not a terminal" in done.stderr
    done = _run("tools", "call", "elicit", "--tool-arg", "message=hi", "--elicit", "cancel", "--revision", revision)
    assert json.loads(done.stdout) == {"action": "cancel"}


def test_elicit_flags_are_exclusive_and_checked_before_connecting(tmp_path: pathlib.Path) -> None:
    done = _run("tools", "call", "elicit", "--elicit", "cancel", "--elicit-json", "x.json")
    assert done.returncode != 0 and "not allowed with" in done.stderr
    done = _run("tools", "call", "elicit", "--elicit-json", str(tmp_path / "missing.json"))
    assert done.returncode == 2 and "--elicit-json: cannot read" in done.stderr
