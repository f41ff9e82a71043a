"""Fitting a tool result into an agent's context: the two-phase token limit.

Theory of operation
-------------------
Spec "Server features / Tools", ``CallToolResult`` (content blocks, and from
2025-06-18 ``structuredContent``).  A host passes a tool's result to a model with a
limit (25 000 tokens by default, like ``MAX_MCP_OUTPUT_TOKENS`` elsewhere).

Phase 1 is an O(n) estimate: one token per four characters of text (text blocks,
embedded text resources, the compact JSON of ``structuredContent``, base64 of audio
and blobs, the JSON of other blocks), and 1 600 tokens per image.  Four characters
a token is the usual rule of thumb for English and code with BPE tokenizers; it
overcounts dense JSON a little, which errs on the safe side.  A result estimated
under half the limit is returned unchanged and the exact counter is never called.

Phase 2 asks an exact counter for the text parts (images keep their fixed cost).  A
result within the limit is returned unchanged.  Otherwise it is cut to the limit
less the notice, in estimator units; when the counter found more tokens than the
estimate, the budget shrinks by that ratio so the cut also fits the counter.  The
notice and placeholders are reserved at three characters a token at least (the
counter counts them too, and a small result shows little of its density).

The cut: images (and other blocks of fixed cost) are budgeted first, in order, and
kept while they fit; one that does not is offered to ``image_hook`` (the place for
downscaling and re-encoding, with Pillow for instance, which this pure core does not
do) and otherwise replaced by a text block saying what was dropped.  Text blocks
then take the rest in order, each cut by ``shrink_text`` (JSON stays valid, tables
keep their header); ``structuredContent`` gets a share of the text budget in
proportion to its size and is cut by ``shrink_json``.  A notice block follows:
``[OUTPUT TRUNCATED - exceeded {limit} token limit]`` and a sentence telling the agent
to page or filter, naming the file with the full output when the host saved one.

The API is in two steps so the exact count can be awaited (the async wrapper) or
called (``truncate_result``)::

    plan = plan_truncation(result, max_tokens=25_000)
    if plan.needs_exact_count:
        exact = await counter(plan.count_input())
    out = plan.finish(exact)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

import attrs

from ..schema import CallToolResult, from_wire, to_wire
from .shrink import bounded_size, dumps, shrink_json, shrink_text

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "IMAGE_TOKENS",
    "ImageHook",
    "TruncationPlan",
    "estimate_tokens",
    "notice_text",
    "plan_truncation",
    "truncate_result",
]

DEFAULT_MAX_TOKENS: Final = 25_000
IMAGE_TOKENS: Final = 1_600
CHARS_PER_TOKEN: Final = 4
#: English prose at its densest under common BPE tokenizers (about 3.5 characters a token
#: for the densest); what our own notice and placeholders are reserved at.
DENSEST_CHARS_PER_TOKEN: Final = 3
#: A text block left with less room than this is dropped rather than cut to a stub.
_MIN_TEXT_ROOM: Final = 64

#: ``hook(image_block, max_tokens)`` -> a smaller image block (wire form) or ``None``.
ImageHook = Callable[[Mapping[str, Any], int], "Mapping[str, Any] | None"]
#: The hook gets the image block and the tokens left; its block is kept when it costs no more.

R = TypeVar("R", CallToolResult, Mapping[str, Any])


def notice_text(max_tokens: int, *, full_output_path: str | None = None, dropped: str = "", brief: bool = False) -> str:
    """The notice that ends a truncated result (``brief``: its first line and what was
    left out, for a limit the whole notice would not fit)."""
    text = f"[OUTPUT TRUNCATED - exceeded {max_tokens} token limit]"
    if not brief:
        text += (
            "\nThe tool's output was cut to fit. To see the rest, call the server's pagination or "
            "filtering tools (a page, cursor, offset or limit argument, or a narrower query)."
        )
    if dropped:
        text += f" Left out: {dropped}."
    if full_output_path is not None:
        text += f" The full output was saved to {full_output_path}."
    return text


def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def _cap(max_tokens: int) -> int:
    """How far JSON parts are measured: far enough to tell "over the limit" and to split
    the budget in proportion between parts up to four times the limit."""
    return 4 * max_tokens * CHARS_PER_TOKEN


def _image_tokens(block: Mapping[str, Any]) -> int:
    """1 600 tokens, or less for an image whose base64 is under 6 400 characters (a
    thumbnail, or what ``image_hook`` made of a larger one)."""
    data = block.get("data")
    return min(IMAGE_TOKENS, _tokens(len(data))) if isinstance(data, str) else IMAGE_TOKENS


def _block_chars(block: Mapping[str, Any], cap: int) -> tuple[int, bool]:
    """(characters, is_text) of one content block; images are not counted here."""
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return len(block["text"]), True
    if kind == "resource" and isinstance(block.get("resource"), Mapping):
        text = block["resource"].get("text")
        if isinstance(text, str):
            return len(text), True
        blob = block["resource"].get("blob")
        if isinstance(blob, str):
            return len(blob), False
    if kind == "audio" and isinstance(block.get("data"), str):
        return len(block["data"]), False
    return bounded_size(dict(block), cap), False


def estimate_tokens(result: CallToolResult | Mapping[str, Any]) -> int:
    """The phase-1 estimate of a result (``CallToolResult`` or wire dict): ceil(chars / 4)
    plus 1 600 per image.  ``structuredContent`` is measured up to 64 times the default
    limit (it is too large to pass beyond that, and measuring further would cost O(n))."""
    wire = to_wire(result) if isinstance(result, CallToolResult) else result
    return _estimate(wire, 64 * DEFAULT_MAX_TOKENS * CHARS_PER_TOKEN)[0]


def _estimate(wire: Mapping[str, Any], cap: int) -> tuple[int, int, int, int]:
    """(tokens, text chars, structured chars, image tokens) of a wire result; JSON parts
    (``structuredContent``, unknown blocks) are measured only up to ``cap`` characters,
    because walking a large value in Python costs more than parsing it."""
    images = text_chars = other_chars = 0
    for block in wire.get("content") or ():
        if isinstance(block, Mapping) and block.get("type") == "image":
            images += _image_tokens(block)
            continue
        chars, is_text = _block_chars(block, cap) if isinstance(block, Mapping) else (0, False)
        if is_text:
            text_chars += chars
        else:
            other_chars += chars
    structured = wire.get("structuredContent")
    structured_chars = 0 if structured is None else bounded_size(structured, cap)
    tokens = _tokens(text_chars + other_chars + structured_chars) + images
    return tokens, text_chars, structured_chars, images


@attrs.frozen
class TruncationPlan:
    """Phase 1 done: whether an exact count is needed, and ``finish`` to apply it.

    ``finish(exact_tokens)`` takes the counter's answer for ``count_input()`` (``None``
    when there is no counter: the estimate stands in for it) and returns the result
    unchanged or cut, of the kind it was given.
    """

    result: Any
    wire: Mapping[str, Any]
    max_tokens: int
    estimate: int
    image_hook: ImageHook | None = None
    full_output_path: str | None = None

    @property
    def needs_exact_count(self) -> bool:
        """False when the estimate is under half the limit: the result passes as it is."""
        return self.estimate * 2 >= self.max_tokens

    def count_input(self) -> str:
        """The text an exact counter should count: every part the estimate measures, the
        same part of each block, newline-joined (images keep their fixed cost)."""
        parts: list[str] = []
        for block in self.wire.get("content") or ():
            if not isinstance(block, Mapping) or block.get("type") == "image":
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "resource" and isinstance(block.get("resource"), Mapping):
                inner = block["resource"]
                parts.append(str(inner.get("text", inner.get("blob", ""))))
            elif block.get("type") == "audio" and isinstance(block.get("data"), str):
                parts.append(block["data"])  # what the estimate measures, as for a blob
            else:
                parts.append(dumps(dict(block)))
        if self.wire.get("structuredContent") is not None:
            parts.append(dumps(self.wire["structuredContent"]))
        return "\n".join(parts)

    def finish(self, exact_tokens: int | None = None) -> Any:
        if not self.needs_exact_count:
            return self.result
        fixed = _estimate(self.wire, _cap(self.max_tokens))[3]
        estimated_text = self.estimate - fixed
        counted = estimated_text if exact_tokens is None else exact_tokens
        if counted + fixed <= self.max_tokens:
            return self.result
        # A tokenizer denser than the estimator: shrink the budget by the same ratio.
        scale = min(1.0, estimated_text / counted) if counted > 0 else 1.0
        out = _cut(self.wire, self.max_tokens, scale, self.image_hook, self.full_output_path)
        if isinstance(self.result, CallToolResult):
            return from_wire(CallToolResult, out)
        return out


def plan_truncation(
    result: R,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    image_hook: ImageHook | None = None,
    full_output_path: str | None = None,
) -> TruncationPlan:
    """Phase 1 for ``result`` (a ``CallToolResult`` or its wire dict)."""
    if max_tokens < 64:
        raise ValueError("max_tokens must leave room for the notice (>= 64)")
    wire = to_wire(result) if isinstance(result, CallToolResult) else result
    return TruncationPlan(
        result,
        wire,
        max_tokens,
        _estimate(wire, _cap(max_tokens))[0],
        image_hook=image_hook,
        full_output_path=full_output_path,
    )


def truncate_result(
    result: R,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    counter: Callable[[str], int] | None = None,
    image_hook: ImageHook | None = None,
    full_output_path: str | None = None,
) -> R:
    """``result`` within ``max_tokens``, of the kind it was given (synchronous counter).

    ``counter(text) -> tokens`` is the exact counter of phase 2; it is not called when
    the estimate is under half the limit.  ``image_hook`` may shrink an image that does
    not fit; ``full_output_path`` is named in the notice when the host saved the output.
    """
    plan = plan_truncation(result, max_tokens=max_tokens, image_hook=image_hook, full_output_path=full_output_path)
    exact = counter(plan.count_input()) if plan.needs_exact_count and counter is not None else None
    out: R = plan.finish(exact)
    return out


def _placeholder(block: Mapping[str, Any]) -> dict[str, Any]:
    kind = block.get("type", "?")
    mime = block.get("mimeType") or (block.get("resource") or {}).get("mimeType") or "unknown type"
    data = block.get("data") or (block.get("resource") or {}).get("blob") or ""
    size = len(data) * 3 // 4 if isinstance(data, str) else 0
    what = f"{kind} ({mime}, about {size} bytes)" if size else f"{kind} block"
    return {"type": "text", "text": f"[{what} omitted: it did not fit the token limit]"}


def _cut(
    wire: Mapping[str, Any],
    max_tokens: int,
    scale: float,
    image_hook: ImageHook | None,
    full_output_path: str | None,
) -> dict[str, Any]:
    blocks = [b for b in wire.get("content") or () if isinstance(b, Mapping)]
    # What the cut adds whatever the budget: the counter's newline between parts, and the
    # smallest structuredContent ("…" as JSON).
    fixed = len(blocks) + 1 + (3 if wire.get("structuredContent") is not None else 0)
    notice, per_block, budget = _framing(blocks, max_tokens, scale, full_output_path, fixed)
    kept: list[dict[str, Any] | None] = [None] * len(blocks)
    omitted: set[int] = set()  # dropped fixed-cost blocks that get no placeholder
    dropped = 0
    # Fixed-cost blocks first: images are what a screenshot tool was called for.
    for index, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "text" or (kind == "resource" and isinstance((block.get("resource") or {}).get("text"), str)):
            continue
        cost = _image_tokens(block) * CHARS_PER_TOKEN if kind == "image" else _block_chars(block, budget)[0]
        if cost <= budget:
            kept[index] = dict(block)
            budget -= cost
            continue
        smaller = image_hook(block, budget // CHARS_PER_TOKEN) if kind == "image" and image_hook else None
        if smaller is not None and _image_tokens(smaller) * CHARS_PER_TOKEN <= budget:
            kept[index] = dict(smaller)
            budget -= _image_tokens(smaller) * CHARS_PER_TOKEN
        else:
            if per_block:
                kept[index] = _placeholder(block)
            else:
                omitted.add(index)
            dropped += 1
    structured = wire.get("structuredContent")
    cap = _cap(max_tokens)
    text_total = min(
        cap, sum(_block_chars(b, budget)[0] for i, b in enumerate(blocks) if kept[i] is None and i not in omitted)
    )
    structured_budget = 0
    if structured is not None:
        # Both sides saturate at the same cap: two giants split the budget evenly.
        s_chars = min(cap, bounded_size(structured, cap))
        structured_budget = max(3, budget * s_chars // max(1, s_chars + text_total))
        budget -= structured_budget
    for index, block in enumerate(blocks):
        if kept[index] is not None or index in omitted:
            continue
        if budget < _MIN_TEXT_ROOM:
            dropped += 1
            continue
        if block.get("type") == "text":
            text = shrink_text(block["text"], budget)
            kept[index] = {**block, "text": text}
        else:
            inner = block["resource"]
            text = shrink_text(inner["text"], budget)
            kept[index] = {**block, "resource": {**inner, "text": text}}
        budget -= len(text)
    out = {key: value for key, value in wire.items() if key not in ("content", "structuredContent")}
    content = [block for block in kept if block is not None]
    if structured is not None:
        out["structuredContent"] = shrink_json(structured, max(3, structured_budget))[0]
    summary = f"{dropped} content block{'s' if dropped != 1 else ''}" if dropped else ""
    content.append({"type": "text", "text": notice(summary)})
    out["content"] = content
    return out


def _framing(
    blocks: list[Mapping[str, Any]], max_tokens: int, scale: float, full_output_path: str | None, fixed: int
) -> tuple[Callable[[str], str], bool, int]:
    """(notice maker, whether dropped blocks get a placeholder each, budget in characters
    left for content; ``fixed`` characters are added whatever it is).

    The framing (the notice's worst case, with every block dropped, and a placeholder
    per fixed-cost block) is reserved up front, so nothing can push the result over.
    Near the smallest limits it would not fit: the placeholders go first (the notice
    still counts what was left out), then the notice's second sentence, then the path."""
    worst_drop = f"{len(blocks)} content blocks"
    placeholders = sum(len(_placeholder(b)["text"]) for b in blocks if b.get("type") != "text")
    forms = [
        (False, full_output_path, True),
        (False, full_output_path, False),
        (True, full_output_path, False),
        (True, None, False),
    ]
    for index, (brief, path, per_block) in enumerate(forms):
        worst = notice_text(max_tokens, full_output_path=path, dropped=worst_drop, brief=brief)
        budget = _content_budget(max_tokens, scale, len(worst) + fixed + (placeholders if per_block else 0))
        if budget >= 0 or index == len(forms) - 1:
            return _notice_maker(max_tokens, path, brief), per_block, max(0, budget)
    raise AssertionError("unreachable")


def _content_budget(max_tokens: int, scale: float, framing: int) -> int:
    """Characters of content that fit beside ``framing`` characters of our own text
    (-1: the framing alone does not fit).

    Content is measured in estimator units and scaled by the counter's density on it.
    Our text is counted by the counter too, at a density the sample may not show (a
    tool result of a few characters says nothing of how the counter reads prose), so
    it is reserved at the larger of that scaled estimate and ``DENSEST_CHARS_PER_TOKEN``."""
    framing_tokens = max(_tokens(framing) / (scale or 1.0), math.ceil(framing / DENSEST_CHARS_PER_TOKEN))
    left = max_tokens - 1 - framing_tokens
    return int(left * scale) * CHARS_PER_TOKEN if left >= 0 else -1


def _notice_maker(max_tokens: int, path: str | None, brief: bool) -> Callable[[str], str]:
    return lambda dropped: notice_text(max_tokens, full_output_path=path, dropped=dropped, brief=brief)
