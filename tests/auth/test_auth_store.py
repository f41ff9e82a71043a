"""Token storage: keyring, file (0600, atomic), memory fallback, redaction."""

from __future__ import annotations

import logging
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import keyring.backend
import pytest
from keyring.backends import fail, null
from keyring.errors import KeyringError, PasswordDeleteError

from trimcp._trio.oauth.store import (
    FallbackStore,
    FileStore,
    InsecureFileError,
    KeyringStore,
    MemoryStore,
    Secret,
    StoreUnavailable,
    TokenStore,
    default_store,
    is_expired,
    redact,
    stamp_expiry,
    token_key,
)

TOKEN = "sekrit-access-token-6f1d2c"
RECORD = {"access_token": TOKEN, "refresh_token": "rt-99", "expires_at": 1234.5}


class MemoryKeyring(keyring.backend.KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.data.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.data[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.data[(service, username)]
        except KeyError:
            raise PasswordDeleteError("not found") from None


class BrokenKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringError(f"locked collection, cannot read {username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringError(f"cannot store {password}")


@pytest.fixture
def kr() -> Iterator[MemoryKeyring]:
    before = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(before)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(before)


# ------------------------------------------------------------------ keys & secrets


def test_token_key_canonical() -> None:
    a = token_key("HTTPS://Example.COM:443/mcp/", "https://Auth.example.com/")
    b = token_key("https://example.com/mcp", "https://auth.example.com")
    assert a == b == "tokens https://example.com/mcp https://auth.example.com"
    assert token_key("https://example.com/mcp", None, "client").startswith("client ")
    assert token_key("http://h:8080/x#frag", None) == "tokens http://h:8080/x -"
    assert token_key("https://a/mcp", "https://i") != token_key("https://a/mcp", "https://j")
    with pytest.raises(ValueError):
        token_key("https://a", None, "bogus")


def test_secret_never_prints() -> None:
    s = Secret(TOKEN)
    texts = (str(s), repr(s), f"{s}", f"{s!r}", "%s" % s, f"{[s]}", f"{ {'t': s} }")  # noqa: UP031
    for text in texts:
        assert TOKEN not in text
        assert "<redacted>" in text
    assert s.value == TOKEN
    assert s == TOKEN and s == Secret(TOKEN) and s != "other"
    assert Secret(s).value == TOKEN
    assert bool(Secret("")) is False


def test_redact() -> None:
    text = f"Authorization: Bearer {TOKEN}; refresh={TOKEN}-long and rt-99"
    out = redact(text, [TOKEN, f"{TOKEN}-long", Secret("rt-99"), "", None])
    assert TOKEN not in out and "rt-99" not in out
    assert out == "Authorization: Bearer <redacted>; refresh=<redacted> and <redacted>"
    assert redact("nothing here", []) == "nothing here"


def test_expiry_helpers() -> None:
    stamped = stamp_expiry({"access_token": "x", "expires_in": 60}, now=1000.0)
    assert stamped["expires_at"] == 1060.0
    assert not is_expired(stamped, now=1000.0)
    assert is_expired(stamped, now=1040.0)  # within the default 30 s skew
    assert is_expired(stamped, now=1061.0, skew=0)
    assert "expires_at" not in stamp_expiry({"access_token": "x"})
    assert not is_expired({"access_token": "x"})


# ------------------------------------------------------------------ memory


async def test_memory_store_round_trip_and_copies() -> None:
    store: TokenStore = MemoryStore()
    assert await store.load("k") is None
    value: dict[str, Any] = {"access_token": TOKEN, "scopes": ["a"]}
    await store.save("k", value)
    value["scopes"].append("mutated")
    loaded = await store.load("k")
    assert loaded == {"access_token": TOKEN, "scopes": ["a"]}
    assert loaded is not None
    loaded["access_token"] = "changed"
    assert await store.load("k") == {"access_token": TOKEN, "scopes": ["a"]}
    await store.delete("k")
    await store.delete("k")
    assert await store.load("k") is None
    assert TOKEN not in repr(store)


async def test_unserialisable_value_error_hides_value() -> None:
    with pytest.raises(TypeError) as info:
        await MemoryStore().save("k", {"access_token": TOKEN, "x": object()})
    assert TOKEN not in str(info.value)


# ------------------------------------------------------------------ keyring


async def test_keyring_round_trip(kr: MemoryKeyring) -> None:
    store = KeyringStore()
    assert isinstance(store, TokenStore)
    key = token_key("https://example.com/mcp", "https://auth.example.com")
    assert await store.load(key) is None
    await store.save(key, RECORD)
    assert ("trimcp", key) in kr.data  # JSON-encoded under service "trimcp"
    assert await store.load(key) == RECORD
    await store.save(key, {**RECORD, "access_token": "new"})
    assert (await store.load(key) or {})["access_token"] == "new"
    await store.delete(key)
    assert await store.load(key) is None
    await store.delete(key)  # missing: no error
    assert TOKEN not in repr(store)


async def test_keyring_custom_service_and_corrupt_record(kr: MemoryKeyring) -> None:
    store = KeyringStore("other")
    await store.save("k", {"a": 1})
    assert kr.data[("other", "k")] == '{"a":1}'
    kr.data[("other", "k")] = "not json"
    assert await store.load("k") is None


@pytest.mark.parametrize("backend", [fail.Keyring(), null.Keyring()])
def test_keyring_unusable_backend_raises(backend: Any) -> None:
    with pytest.raises(StoreUnavailable):
        KeyringStore(backend=backend)


def test_keyring_empty_chainer_unusable(no_keyring: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from keyring.backends import chainer

    monkeypatch.setattr(chainer.ChainerBackend, "backends", [])
    with pytest.raises(StoreUnavailable, match="chainer"):
        KeyringStore(backend=chainer.ChainerBackend())


async def test_keyring_failure_on_use_hides_token() -> None:
    store = KeyringStore(backend=BrokenKeyring())
    with pytest.raises(StoreUnavailable) as info:
        await store.save("k", RECORD)
    assert TOKEN not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    with pytest.raises(StoreUnavailable):
        await store.load("k")


async def test_default_store_uses_keyring(kr: MemoryKeyring) -> None:
    store = default_store()
    assert isinstance(store, FallbackStore) and isinstance(store.store, KeyringStore)
    await store.save("k", RECORD)
    assert ("trimcp", "k") in kr.data


async def test_default_store_falls_back_to_memory_with_warning(
    no_keyring: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="trimcp.auth"):
        store = default_store()
        await store.save(token_key("https://example.com/mcp", None), RECORD)
        assert await store.load(token_key("https://example.com/mcp", None)) == RECORD
    assert isinstance(store, MemoryStore)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "memory" in warnings[0].getMessage()
    assert TOKEN not in caplog.text


async def test_default_store_falls_back_to_file(no_keyring: None, tmp_path: Path) -> None:
    store = default_store(file=tmp_path / "tokens.json")
    assert isinstance(store, FileStore)
    await store.save("k", RECORD)
    assert await store.load("k") == RECORD


async def test_default_store_switches_when_keyring_fails_on_use(
    caplog: pytest.LogCaptureFixture,
) -> None:
    before = keyring.get_keyring()
    keyring.set_keyring(BrokenKeyring())
    try:
        with caplog.at_level(logging.WARNING, logger="trimcp.auth"):
            store = default_store()
            await store.save("k", RECORD)
            assert await store.load("k") == RECORD
    finally:
        keyring.set_keyring(before)
    assert isinstance(store, FallbackStore) and isinstance(store.store, MemoryStore)
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    assert TOKEN not in caplog.text


# ------------------------------------------------------------------ file


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


async def test_file_store_round_trip_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "tokens.json"
    store = FileStore(path)
    assert await store.load("k") is None
    await store.save("k", RECORD)
    await store.save("c", {"client_id": "abc"})
    assert _mode(path) == 0o600
    assert await store.load("k") == RECORD
    # A second instance (another process, later) sees the same data.
    assert await FileStore(path).load("c") == {"client_id": "abc"}
    await store.delete("k")
    await store.delete("k")
    assert await store.load("k") is None
    assert _mode(path) == 0o600
    assert TOKEN not in repr(store)


async def test_file_store_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tokens.json"
    store = FileStore(path)
    await store.save("k", RECORD)
    before = path.read_bytes()

    def boom(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        await store.save("k2", {"x": 1})
    monkeypatch.undo()
    assert path.read_bytes() == before  # old content intact
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


async def test_file_store_many_concurrent_writers(tmp_path: Path) -> None:
    import trio

    path = tmp_path / "tokens.json"
    stores = [FileStore(path) for _ in range(3)]
    async with trio.open_nursery() as nursery:
        for i in range(30):
            nursery.start_soon(stores[i % 3].save, f"k{i}", {"n": i})
    for i in range(30):
        assert await stores[0].load(f"k{i}") == {"n": i}


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
async def test_file_store_refuses_0644(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text('{"version": 1, "records": {}}')
    os.chmod(path, 0o644)
    with pytest.raises(InsecureFileError, match="0644"):
        FileStore(path)
    # ...and also if it becomes readable after construction.
    os.chmod(path, 0o600)
    store = FileStore(path)
    os.chmod(path, 0o640)
    with pytest.raises(InsecureFileError, match="chmod 600"):
        await store.load("k")
    with pytest.raises(InsecureFileError):
        default_store_file(path)


def default_store_file(path: Path) -> TokenStore:
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        return default_store(file=path)
    finally:
        keyring.set_keyring(before)


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
async def test_file_store_refuses_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("{}")
    os.chmod(real, 0o600)
    link = tmp_path / "tokens.json"
    link.symlink_to(real)
    with pytest.raises(InsecureFileError, match="symlink"):
        FileStore(link)


async def test_file_store_corrupt_is_clear_error_without_content(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, f'{{"records": {{"k": "{TOKEN}"'.encode())
    os.close(fd)
    with pytest.raises(StoreUnavailable) as info:
        await FileStore(path).load("k")
    assert TOKEN not in str(info.value)


async def test_without_the_keyring_package_tokens_stay_in_memory_and_the_hint_says_why(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # keyring is an optional extra (trimcp[keyring]); a plain install must still work.
    monkeypatch.setitem(sys.modules, "keyring", None)  # import keyring -> ImportError
    with pytest.raises(StoreUnavailable, match=r"pip install 'trimcp\[keyring\]'"):
        KeyringStore()
    with caplog.at_level(logging.WARNING, logger="trimcp"):
        store = default_store()
    assert isinstance(store, MemoryStore)
    assert "trimcp[keyring]" in caplog.text
    await store.save("k", {"access_token": "t"})
    assert await store.load("k") == {"access_token": "t"}
