"""What a ``${VAR}`` of an mcpServers file expanded to never shows in text for people.

``trimcp.config`` records each entry's expansions and hands out a ``Redactor``; these
tests drive it with the encoders the rest of trimcp really uses (``shlex.join`` for a
command line, ``json.dumps``, ``repr``, ``urlencode`` for a URL query, ElementTree for
JUnit XML) and with a real ``logging`` handler.  The CLI's and the pool's use of it are
tested against real servers in ``test_cli_redaction.py`` and ``test_host_pool_redaction.py``.
"""

from __future__ import annotations

import enum
import io
import json
import logging
import re
import shlex
import xml.etree.ElementTree as ET
from urllib.parse import urlencode

import attrs
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from trimcp.config import Redactor, StdioServerConfig, parse_config

SECRET = "sk-live-7f3a9c2e5b1d"
#: Every character that some encoder below spells otherwise.
AWKWARD = "sk'li\"ve x+y/z\\€=&<9>"
REF = "${SECRET_TOKEN}"


def config_with(secret: str, **env: str) -> dict[str, object]:
    return {
        "mcpServers": {
            "local": {
                "command": "server",
                "args": ["--token=${SECRET_TOKEN}", "--port=${PORT:-8080}"],
                "env": {"API_KEY": "${env:SECRET_TOKEN}", "MODE": "${MODE}"},
            },
            "web": {
                "url": "https://example.com/mcp?token=${SECRET_TOKEN}",
                "headers": {"Authorization": "Bearer ${SECRET_TOKEN}"},
            },
            "broken": {"type": "http", "url": "ftp://u:${OTHER}@example.com/"},
        }
    }


def test_an_entry_records_what_it_took_from_the_environment_and_not_its_defaults() -> None:
    config = parse_config(
        config_with(SECRET), environ={"SECRET_TOKEN": SECRET, "MODE": "on", "OTHER": "pa55word", "UNUSED": "x" * 9}
    )
    local, web = config.server("local"), config.server("web")
    assert local.expanded == {"SECRET_TOKEN": SECRET, "MODE": "on"}  # ${PORT:-8080}: the file's
    assert web.expanded == {"SECRET_TOKEN": SECRET}
    # The file's record has the broken entry's expansions too, and nothing unused.
    assert config.expanded == {"SECRET_TOKEN": SECRET, "MODE": "on", "OTHER": "pa55word"}
    # Neither the entry's repr nor the redactor's shows the record.
    assert "expanded" not in repr(local) and SECRET not in repr(config.redactor())
    # How the text was spelt does not make another entry (the pool's identity rests on it).
    assert local == StdioServerConfig(name="local", command="server", args=local.args, env=local.env)


def test_a_config_error_quotes_the_file_not_the_expansion() -> None:
    config = parse_config(config_with(SECRET), environ={"SECRET_TOKEN": SECRET, "MODE": "on", "OTHER": "pa55word"})
    message = str(config.errors["broken"])
    assert '"ftp://u:${OTHER}@example.com/"' in message and "pa55word" not in message


def test_every_value_shows_as_its_reference_wherever_it_stands() -> None:
    config = parse_config(config_with(SECRET), environ={"SECRET_TOKEN": SECRET, "MODE": "on"})
    redact = config.redactor()
    local, web = config.server("local"), config.server("web")
    assert isinstance(local, StdioServerConfig)
    command = shlex.join([local.command, *local.args])
    assert redact(command) == "server --token=${SECRET_TOKEN} --port=8080"
    assert redact(f"at {web.url}") == f"at https://example.com/mcp?token={REF}"
    # A value too short to be a secret is shown: hiding every "on" would garble the text.
    assert redact("MODE is on") == "MODE is on"
    assert redact.variables == {"SECRET_TOKEN"}


@pytest.mark.parametrize("secret", [SECRET, AWKWARD])
def test_a_value_is_found_however_an_encoder_spelt_it(secret: str) -> None:
    redact = Redactor({"SECRET_TOKEN": secret})
    element = ET.Element("testsuite", name=f"check {secret}")
    element.text = f"target {secret}"
    spelt = {
        "shell": shlex.join(["server", f"--token={secret}", secret]),
        "json": json.dumps({"target": secret}),
        "json-utf8": json.dumps({"target": secret}, ensure_ascii=False),
        "repr": repr([secret, f"--token={secret}"]),
        "url-query": "https://example.com/mcp?" + urlencode({"token": secret}),
        "xml": ET.tostring(element, encoding="unicode"),
    }
    for how, text in spelt.items():
        shown = redact(text)
        assert REF in shown, how
        # Not the value, nor any run of 5 of its characters (a half-hidden value is a leak).
        assert not any(secret[i : i + 5] in shown for i in range(len(secret) - 4)), (how, shown)


def test_redacting_twice_changes_nothing() -> None:
    # A value that is part of its own reference: the second pass must not eat the first's.
    redact = Redactor({"TOKEN": "TOKE", "SECRET_TOKEN": SECRET})
    once = redact(f"a TOKE and {SECRET}")
    assert once == "a ${TOKEN} and ${SECRET_TOKEN}"
    assert redact(once) == once


def test_the_longest_value_wins_and_two_variables_of_one_value_show_the_first() -> None:
    redact = Redactor({"PREFIX": "sk-live", "TOKEN": SECRET, "SAME": SECRET})
    assert redact(f"{SECRET} sk-live") == "${TOKEN} ${PREFIX}"


def test_merged_redactors_hide_both_values_of_a_variable() -> None:
    old, new = Redactor({"SECRET_TOKEN": "old-secret"}), Redactor({"SECRET_TOKEN": SECRET})
    merged = old.merge(new)
    assert merged(f"old-secret {SECRET}") == f"{REF} {REF}"
    assert not Redactor() and Redactor()("anything") == "anything"


class Colour(enum.StrEnum):
    NAMED = "sk-live-7f3a9c2e5b1d"  # an enum member is a name, not text built from the config


@attrs.frozen
class Status:
    reason: str
    count: int
    notes: tuple[str, ...] = ()
    _private: str = ""
    colour: Colour = Colour.NAMED


def test_a_structure_is_redacted_before_it_is_rendered() -> None:
    redact = Redactor({"SECRET_TOKEN": SECRET, "PORT": "8080"})
    doc = {
        "target": f"http://h:8080/mcp?token={SECRET}",
        "port": 8080,
        SECRET: [SECRET, 1.5, None],
        "status": Status(f"failed: {SECRET}", 8080, (SECRET,), private=SECRET),
    }
    shown = redact.value(doc)
    assert shown["target"] == "http://h:${PORT}/mcp?token=${SECRET_TOKEN}"
    assert shown["port"] == 8080  # a number stays a number: the JSON stays JSON
    assert shown[REF] == [REF, 1.5, None]
    assert shown["status"] == Status(f"failed: {REF}", 8080, (REF,), private=REF)
    assert shown["status"].colour is Colour.NAMED
    assert doc["target"] != shown["target"]  # a copy: the caller's object is untouched


def test_the_log_filter_redacts_message_arguments_traceback_and_stack() -> None:
    redact = Redactor({"SECRET_TOKEN": SECRET})
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(redact.log_filter())
    logger = logging.getLogger("trimcp.test_redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("GET %s failed", f"https://example.com/?token={SECRET}")
        try:
            raise ValueError(f"bad token {SECRET!r}")
        except ValueError:
            logger.exception("connect failed", stack_info=True)
        logger.warning("no secret here, %d%%", 100)
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    text = out.getvalue()
    assert SECRET not in text
    assert f"GET https://example.com/?token={REF} failed" in text
    assert f"ValueError: bad token '{REF}'" in text and "Stack (most recent call last)" in text
    assert "no secret here, 100%" in text


@given(st.text(min_size=4, max_size=30), st.text(max_size=30), st.text(max_size=30))
def test_the_value_survives_only_inside_a_reference(secret: str, before: str, after: str) -> None:
    # A ${NAME} already in the text is kept whole (redacting twice changes nothing): that is
    # the one place a value may still stand, as in "${abcd}" for a value "abcd".
    assume("\x00" not in secret)
    shown = Redactor({"SECRET_TOKEN": secret})(before + secret + after)
    assert secret not in re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}", "\x00", shown)
