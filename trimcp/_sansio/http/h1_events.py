"""The events both of trimcp's HTTP/1.1 codecs hand out (RFC 9112), shaped like h11's.

Theory of operation
-------------------
``next_event()`` of the client codec (``client/h1.py``) and of the server codec
(``server/h1.py``) returns the message head (``Response`` or ``Request``, each codec's
own), then the body as ``Data`` pieces, then ``END`` (the one ``EndOfMessage``), and
``NEED_DATA`` whenever it has to be fed more bytes.  ``CLOSED`` says the peer closed the
connection where no message was under way.  The sentinels are compared by identity;
``Data`` and ``EndOfMessage`` by type.  Plain ``__slots__`` classes: one is made per
body piece, on the hot path.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CLOSED", "END", "NEED_DATA", "Data", "EndOfMessage", "Sentinel"]


class Sentinel:
    """A named marker returned by ``next_event`` (compare with ``is``)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


#: ``next_event`` needs more bytes (the server codec: or the response and ``start_next_cycle``).
NEED_DATA: Final = Sentinel("NEED_DATA")
#: The peer closed the connection between messages (a message cut short is an error instead).
CLOSED: Final = Sentinel("CLOSED")


class Data:
    """A piece of a message body."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class EndOfMessage:
    """The body (and any trailer section) is complete."""

    __slots__ = ()


END: Final = EndOfMessage()
