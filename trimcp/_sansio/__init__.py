"""The pure protocol core of trimcp: no I/O, no clocks, no randomness.

Everything here is deterministic and driven by its caller: bytes and parsed
messages go in, events and messages to send come out.  The Trio layer
(``trimcp._trio``) moves the bytes.
"""
