"""Placeholders for the blocks truncation drops: never larger than what they replace, and one
line with a count for blocks alike side by side (issue 31, point 5).

The property test drives ``truncate_result`` (the pure core, and ``trimcp.host``'s wrapper)
on random results and checks, block by block, which originals were kept, which were dropped,
and which placeholder line stands for which run of dropped blocks.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp._sansio.host import estimate_tokens, plan_truncation
from trimcp._sansio.host import truncate_result as core_truncate
from trimcp.host import truncate_result_sync

PLACEHOLDER = re.compile(r"^\[(?:(\d+) (\S+) blocks|(\S+)(?: block| \(| omitted))")


def size(block: dict[str, Any]) -> int:
    return len(json.dumps(block, ensure_ascii=False, separators=(",", ":")))


def key(block: dict[str, Any]) -> tuple[str, str]:
    inner = block.get("resource") or {}
    return str(block.get("type")), str(block.get("mimeType") or inner.get("mimeType") or "")


def parse(block: dict[str, Any]) -> tuple[int, str] | None:
    """(count, kind) of a placeholder line, ``None`` for any other block."""
    if block.get("type") != "text":
        return None
    found = PLACEHOLDER.match(block["text"])
    if found is None or not block["text"].endswith("]"):
        return None
    if found.group(1):
        return int(found.group(1)), found.group(2)
    return 1, found.group(3)


def links(count: int) -> list[dict[str, Any]]:
    return [{"type": "resource_link", "uri": f"file:///x/{i}", "name": f"f{i}"} for i in range(count)]


def test_the_issue_repro_gives_one_line_smaller_than_the_links() -> None:
    # Before: 12 identical "[resource_link block omitted: ...]" blocks (for 14 links), each
    # longer than the link it stood for.
    result = {"content": [*links(30), {"type": "text", "text": "x" * 1500}]}
    out = core_truncate(result, max_tokens=400)
    lines = [b for b in out["content"] if parse(b) is not None]
    assert len(lines) == 1
    count, kind = parse(lines[0])  # type: ignore[misc]
    assert kind == "resource_link"
    kept = [b for b in out["content"] if b.get("type") == "resource_link"]
    assert kept == result["content"][: len(kept)] and count == 30 - len(kept) > 1
    assert lines[0]["text"] == f"[{count} resource_link blocks omitted: they did not fit the token limit]"
    assert size(lines[0]) < sum(size(b) for b in result["content"][len(kept) : 30])
    assert estimate_tokens(out) <= 400


def test_a_lone_small_block_gets_a_shorter_line_or_none() -> None:
    # One link of 45 characters: the long line (60) would be larger than the link.
    [link] = links(1)
    result = {"content": [{"type": "text", "text": "y" * 4000}, link]}
    out = core_truncate(result, max_tokens=64)
    lines = [b for b in out["content"] if parse(b) is not None]
    assert all(size(b) <= size(link) for b in lines)
    assert not any("did not fit" in b["text"] for b in lines)
    assert estimate_tokens(out) <= 64


def test_placeholders_either_side_of_a_dropped_text_become_one_line() -> None:
    image = {"type": "image", "data": "A" * 40_000, "mimeType": "image/png"}
    result = {"content": [image, {"type": "text", "text": "z" * 80}, image]}
    out = core_truncate(result, max_tokens=100)  # room for neither image, nor for 64 characters of text
    assert [parse(b) for b in out["content"][:-1]] == [(2, "image")]
    assert "Left out: 3 content blocks." in out["content"][-1]["text"]


def test_blocks_alike_split_by_a_kept_block_keep_a_line_each() -> None:
    small = {"type": "image", "data": "A" * 400, "mimeType": "image/png"}
    big = {"type": "audio", "data": "B" * 40_000, "mimeType": "audio/wav"}
    result = {"content": [big, big, small, big]}
    out = core_truncate(result, max_tokens=400)
    assert [parse(b) or b["type"] for b in out["content"][:-1]] == [(2, "audio"), "image", (1, "audio")]


# ------------------------------------------------------------------ the property

_MIMES = {"image": ("image/png", "image/jpeg"), "audio": ("audio/wav",), "resource": ("application/pdf", None)}


@st.composite
def block(draw: st.DrawFn, index: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "image", "audio", "resource_link", "resource", "custom"]))
    # Each block is unique (its index is in it), so a kept one is found again in the output.
    if kind == "text":
        return {"type": "text", "text": f"text block {index}: " + "w" * draw(st.integers(0, 3000))}
    if kind in ("image", "audio"):
        data = base64.b64encode(bytes([index % 256]) * draw(st.integers(1, 9000))).decode()
        return {"type": kind, "data": data, "mimeType": draw(st.sampled_from(_MIMES[kind]))}
    if kind == "resource":
        inner: dict[str, Any] = {
            "uri": f"file:///b/{index}",
            "blob": base64.b64encode(b"q" * draw(st.integers(0, 3000))).decode(),
        }
        mime = draw(st.sampled_from(_MIMES["resource"]))
        if mime is not None:
            inner["mimeType"] = mime
        return {"type": "resource", "resource": inner}
    if kind == "resource_link":
        return {"type": "resource_link", "uri": f"file:///l/{index}", "name": "n" * draw(st.integers(1, 40))}
    return {"type": "custom", "id": index, "payload": "p" * draw(st.integers(0, 600))}


@st.composite
def results(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(0, 24))
    return {"content": [draw(block(i)) for i in range(count)]}


def _dense(text: str) -> int:
    return len(text) // 3 + 1


def _image_tokens(wire: dict[str, Any]) -> int:
    return sum(min(1600, math.ceil(len(b["data"]) / 4)) for b in wire["content"] if b.get("type") == "image")


def _assign(lines: list[dict[str, Any]], runs: list[list[dict[str, Any]]]) -> bool:
    """Whether ``lines`` (the placeholders between two kept blocks, in order) can stand for
    ``runs`` (the dropped non-text blocks alike in a row there, in order): each line for
    one run or several runs alike whose runs between get no line, its count theirs, its
    JSON and its estimate no larger than theirs, and no two lines in a row for blocks alike."""

    def fits(at: int, start: int, previous: tuple[str, str] | None) -> bool:
        if at == len(lines):
            return True
        count, kind = parse(lines[at])  # type: ignore[misc]
        for first in range(start, len(runs)):
            alike = key(runs[first][0])
            if alike[0] != kind or alike == previous:
                continue
            covered: list[dict[str, Any]] = []
            for later in range(first, len(runs)):
                if key(runs[later][0]) != alike:
                    continue  # a run of other blocks between gets no line
                covered += runs[later]
                if len(covered) > count:
                    break
                if (
                    len(covered) == count
                    and size(lines[at]) <= sum(size(b) for b in covered)
                    and estimate_tokens({"content": [lines[at]]}) <= estimate_tokens({"content": covered})
                    and fits(at + 1, later + 1, alike)
                ):
                    return True
        return False

    return fits(0, 0, None)


def check(result: dict[str, Any], out: dict[str, Any], limit: int, counter: Callable[[str], int] | None) -> None:
    if out is result:
        return
    originals: list[dict[str, Any]] = result["content"]
    *body, notice = out["content"]
    assert notice["text"].startswith(f"[OUTPUT TRUNCATED - exceeded {limit} token limit]")
    # The output between two kept blocks (or an end): its placeholder lines.
    segments: list[list[dict[str, Any]]] = [[]]
    kept: list[int] = []
    for b in body:
        if parse(b) is not None:
            segments[-1].append(b)
            continue
        if b.get("type") == "text":  # text blocks are found again by their head
            kept.append(int(b["text"].split(":", 1)[0].removeprefix("text block ")))
        else:
            kept.append(originals.index(b))
        segments.append([])
    assert kept == sorted(kept)
    # The dropped non-text blocks between the same kept blocks, in runs of blocks alike (a
    # dropped text block is passed over).
    dropped: list[list[list[dict[str, Any]]]] = [[]]
    for i, original in enumerate(originals):
        if i in kept:
            dropped.append([])
        elif original["type"] != "text":
            runs = dropped[-1]
            if runs and key(runs[-1][-1]) == key(original):
                runs[-1].append(original)
            else:
                runs.append([original])
    for lines, runs in zip(segments, dropped, strict=True):
        assert _assign(lines, runs), (lines, runs)
    # Within the limit, as the limit is measured.
    if counter is None:
        assert estimate_tokens(out) <= limit
    else:
        assert counter(plan_truncation(out, max_tokens=64).count_input()) + _image_tokens(out) <= limit


@settings(max_examples=300, deadline=None)
@given(results(), st.sampled_from([64, 80, 120, 200, 400, 1000, 4000]), st.sampled_from([None, _dense]))
def test_placeholders_never_outgrow_what_they_replace(
    result: dict[str, Any], limit: int, counter: Callable[[str], int] | None
) -> None:
    out = core_truncate(result, max_tokens=limit, counter=counter)
    check(result, out, limit, counter)


@settings(max_examples=60, deadline=None)
@given(results(), st.sampled_from([64, 200, 1000]))
def test_the_host_wrapper_keeps_the_property(result: dict[str, Any], limit: int) -> None:
    # image_hook=None: an image that does not fit gets a placeholder (no Pillow downscaling).
    out = truncate_result_sync(result, max_tokens=limit, image_hook=None)
    check(result, out, limit, None)


@pytest.mark.parametrize("limit", [64, 200, 400, 4000])
def test_many_blocks_alike_are_one_line(limit: int) -> None:
    # 50 clips of 10 000 tokens each: none fits, one line says so.
    result = {"content": [{"type": "audio", "data": "B" * 40_000, "mimeType": "audio/wav"}] * 50}
    out = core_truncate(result, max_tokens=limit)
    lines = [parse(b) for b in out["content"][:-1]]
    assert lines == [(50, "audio")]
    assert estimate_tokens(out) <= limit
