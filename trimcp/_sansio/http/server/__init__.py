"""Streamable HTTP and HTTP+SSE, server side, without I/O: routing and checks, request metadata, replay buffers, the policy."""
