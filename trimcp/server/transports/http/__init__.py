"""Serving a Server over Streamable HTTP (both eras) and HTTP+SSE."""
