"""The reference server on stdio, restricted to some protocol revisions.

Usage: python pinned_reference.py all | REVISION [REVISION ...]

``python -m trimcp.reference`` always speaks every revision; the
interoperability matrix (tests/client/test_interop_matrix.py) needs one pinned to a
single revision, so this builds the same server with ``supported_versions``
narrowed and serves it on stdin/stdout.
"""

from __future__ import annotations

import sys

import trio

from trimcp.reference.server import build_server
from trimcp.server import serve_stdio


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit(__doc__)
    server = build_server()
    if argv != ["all"]:
        server.supported_versions = tuple(argv)
    trio.run(serve_stdio, server)


if __name__ == "__main__":
    main(sys.argv[1:])
