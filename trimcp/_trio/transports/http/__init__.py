"""The HTTP client transports: Streamable HTTP (both eras) and HTTP+SSE."""
