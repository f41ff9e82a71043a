"""``open_client``'s grouped options: a dozen parameters, the old flat keywords warn, groups merge.

``trimcp/_trio/client/options.py``.  The sessions run over a memory pair against a fake
server, under the autojump clock.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
from fake_server import connected
from repo_paths import REPO

import trimcp
from trimcp import Handlers, HttpOptions, Limits, StdioOptions, Timeouts, open_client
from trimcp._trio.client.options import GROUPS, OLD_KEYWORDS, merge_options, regroup
from trimcp._trio.transports import registry

ROOT = REPO


async def handler(params: Any) -> Any:
    return {}


def test_open_client_takes_at_most_a_dozen_parameters() -> None:
    params = [p for p in inspect.signature(open_client).parameters.values() if p.kind is not p.VAR_KEYWORD]
    assert len(params) <= 12
    assert {"timeouts", "limits", "handlers", "http", "stdio"} <= {p.name for p in params}


def test_every_old_keyword_names_a_real_group_field() -> None:
    assert len(OLD_KEYWORDS) == 28  # 32 keywords before, 4 of them kept as they were
    for group, field in OLD_KEYWORDS.values():
        assert field in attrs.fields_dict(GROUPS[group])
    kept = set(inspect.signature(open_client).parameters) - set(GROUPS)
    assert not kept & set(OLD_KEYWORDS)


def test_the_groups_are_frozen_values() -> None:
    timeouts = Timeouts(connect=3)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        timeouts.connect = 4  # type: ignore[misc]
    assert Timeouts(connect=3) == timeouts and hash(Limits()) == hash(Limits())


def test_an_old_keyword_warns_naming_its_replacement() -> None:
    with pytest.warns(
        DeprecationWarning,
        match=r"open_client\(connect_timeout=\.\.\.\) is deprecated .*"
        r"use open_client\(timeouts=Timeouts\(connect=\.\.\.\)\)",
    ) as got:
        open_client(["never-run"], connect_timeout=5)  # type: ignore[arg-type]
    assert got[0].filename == __file__  # the caller's line, not options.py


def test_old_keywords_fold_into_their_groups_over_a_group_passed_alongside() -> None:
    with pytest.warns(DeprecationWarning):
        groups = regroup(
            {"timeouts": Timeouts(connect=1, probe=2), "limits": None},
            {"connect_timeout": 9, "max_pages": 3, "sampling_handler": handler},
        )
    assert groups["timeouts"] == Timeouts(connect=9, probe=2)
    assert groups["limits"] == Limits(max_pages=3)
    assert groups["handlers"] == Handlers(sampling=handler)


def test_an_unknown_keyword_is_a_type_error_at_the_call() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'conect_timeout'"):
        open_client(["never-run"], conect_timeout=5)  # type: ignore[arg-type]


def test_merge_layers_groups_field_by_field() -> None:
    mine = handler
    merged = merge_options(
        {"handlers": Handlers(logging=mine), "revision": "2025-06-18"},
        {"handlers": Handlers(elicitation=mine, elicitation_modes=("url",)), "timeouts": Timeouts(request=5)},
        {"revision": "2025-11-25", "timeouts": Timeouts(connect=7)},
    )
    assert merged == {
        "handlers": Handlers(logging=mine, elicitation=mine, elicitation_modes=("url",)),
        "revision": "2025-11-25",
        "timeouts": Timeouts(request=5, connect=7),
    }


async def test_the_groups_reach_the_session(autojump_clock: trio.abc.Clock) -> None:
    seen: list[str] = []

    async def sample(params: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}

    with trio.fail_after(10):
        async with connected(
            handlers=Handlers(sampling=sample, notification=lambda m, p: seen.append(m)),
            limits=Limits(max_pages=7),
            timeouts=Timeouts(request=3),
        ) as (client, peer):
            assert client.max_pages == 7
            assert client.driver.request_timeout == 3
            assert peer.initialize["params"]["capabilities"] == {"sampling": {}}


def test_stdio_and_http_groups_reach_the_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    # A registry of this test's own: a kind left in the shared one shows up in every later listing.
    monkeypatch.setattr(registry, "TRANSPORTS", registry.TRANSPORTS.copy())
    captured: list[trimcp.TransportOptions] = []

    class Refused(Exception):
        pass

    def factory(target: Any, options: trimcp.TransportOptions) -> Any:
        captured.append(options)
        raise Refused

    trimcp.register_transport("optionstest", factory, replace=True)
    http = HttpOptions(headers={"X-A": "1"})
    stdio = StdioOptions(env={"A": "1"}, cwd="/")

    async def main() -> None:
        with pytest.raises(Refused):
            async with open_client(
                "x",
                transport="optionstest",
                http=http,
                stdio=stdio,
                limits=Limits(max_message_size=1234),
                timeouts=Timeouts(connect=4),
            ):
                pass

    trio.run(main)
    [options] = captured
    assert (options.headers, options.env, options.cwd) == ({"X-A": "1"}, {"A": "1"}, "/")
    assert (options.max_message_size, options.connect_timeout) == (1234, 4)


def test_a_type_checker_rejects_the_old_keywords(tmp_path: Path) -> None:
    snippet = tmp_path / "uses_old.py"
    snippet.write_text(
        "import trimcp\n"
        "async def f() -> None:\n"
        "    async with trimcp.open_client(['x'], connect_timeout=5):\n"
        "        pass\n"
        "    async with trimcp.open_client(['x'], timeouts=trimcp.Timeouts(connect=5)):\n"
        "        pass\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MYPYPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(snippet)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and 'Argument "connect_timeout"' in errors[0] and ":3:" in errors[0], done.stdout
