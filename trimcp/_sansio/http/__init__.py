"""Streamable HTTP and HTTP+SSE without I/O, a mirrored pair: ``client/`` and ``server/``, and what both read (``headers``)."""
