"""The Trio drivers of trimcp.

Every transport is a thin driver behind one seam, ``stream.MessageStream``
(``transports/``: stdio, WebSocket, Streamable HTTP and HTTP+SSE; ``memory.py``
in process), opened by kind through ``transports/registry.py``; ``driver.py`` runs one sans-IO ``Connection`` over a stream, with
the user's callbacks in their own task (``callbacks.py``) and the peer's
requests under a limit (``serving.py``, ``request_slots.py``);
``http1/`` holds the one HTTP/1.1 server loop (on trimcp's codec) and the one client
connection (on trimcp's own codec), over ``tcp.py``; ``client/`` is the client built on it and
``oauth/`` its authorization.  The
protocol logic lives in the pure ``trimcp._sansio`` layer below, which never
imports trio; the layers above (``server``, ``conformance``, ``cli``) use trio
too, through these drivers.
"""
