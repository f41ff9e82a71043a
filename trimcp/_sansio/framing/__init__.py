"""Byte framing without I/O: newline-delimited JSON (stdio) and Server-Sent Events."""

from __future__ import annotations

from typing import Generic, TypeVar

from ..._errors import RemoteProtocolError

__all__ = ["FramingOverflow"]

_T = TypeVar("_T")


class FramingOverflow(RemoteProtocolError, Generic[_T]):
    """A frame outgrew its decoder's cap; ``completed`` are the frames the same input
    finished before it, in order.

    Both decoders (``lines.LineDecoder``, ``sse.SSEDecoder``) raise it, so what came
    whole is never lost and what a stream yields does not depend on how its bytes were
    cut: deliver ``completed``, then treat the stream as failed.
    """

    def __init__(self, message: str, completed: list[_T]) -> None:
        super().__init__(message)
        self.completed = completed
