"""trimcp.host.truncate_result: the async wrapper, counters, the limit from the environment,
Pillow downscaling, and the full output saved to a file."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
import math
import os
import random
import stat
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image  # the test extra has Pillow

from trimcp._sansio.host import estimate_tokens
from trimcp._sansio.host import truncate_result as core_truncate
from trimcp._sansio.schema import CallToolResult, from_wire
from trimcp.host import counters, estimate, local_counter, truncate_result, truncate_result_sync
from trimcp.host.images import downscale_image


class Counter:
    """An exact counter that counts its calls (one token per three characters)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        return math.ceil(len(text) / 3)


class AsyncCounter(Counter):
    async def __call__(self, text: str) -> int:  # type: ignore[override]
        await trio.lowlevel.checkpoint()
        return super().__call__(text)


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


# ------------------------------------------------------------------ counters


@pytest.mark.parametrize("make", [Counter, AsyncCounter])
async def test_counter_never_called_under_half_the_limit(make: type[Counter]) -> None:
    counter = make()
    result = text_result("x" * (4 * 12_499))
    assert await truncate_result(result, counter=counter) is result
    typed = from_wire(CallToolResult, result)
    assert await truncate_result(typed, counter=counter) is typed
    assert counter.calls == 0


@pytest.mark.parametrize("make", [Counter, AsyncCounter])
async def test_counter_called_once_when_needed(make: type[Counter]) -> None:
    counter = make()
    between = text_result("x" * (4 * 15_000))  # estimated 15 000, counted 20 000: passes
    assert await truncate_result(between, counter=counter) is between
    assert counter.calls == 1
    counter = make()
    out = await truncate_result(text_result("y" * 60_000), max_tokens=18_000, counter=counter)
    assert counter.calls == 1  # the count forced a cut the estimate would not have made
    assert out["content"][-1]["text"].startswith("[OUTPUT TRUNCATED - exceeded 18000 token limit]")
    assert Counter()(out["content"][0]["text"]) <= 18_000


async def test_a_callable_returning_an_awaitable_is_awaited() -> None:
    counter = AsyncCounter()

    def deferred(text: str) -> Any:
        return counter(text)  # a coroutine, from a plain function

    out = await truncate_result(text_result("y" * 60_000), max_tokens=18_000, counter=deferred)
    assert counter.calls == 1 and len(out["content"]) == 2


def test_estimate_is_the_cores_rule() -> None:
    assert estimate("") == 0 and estimate("abcd") == 1 and estimate("abcde") == 2
    text = "q" * 4001
    assert estimate(text) == estimate_tokens(text_result(text))


def test_local_counter_without_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counters.importlib.util, "find_spec", lambda name: None)
    assert local_counter() is None


def test_local_counter_uses_tiktoken_only_when_the_encoding_is_cached(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    requested: list[str] = []

    class Encoding:
        def encode(self, text: str, disallowed_special: object = None) -> list[str]:
            assert disallowed_special == ()
            return text.split()

    fake = types.ModuleType("tiktoken")

    def get_encoding(name: str) -> Encoding:
        requested.append(name)
        return Encoding()

    fake.get_encoding = get_encoding  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiktoken", fake)
    monkeypatch.setattr(counters.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert local_counter() is None and requested == []  # nothing cached: no download attempted
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"cached")
    counter = local_counter()
    assert counter is not None and requested == ["cl100k_base"]
    assert counter("three little words") == 3
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken's cache turned off
    assert local_counter() is None


# ------------------------------------------------------------------ the limit


async def test_max_tokens_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    result = text_result("w" * 40_000)  # 10 000 tokens
    monkeypatch.setenv("MAX_MCP_OUTPUT_TOKENS", "3000")
    out = await truncate_result(result)
    assert "exceeded 3000 token limit" in out["content"][-1]["text"]
    assert estimate_tokens(out) <= 3000
    assert "exceeded 3000 token" in truncate_result_sync(result)["content"][-1]["text"]
    # the parameter wins over the variable
    assert await truncate_result(result, max_tokens=20_000) is result
    monkeypatch.setenv("MAX_MCP_OUTPUT_TOKENS", "  ")
    assert await truncate_result(result) is result


@pytest.mark.parametrize("raw", ["0", "-5", "lots", "12.5", "10"])
async def test_unusable_environment_limit_warns_and_falls_back(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    raw: str,
) -> None:
    monkeypatch.setenv("MAX_MCP_OUTPUT_TOKENS", raw)
    big = text_result("w" * 120_000)  # 30 000 tokens: over the default limit
    with caplog.at_level(logging.WARNING, logger="trimcp.host"):
        out = await truncate_result(big)
    assert "exceeded 25000 token limit" in out["content"][-1]["text"]
    assert any("MAX_MCP_OUTPUT_TOKENS" in record.getMessage() for record in caplog.records)


# ------------------------------------------------------------------ equal to the core

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda children: st.lists(children, max_size=10) | st.dictionaries(st.text(max_size=8), children, max_size=6),
    max_leaves=80,
)


@settings(max_examples=40, deadline=None)
@given(json_values, st.integers(64, 600), st.booleans(), st.booleans())
def test_async_wrapper_equals_the_sync_core(value: object, limit: int, structured: bool, typed: bool) -> None:
    wire: dict[str, Any] = {"content": [{"type": "text", "text": json.dumps(value)}]}
    if structured:
        wire["structuredContent"] = {"value": value}
    result: Any = from_wire(CallToolResult, wire) if typed else wire
    expected = core_truncate(result, max_tokens=limit, counter=Counter())

    async def run() -> Any:
        return await truncate_result(result, max_tokens=limit, counter=Counter())

    got = trio.run(run)
    assert got == expected
    assert truncate_result_sync(result, max_tokens=limit, counter=Counter()) == expected


# ------------------------------------------------------------------ images


def noise_image(width: int, height: int, mode: str, seed: int = 7) -> str:
    """A PNG of random pixels (it hardly compresses), base64."""
    rng = random.Random(seed)
    channels = len(mode)
    pixels = bytes(rng.getrandbits(8) for _ in range(width * height * channels))
    image = Image.frombytes(mode, (width, height), pixels)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def decode(block: dict[str, Any]) -> Any:
    image = Image.open(io.BytesIO(base64.b64decode(block["data"])))
    image.load()
    return image


@pytest.mark.parametrize(("mode", "mime", "fmt"), [("RGB", "image/jpeg", "JPEG"), ("RGBA", "image/png", "PNG")])
async def test_an_image_that_does_not_fit_is_downscaled_to_fit(mode: str, mime: str, fmt: str) -> None:
    data = noise_image(160, 120, mode)
    assert len(data) > 6400 * 4  # costs the full 1 600 tokens
    image = {"type": "image", "data": data, "mimeType": "image/png"}
    result = {"content": [{"type": "text", "text": "t" * 20_000}, image, image]}
    out = await truncate_result(result, max_tokens=3000)
    images = [block for block in out["content"] if block["type"] == "image"]
    assert len(images) == 2  # the first kept whole, the second downscaled into what was left
    assert images[0] == image
    small = images[1]
    assert small["mimeType"] == mime
    decoded = decode(small)
    assert decoded.format == fmt and decoded.size[0] < 160 and decoded.size[0] * 3 == decoded.size[1] * 4
    # transparency kept (in RGBA or a palette with alpha) only where there was some
    alpha = decoded.convert("RGBA").getchannel("A").getextrema()
    assert (alpha != (255, 255)) == (mode == "RGBA")
    assert estimate_tokens(out) <= 3000
    assert not any("omitted" in block.get("text", "") for block in out["content"])


def test_downscale_image_meets_any_budget_it_can() -> None:
    block = {"type": "image", "data": noise_image(256, 256, "RGB"), "mimeType": "image/png"}
    for tokens in (1500, 600, 200):
        small = downscale_image(block, tokens)
        assert small is not None and len(small["data"]) <= tokens * 4
        assert decode(small).size[0] <= 256
    assert downscale_image(block, 1) is None  # not even 8 pixels fit in 4 characters
    assert downscale_image({"type": "image", "data": "bm90IGFuIGltYWdl", "mimeType": "image/png"}, 500) is None
    assert downscale_image({"type": "image", "data": "%%%", "mimeType": "image/png"}, 500) is None


async def test_without_pillow_the_placeholder_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    from trimcp.host import images

    monkeypatch.setattr(images.importlib.util, "find_spec", lambda name: None)
    image = {"type": "image", "data": noise_image(160, 120, "RGB"), "mimeType": "image/png"}
    out = await truncate_result({"content": [{"type": "text", "text": "t" * 20_000}, image, image]}, max_tokens=3000)
    assert [block["type"] for block in out["content"]].count("image") == 1
    assert any("image/png" in block.get("text", "") and "omitted" in block["text"] for block in out["content"])
    # image_hook=None asks for the placeholder even with Pillow
    monkeypatch.undo()
    out = await truncate_result(
        {"content": [image, image, {"type": "text", "text": "t" * 20_000}]}, max_tokens=3000, image_hook=None
    )
    assert [block["type"] for block in out["content"]].count("image") == 1


# ------------------------------------------------------------------ the full output


async def test_full_output_saved_only_when_cut(tmp_path: Path) -> None:
    target = tmp_path / "outputs"
    small = text_result("fits")
    assert await truncate_result(small, save_full_output=target) is small
    between = text_result("x" * (4 * 20_000))  # over half the limit, within it
    assert await truncate_result(between, save_full_output=target) is between
    assert not target.exists()

    items = [{"id": i, "name": f"item {i}"} for i in range(20_000)]
    result = from_wire(
        CallToolResult,
        {"content": [{"type": "text", "text": json.dumps(items)}], "structuredContent": {"items": items}},
    )
    out = await truncate_result(result, max_tokens=2000, save_full_output=target)
    assert isinstance(out, CallToolResult)
    (saved,) = target.iterdir()
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    notice = out.content[-1].text  # type: ignore[union-attr]
    assert str(saved) in notice
    full = json.loads(saved.read_text("utf-8"))
    assert full["structuredContent"]["items"] == items
    assert json.loads(full["content"][0]["text"]) == items
    # the same output again: the same file, still 0600
    os.chmod(saved, 0o644)
    again = await truncate_result(result, max_tokens=2000, save_full_output=str(target))
    assert again == out and list(target.iterdir()) == [saved]
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600


def test_full_output_sync_and_never_through_a_symlink(tmp_path: Path) -> None:
    result = text_result("line\n" * 50_000)
    out = truncate_result_sync(result, max_tokens=1000, save_full_output=tmp_path)
    (saved,) = tmp_path.iterdir()
    assert str(saved) in out["content"][-1]["text"]
    assert json.loads(saved.read_text("utf-8")) == result
    saved.unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("untouched")
    saved.symlink_to(elsewhere)
    with pytest.raises(OSError):
        truncate_result_sync(result, max_tokens=1000, save_full_output=tmp_path)
    assert elsewhere.read_text() == "untouched"
