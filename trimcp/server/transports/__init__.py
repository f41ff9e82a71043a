"""Serving a Server over HTTP and WebSocket."""
