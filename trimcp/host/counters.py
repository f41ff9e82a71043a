"""Token counters for fitting tool results into a model's context.

Theory of operation
-------------------
Spec "Server features / Tools" (``CallToolResult``).  Truncation (``truncate.py``)
has two phases: an O(n) estimate (``estimate``: four characters a token, the pure
core's rule) and, only for a result at least half the limit, one exact count.  An
exact counter is any callable ``counter(text) -> int`` or ``async counter(text) ->
int``; the ``TokenCounter`` protocol names the synchronous shape.

``local_counter()`` returns a counter backed by a tokenizer already on this machine,
or ``None``.  It never touches the network: ``tiktoken`` fetches its BPE tables on
first use of an encoding and keeps them in a cache directory (``TIKTOKEN_CACHE_DIR``,
else ``DATA_GYM_CACHE_DIR``, else ``<tmp>/data-gym-cache``, each file named by the
SHA-1 of its download address), so an encoding is used only when its file is
already in that cache.  (tiktoken checks a cached file against its known hash and
fetches a damaged one again; that is the one way this can reach the network, and
only after someone put a broken file in the cache.)  A counter from any other tokenizer (a Hugging Face
``tokenizers`` file, an API's count endpoint) is passed in by the caller instead:
only the caller knows which model's tokenizer matters.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final, Protocol

from .._sansio.host.truncation import CHARS_PER_TOKEN

__all__ = ["AnyCounter", "TokenCounter", "estimate", "local_counter"]

logger = logging.getLogger("trimcp.host")

#: Encodings tried in order: the newest OpenAI one first (closest to current models).
TIKTOKEN_ENCODINGS: Final = ("o200k_base", "cl100k_base")
_TIKTOKEN_BASE: Final = "https://openaipublic.blob.core.windows.net/encodings/"


class TokenCounter(Protocol):
    """How many tokens ``text`` is for the model the result goes to."""

    def __call__(self, text: str, /) -> int: ...


#: What ``truncate_result`` accepts: a synchronous or an asynchronous counter.
AnyCounter = Callable[[str], "int | Awaitable[int]"]


def estimate(text: str) -> int:
    """The pure core's phase-1 rule: ceil(characters / 4).  No tokenizer, no network."""
    return -(-len(text) // CHARS_PER_TOKEN)


def tiktoken_cache_dir() -> Path | None:
    """Where tiktoken keeps downloaded encodings, or ``None`` when its cache is off."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        raw = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        raw = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        raw = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(raw) if raw else None


def tiktoken_cache_file(encoding: str) -> Path | None:
    """The cache file tiktoken reads for ``encoding`` instead of downloading it."""
    cache = tiktoken_cache_dir()
    if cache is None:
        return None
    url = f"{_TIKTOKEN_BASE}{encoding}.tiktoken"
    return cache / hashlib.sha1(url.encode()).hexdigest()


def _tiktoken_counter() -> TokenCounter | None:
    if importlib.util.find_spec("tiktoken") is None:
        return None
    for name in TIKTOKEN_ENCODINGS:
        cached = tiktoken_cache_file(name)
        if cached is None or not cached.is_file():
            continue  # getting it would mean a download
        tiktoken: Any = importlib.import_module("tiktoken")
        try:
            encoding = tiktoken.get_encoding(name)
        except Exception:
            logger.warning("tiktoken could not load its cached %s encoding", name, exc_info=True)
            continue

        def count(text: str, /, _encoding: Any = encoding) -> int:
            # Special-token text in a tool's output is ordinary text to the model here.
            return len(_encoding.encode(text, disallowed_special=()))

        return count
    return None


def local_counter() -> TokenCounter | None:
    """An exact counter from a tokenizer installed and cached locally, else ``None``.

    Today that is ``tiktoken`` with ``o200k_base`` or ``cl100k_base`` when the encoding's
    file is already in tiktoken's cache (it is never downloaded from here).
    """
    return _tiktoken_counter()
