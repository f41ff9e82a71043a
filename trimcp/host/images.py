"""Shrinking an image content block to a token budget with Pillow.

Theory of operation
-------------------
Spec "Server features / Tools", ``ImageContent`` (base64 ``data`` and ``mimeType``).
The pure core counts an image as min(1 600, ceil(len(data) / 4)) tokens and, when one
does not fit what is left of the budget, asks an ``image_hook(block, tokens_left)``
for a smaller block.  ``downscale_image`` is that hook: it decodes the image,
re-encodes it and halves its dimensions until the base64 text is at most
``4 * tokens_left`` characters.

Format: an image with transparency stays PNG (optimised, then palette-quantised,
then halved); anything else becomes JPEG (quality 85, then 60, then 40 at each size,
then halved), which is several times smaller than PNG for photographs and
screenshots alike and which every model API accepts.  Only the first frame of an
animation is kept.  A block it cannot decode, or that does not fit even at a few
pixels, gives ``None``: the core then puts its placeholder in the image's place.

Pillow is an optional extra (``trimcp[images]``) imported on the first call;
``pillow_hook()`` is ``None`` without it, so the placeholder stays.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import importlib.util
import io
import warnings
from collections.abc import Mapping
from typing import Any, Final

from .._sansio.host.truncation import CHARS_PER_TOKEN, ImageHook

__all__ = ["downscale_image", "pillow_available", "pillow_hook"]

JPEG_QUALITIES: Final = (85, 60, 40)
#: Smaller than this on the long side an image tells a model nothing: give up.
MIN_SIDE: Final = 8


def pillow_available() -> bool:
    return importlib.util.find_spec("PIL") is not None


def pillow_hook() -> ImageHook | None:
    """``downscale_image`` when Pillow is installed, else ``None``."""
    return downscale_image if pillow_available() else None


def _has_alpha(image: Any) -> bool:
    return bool(image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info))


def _encodings(image: Any, alpha: bool) -> list[tuple[bytes, str]]:
    """The candidate encodings of one size, largest (best) first."""
    out: list[tuple[bytes, str]] = []
    if alpha:
        rgba = image.convert("RGBA")
        for candidate in (rgba, rgba.quantize(colors=256)):
            buffer = io.BytesIO()
            candidate.save(buffer, format="PNG", optimize=True)
            out.append((buffer.getvalue(), "image/png"))
        return out
    rgb = image.convert("RGB")
    for quality in JPEG_QUALITIES:
        buffer = io.BytesIO()
        rgb.save(buffer, format="JPEG", quality=quality, optimize=True)
        out.append((buffer.getvalue(), "image/jpeg"))
    return out


def downscale_image(block: Mapping[str, Any], max_tokens: int) -> dict[str, Any] | None:
    """``block`` re-encoded (and halved as often as needed) to cost at most
    ``max_tokens``, as an image block of the same shape; ``None`` when it cannot be."""
    data = block.get("data")
    if not isinstance(data, str) or max_tokens <= 0:
        return None
    limit = max_tokens * CHARS_PER_TOKEN  # base64 characters
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    image_module: Any = importlib.import_module("PIL.Image")
    try:
        with warnings.catch_warnings():
            # A huge image is what we are here to shrink: not a reason to fail the call.
            warnings.simplefilter("ignore", image_module.DecompressionBombWarning)
            image = image_module.open(io.BytesIO(raw))
            image.load()
    except (OSError, ValueError, SyntaxError, image_module.DecompressionBombError):
        # not an image Pillow can read (or one of absurd size): the placeholder says what it was
        return None
    alpha = _has_alpha(image)
    # Bytes that base64 to at most ``limit`` characters.
    byte_limit = limit // 4 * 3
    while True:
        for encoded, mime in _encodings(image, alpha):
            if len(encoded) <= byte_limit:
                return {**block, "data": base64.b64encode(encoded).decode("ascii"), "mimeType": mime}
        width, height = image.size
        if max(width, height) // 2 < MIN_SIDE:
            return None
        image = image.resize((max(1, width // 2), max(1, height // 2)), image_module.Resampling.LANCZOS)
