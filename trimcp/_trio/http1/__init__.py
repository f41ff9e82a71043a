"""trimcp's HTTP/1.1 over Trio: one connection class per role.

Theory of operation
-------------------
HTTP/1.1 message syntax is RFC 9112; each role keeps its codec and only moves
bytes over a Trio stream here:

* ``client.py``: ``H1ClientConnection``, the client side the keep-alive pool
  (``transports/http/pool.py``) runs on, with trimcp's own sans-IO codec
  (``_sansio/http/client/h1.py``, differential-tested against h11 in
  ``tests/sansio/test_h1_differential.py``).
* ``server.py``: ``H1ServerConnection`` and ``serve_connection``, the one server loop
  every HTTP server of trimcp uses, with trimcp's own sans-IO codec
  (``_sansio/http/server/h1.py``, differential-tested against h11 in
  ``tests/sansio/test_h1_server_differential.py``).

Both sit on ``_trio/tcp.py`` (the client's TCP/TLS opener, the fast stream).
The conformance harness's raw probes speak h11 as a client of their own
(``trimcp.conformance.h11_probe``), next to the code that uses them.
"""
