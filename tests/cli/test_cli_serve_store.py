"""``trimcp serve --store``: a URL that names no store is a usage error, a store that cannot be
opened is one line on stderr and exit 1 - never a traceback (issue 30)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from ports import free_port
from repo_paths import REPO


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trimcp.cli", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("store", "says"),
    [
        ("postgres://db/x", "unknown store 'postgres'"),
        ("redis://127.0.0.1/zero", "database is a number"),
        ("sqlite:///x.db?lease=0", "lease must be a positive number"),
    ],
)
def test_a_store_url_that_names_no_store_is_a_usage_error(store: str, says: str) -> None:
    done = serve("--http", "127.0.0.1:0", "--store", store)
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr


def test_a_store_that_cannot_be_opened_is_one_line_and_exit_1(tmp_path: Path) -> None:
    closed = free_port()  # nothing listens there
    done = serve("--http", "127.0.0.1:0", "--store", f"redis://127.0.0.1:{closed}/0")
    assert done.returncode == 1
    assert done.stderr.startswith("trimcp: the store is not usable: Redis store") and "Traceback" not in done.stderr
    done = serve("--http", "127.0.0.1:0", "--store", f"sqlite://{tmp_path}/missing/state.db")
    assert done.returncode == 1
    assert "does not exist" in done.stderr and "Traceback" not in done.stderr


def test_store_is_for_http_only() -> None:
    done = serve("--ws", "127.0.0.1:0", "--store", "memory")
    assert done.returncode == 2 and "--store applies to --http and --sse" in done.stderr
