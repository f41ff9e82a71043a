"""Streamable HTTP and HTTP+SSE without I/O: client plans and policy, response reading, server routing."""
