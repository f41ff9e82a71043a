"""The MCP connection state machine: one Connection, both roles, both eras.

``core`` (the Connection) is composed of ``state`` (what the parts share),
``negotiation`` (initialize / server/discover), ``requests`` (the pending and
incoming tables) and ``admission`` (who may send and accept what, when); the
lifecycle table is ``lifecycle``, the stateless-era envelope and result rules
``stateless``.
"""
