"""Byte framing without I/O: newline-delimited JSON (stdio) and Server-Sent Events."""
