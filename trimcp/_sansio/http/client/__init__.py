"""Streamable HTTP and HTTP+SSE, client side, without I/O: request plans, response reading, the policy, the HTTP/1.1 codec."""
