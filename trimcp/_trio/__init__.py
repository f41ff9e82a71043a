"""The Trio drivers of trimcp.

Every transport is a thin driver behind one seam, ``stream.MessageStream``
(``transports/``: stdio, WebSocket, Streamable HTTP and HTTP+SSE; ``memory.py``
in process); ``driver.py`` runs one sans-IO ``Connection`` over a stream;
``client/`` is the client built on it and ``oauth/`` its authorization.  The
protocol logic lives in the pure ``trimcp._sansio`` layer below, which never
imports trio; the layers above (``server``, ``conformance``, ``cli``) use trio
too, through these drivers.
"""
