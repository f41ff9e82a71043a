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
do) and otherwise dropped.  A text line (a placeholder) says what was dropped: one line
per run of dropped blocks alike (same type and media type) side by side, with their
count (``[8 resource_link blocks omitted: ...]``), never larger than what it stands
for (its JSON no longer than theirs; a shorter line, or none, when the long one would
be), and placed in the room left beside the notice and the blocks kept (the shortest
lines' room is kept aside first when the limit has it to spare).  Text blocks then
take the rest in order, each cut by ``shrink_text`` (JSON stays valid, tables keep
their header); ``structuredContent`` gets a share of the text budget in proportion to
its size and is cut by ``shrink_json``.  A notice block follows:
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

import bisect
import math
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring as _quote  # the C quoter json.dumps itself uses
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


def _is_text(block: Mapping[str, Any]) -> bool:
    """A text block or an embedded text resource: cut to fit, never replaced by a placeholder."""
    kind = block.get("type")
    return kind == "text" or (kind == "resource" and isinstance((block.get("resource") or {}).get("text"), str))


def _key(block: Mapping[str, Any]) -> tuple[str, str]:
    """What a placeholder names: the block's type and media type (blocks alike share a line)."""
    inner = block.get("resource")
    mime = block.get("mimeType") or (inner.get("mimeType") if isinstance(inner, Mapping) else None)
    return str(block.get("type", "?")), str(mime) if mime else ""


def _data_bytes(block: Mapping[str, Any]) -> int:
    """The decoded size of a block's base64 payload (0 when it has none)."""
    inner = block.get("resource")
    data = block.get("data") or (inner.get("blob") if isinstance(inner, Mapping) else None)
    return len(data) * 3 // 4 if isinstance(data, str) else 0


#: A placeholder's JSON before its quoted text (``dumps`` of a text block).
_TEXT_BLOCK: Final = '{"type":"text","text":'
#: How far a dropped block is measured for its placeholder: past the longest line there is.
_REPLACED_CAP: Final = 512


@attrs.frozen
class _Run:
    """Dropped blocks alike side by side (or joined across blocks that went unsaid): what
    one placeholder line stands for, placed at its ``first`` block."""

    first: int
    last: int
    key: tuple[str, str]
    count: int
    #: The decoded size of their payloads, which the line states.
    data_bytes: int
    #: What they counted in the budget's characters, measured up to ``_REPLACED_CAP``.
    replaced: int

    @classmethod
    def over(cls, blocks: list[Mapping[str, Any]], indices: list[int]) -> _Run:
        """The blocks at ``indices`` (alike, in order) as one run.  They are measured only
        until their sum passes ``_REPLACED_CAP``: no line is that long, and a run of ten
        thousand links costs no more to describe than a run of ten."""
        replaced = 0
        for index in indices:
            if replaced > _REPLACED_CAP:
                break
            block = blocks[index]
            if block.get("type") == "image":
                replaced += _image_tokens(block) * CHARS_PER_TOKEN
            else:
                replaced += min(_REPLACED_CAP + 1, _block_chars(block, _REPLACED_CAP)[0])
        size = sum(_data_bytes(blocks[i]) for i in indices)
        return cls(indices[0], indices[-1], _key(blocks[indices[0]]), len(indices), size, replaced)

    def join(self, other: _Run) -> _Run:
        return _Run(
            self.first,
            other.last,
            self.key,
            self.count + other.count,
            self.data_bytes + other.data_bytes,
            self.replaced + other.replaced,
        )

    def forms(self) -> list[str]:
        """The lines that may stand for the run, longest first."""
        kind, mime = (part if len(part) <= 80 else "…" for part in self.key)  # a peer's words, bounded
        size = self.data_bytes
        if self.count == 1:
            what = f"{kind} ({mime or 'unknown type'}, about {size} bytes)" if size else f"{kind} block"
            return [f"[{what} omitted: it did not fit the token limit]", f"[{kind} omitted]"]
        facts = ", ".join(filter(None, (mime, f"about {size} bytes in all" if size else "")))
        what = f"{self.count} {kind} blocks" + (f" ({facts})" if facts else "")
        return [f"[{what} omitted: they did not fit the token limit]", f"[{self.count} {kind} blocks omitted]"]

    def line(self, room: int, *, shortest: bool = False) -> dict[str, Any] | None:
        """The longest line (``shortest``: the shortest) whose text is at most ``room``
        characters (``shortest``: whatever its length) and whose JSON is no longer than
        what the run counted; ``None`` when none is that small (the notice still counts
        the run among what was left out)."""
        forms = self.forms()
        for form in reversed(forms) if shortest else forms:
            # len(dumps({"type": "text", "text": form})), without building the dict twice
            if (shortest or len(form) <= room) and len(_TEXT_BLOCK) + len(_quote(form)) + 1 <= self.replaced:
                return {"type": "text", "text": form}
        return None


def _runs(blocks: list[Mapping[str, Any]], dropped: set[int], breakers: set[int]) -> list[_Run]:
    """The dropped blocks in runs of blocks alike (``_key``) side by side, where a block in
    ``breakers`` ends a run and any other block not dropped is passed over."""
    groups: list[list[int]] = []
    keys: list[tuple[str, str]] = []
    open_run = False
    for index, block in enumerate(blocks):
        if index in dropped:
            key = _key(block)
            if open_run and keys[-1] == key:
                groups[-1].append(index)
            else:
                groups.append([index])
                keys.append(key)
                open_run = True
        elif index in breakers:
            open_run = False
    return [_Run.over(blocks, group) for group in groups]


def _placeholders(runs: list[_Run], kept: set[int], room: int) -> dict[int, dict[str, Any]]:
    """One placeholder per run of dropped blocks alike, at the run's first block, within
    ``room`` characters of text in all (when the lines do not all fit, the later ones go).
    A kept block ends a run; blocks neither kept nor in ``dropped`` (text dropped whole)
    are passed over, and so is a run that gets no line: the lines on either side of them,
    for blocks alike, become one."""
    out: dict[int, dict[str, Any]] = {}
    order = sorted(kept)
    last: _Run | None = None  # what the last line stands for, while nothing kept follows it
    for run in runs:
        after = bisect.bisect_right(order, last.last) if last is not None else len(order)
        if last is not None and (after == len(order) or order[after] > run.first):
            if last.key == run.key:
                said = len(out[last.first]["text"])
                merged = last.join(run)
                line = merged.line(room + said)
                if line is not None:
                    room += said - len(line["text"])
                    out[last.first], last = line, merged
                continue  # (a line that does not fit: the run goes unsaid, not beside its like)
        else:
            last = None
        line = run.line(room)
        if line is not None:
            out[run.first] = line
            room -= len(line["text"])
            last = run
    return out


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
    notice, framing, budget = _framing(len(blocks), max_tokens, scale, full_output_path, fixed)

    def beside(extra: int) -> int:
        """The content budget beside ``extra`` characters of placeholder text (-1: none)."""
        return _content_budget(max_tokens, scale, framing + extra)

    # Room for the shortest lines saying what went, were every fixed-cost block dropped,
    # is kept from the fixed-cost blocks when the limit has it to spare.
    least = _least_room(blocks)
    if least and beside(least) >= 0:
        budget = beside(least)
    kept: list[dict[str, Any] | None] = [None] * len(blocks)
    gone: set[int] = set()  # dropped fixed-cost blocks (a placeholder may stand for them)
    spent = 0  # what the fixed-cost blocks kept take
    # Fixed-cost blocks first: images are what a screenshot tool was called for.
    for index, block in enumerate(blocks):
        kind = block.get("type")
        if _is_text(block):
            continue
        cost = _image_tokens(block) * CHARS_PER_TOKEN if kind == "image" else _block_chars(block, budget)[0]
        if spent + cost <= budget:
            kept[index] = dict(block)
            spent += cost
            continue
        smaller = image_hook(block, (budget - spent) // CHARS_PER_TOKEN) if kind == "image" and image_hook else None
        if smaller is not None and spent + _image_tokens(smaller) * CHARS_PER_TOKEN <= budget:
            kept[index] = dict(smaller)
            spent += _image_tokens(smaller) * CHARS_PER_TOKEN
        else:
            gone.add(index)
    budget, room, lines = _placeholder_room(blocks, kept, gone, spent, beside)
    dropped = len(gone)
    structured = wire.get("structuredContent")
    cap = _cap(max_tokens)
    text_total = min(
        cap, sum(_block_chars(b, budget)[0] for i, b in enumerate(blocks) if kept[i] is None and i not in gone)
    )
    structured_budget = 0
    if structured is not None:
        # Both sides saturate at the same cap: two giants split the budget evenly.
        s_chars = min(cap, bounded_size(structured, cap))
        structured_budget = max(3, budget * s_chars // max(1, s_chars + text_total))
        budget -= structured_budget
    for index, block in enumerate(blocks):
        if kept[index] is not None or index in gone:
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
    # The runs are settled now that the text is: a placeholder on either side of a text
    # block dropped whole is one run.
    kept_now = {i for i, b in enumerate(kept) if b is not None}
    if len(kept_now) + len(gone) < len(blocks):  # a text block went whole: the runs may join
        lines = _placeholders(_runs(blocks, gone, kept_now), kept_now, room)
    content = [lines[i] if i in lines else b for i, b in enumerate(kept) if i in lines or b is not None]
    if structured is not None:
        out["structuredContent"] = shrink_json(structured, max(3, structured_budget))[0]
    summary = f"{dropped} content block{'s' if dropped != 1 else ''}" if dropped else ""
    content.append({"type": "text", "text": notice(summary)})
    out["content"] = content
    return out


def _least_room(blocks: list[Mapping[str, Any]]) -> int:
    """Characters of the shortest placeholder lines, were every fixed-cost block dropped."""
    fixed_cost = {i for i, b in enumerate(blocks) if not _is_text(b)}
    lines = (run.line(0, shortest=True) for run in _runs(blocks, fixed_cost, set(range(len(blocks))) - fixed_cost))
    return sum(len(line["text"]) for line in lines if line is not None)


def _placeholder_room(
    blocks: list[Mapping[str, Any]],
    kept: list[dict[str, Any] | None],
    gone: set[int],
    spent: int,
    beside: Callable[[int], int],
) -> tuple[int, int, dict[int, dict[str, Any]]]:
    """(content budget left for the text, characters of placeholder text reserved, the
    lines by the block they stand at, were no text block to go whole).

    The placeholders are our own text, reserved like the notice (``beside(extra)`` is the
    content budget beside ``extra`` characters of it), before the text blocks are cut:
    they say what went.  They are reserved for runs split by every block not dropped yet,
    which is the most lines there can be, in the most room that fits beside the ``spent``
    characters of fixed-cost blocks kept (``_placeholders`` shortens the lines, or leaves
    the later ones out, to fit)."""
    # Every block not dropped yet may stay: the text blocks are not cut yet.
    kept_now = set(range(len(kept))) - gone
    runs = _runs(blocks, gone, kept_now)
    wanted = sum(len(line["text"]) for line in _placeholders(runs, kept_now, 1 << 62).values())
    low, high = 0, wanted  # the most room that fits: beside() only shrinks as the room grows
    while low < high:
        middle = (low + high + 1) // 2
        if beside(middle) >= spent:
            low = middle
        else:
            high = middle - 1
    lines = _placeholders(runs, kept_now, low)
    room = sum(len(line["text"]) for line in lines.values())
    return max(0, beside(room)) - spent, room, lines


def _framing(
    count: int, max_tokens: int, scale: float, full_output_path: str | None, fixed: int
) -> tuple[Callable[[str], str], int, int]:
    """(notice maker, characters of our own text, budget in characters left for content)
    for a result of ``count`` blocks; ``fixed`` characters are added whatever it is.

    The framing (the notice's worst case, with every block dropped) is reserved up
    front, so nothing can push the result over.  Near the smallest limits it would not
    fit: the notice's second sentence goes, then the path.  Placeholders for dropped
    blocks come later, from the content budget (``_placeholder_room``)."""
    worst_drop = f"{count} content blocks"
    forms = [(False, full_output_path), (True, full_output_path), (True, None)]
    for index, (brief, path) in enumerate(forms):
        framing = len(notice_text(max_tokens, full_output_path=path, dropped=worst_drop, brief=brief)) + fixed
        budget = _content_budget(max_tokens, scale, framing)
        if budget >= 0 or index == len(forms) - 1:
            return _notice_maker(max_tokens, path, brief), framing, max(0, budget)
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
