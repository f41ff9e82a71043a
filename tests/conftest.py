"""What every test under tests/ shares.

Imports: ``pyproject.toml``'s ``[tool.pytest.ini_options] pythonpath`` puts the repository root
(for ``fuzz``), ``tests`` (``fake_server``, ``peers``, ``helpers.*``) and ``tests/helpers`` on
``sys.path`` before collection, so no test module patches ``sys.path``.  ``tests/helpers`` is on
it because its scripts run as ``python tests/helpers/x.py`` and import their siblings by bare
name (``from jsonrpc_lines import ...``); a test importing ``helpers.x`` needs those names too.
Test modules keep unique basenames: pytest's default import mode imports each by basename.

Fixtures here are the ones several test modules used to define identically.
"""

from __future__ import annotations

from functools import partial

import pytest
import trio

from trimcp.reference import build_server
from trimcp.server import serve_http


@pytest.fixture
async def url(nursery: trio.Nursery) -> str:
    """The URL of the bundled reference server over Streamable HTTP on 127.0.0.1, for this test."""
    bound = await nursery.start(partial(serve_http, build_server(), "127.0.0.1", 0))
    return str(bound.url)
