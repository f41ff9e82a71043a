"""The auth-needed cache: TTL, shared JSON file, no lost writes, corrupt-file recovery."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import trio
from repo_paths import REPO

from trimcp._trio.oauth.auth_cache import AuthNeededCache, default_cache_path


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_default_path_uses_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_path() == tmp_path / "trimcp" / "auth-needed.json"
    assert AuthNeededCache().path == tmp_path / "trimcp" / "auth-needed.json"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_path() == tmp_path / "home" / ".cache" / "trimcp" / "auth-needed.json"


async def test_mark_is_marked_expiry(tmp_path: Path) -> None:
    clock = Clock()
    cache = AuthNeededCache(tmp_path / "c" / "auth-needed.json", clock=clock)
    url = "https://example.com/mcp"
    assert not await cache.is_marked(url)
    await cache.mark(url)
    assert await cache.is_marked(url)
    assert await cache.is_marked("HTTPS://EXAMPLE.com:443/mcp/")  # canonical form
    assert not await cache.is_marked("https://example.com/other")
    clock.now += 899
    assert await cache.is_marked(url)
    clock.now += 1
    assert not await cache.is_marked(url)  # 15 minutes are up
    await cache.mark(url)
    assert await cache.is_marked(url)
    await cache.clear(url)
    assert not await cache.is_marked(url)
    await cache.clear(url)  # clearing an absent URL is fine


async def test_shared_between_instances_and_pruned(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "auth-needed.json"
    a = AuthNeededCache(path, ttl=10, clock=clock)
    b = AuthNeededCache(path, ttl=10, clock=clock)
    await a.mark("https://old.example/mcp")
    clock.now += 5
    await b.mark("https://new.example/mcp")
    assert await a.is_marked("https://new.example/mcp")
    clock.now += 6  # old expired, new still fresh
    await a.mark("https://third.example/mcp")
    entries = json.loads(path.read_text())["entries"]
    assert set(entries) == {"https://new.example/mcp", "https://third.example/mcp"}


async def test_future_timestamp_not_trusted_forever(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "auth-needed.json"
    path.write_text(json.dumps({"version": 1, "entries": {"https://x": clock.now + 10_000}}))
    assert not await AuthNeededCache(path, clock=clock).is_marked("https://x")


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"", b"[1, 2]", b'{"entries": 5}', b"\xff\xfe", b'{"entries": {"u": "x"}}'],
)
async def test_corrupt_file_is_empty_and_replaced(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "auth-needed.json"
    path.write_bytes(content)
    cache = AuthNeededCache(path)
    assert not await cache.is_marked("https://example.com/mcp")
    await cache.mark("https://example.com/mcp")
    assert await cache.is_marked("https://example.com/mcp")
    doc = json.loads(path.read_text())
    assert doc == {
        "version": 1,
        "entries": {"https://example.com/mcp": doc["entries"]["https://example.com/mcp"]},
    }


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
async def test_cache_file_private(tmp_path: Path) -> None:
    path = tmp_path / "auth-needed.json"
    await AuthNeededCache(path).mark("https://example.com/mcp")
    assert os.stat(path).st_mode & 0o777 == 0o600


_CHILD = """
import sys, trio
from pathlib import Path
from trimcp._trio.oauth.auth_cache import AuthNeededCache

async def main(path, tag, n):
    cache = AuthNeededCache(Path(path))
    async with trio.open_nursery() as nursery:
        for i in range(n):
            nursery.start_soon(cache.mark, f"https://{tag}-{i}.example/mcp")

trio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]))
"""


async def test_many_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "auth-needed.json"
    n_tasks, n_procs, per_proc = 50, 4, 25
    caches = [AuthNeededCache(path) for _ in range(5)]  # several instances, one file
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    async def child(j: int) -> None:
        await trio.run_process([sys.executable, "-c", _CHILD, str(path), f"proc{j}", str(per_proc)], env=env)

    async with trio.open_nursery() as nursery:
        for j in range(n_procs):
            nursery.start_soon(child, j)
        for i in range(n_tasks):
            nursery.start_soon(caches[i % 5].mark, f"https://task-{i}.example/mcp")

    expected = {f"https://task-{i}.example/mcp" for i in range(n_tasks)} | {
        f"https://proc{j}-{i}.example/mcp" for j in range(n_procs) for i in range(per_proc)
    }
    entries = json.loads(path.read_text())["entries"]
    assert set(entries) == expected
    check = AuthNeededCache(path)
    for url in sorted(expected)[:10]:
        assert await check.is_marked(url)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
