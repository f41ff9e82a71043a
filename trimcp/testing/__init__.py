"""Test helpers for code built on trimcp: connect in-process, fake a peer, check a transport.

* ``connect(server, **client_options)`` connects a client to a ``trimcp.server.Server``
  in the same Trio run, with no sockets and no subprocess, and yields the same
  ``ClientSession`` that ``trimcp.open_client`` yields; ``serve_in_process(server)``
  yields the client's end of the stream instead, for a test that speaks raw
  JSON-RPC or wraps the stream.
* ``ScriptedStream`` is a ``MessageStream`` whose far end is the test: it records
  what the session sends and replays the answers, lost requests and lost streams
  the test scripts, in virtual time.
* ``check_two_way_message_stream`` and ``check_request_stream`` check a transport's
  streams against the ``MessageStream`` contract (what ``trimcp._trio.stream``
  promises), as ``trio.testing.check_two_way_stream`` checks a ``trio.abc.Stream``;
  ``contract_server()`` is the server the second talks to.
* ``ScriptedModel(provider, script)`` is a model for ``trimcp.host.agent_turn`` that replays
  tool calls (``call(name, **arguments)``) and final answers turn by turn, in the
  provider's shape, and fails the test (``ScriptError``) where the real API would refuse:
  a tool list outside the provider's documented subset, a call to a tool
  not offered or with arguments its schema refuses, a turn whose results are missing.

Example (``tests/transports/test_testing.py`` runs it)::

    import trio
    from trimcp.server import Context, Server
    from trimcp.testing import connect

    server = Server("demo", version="1")

    @server.tool()
    async def add(ctx: Context, a: int, b: int) -> str:
        return str(a + b)

    async def main() -> str:
        async with connect(server) as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
            return result.content[0].text

    assert trio.run(main) == "5"

The names in ``__all__`` are this package's contract.
"""

from __future__ import annotations

from ._contract import CALLER_EXCHANGE as CALLER_EXCHANGE
from ._contract import OVERSIZE as OVERSIZE
from ._contract import PAIR_RULES as PAIR_RULES
from ._contract import PEER_GONE as PEER_GONE
from ._contract import REQUEST_RULES as REQUEST_RULES
from ._contract import RuleResult as RuleResult
from ._contract import check_request_stream as check_request_stream
from ._contract import check_two_way_message_stream as check_two_way_message_stream
from ._contract import contract_server as contract_server
from ._inprocess import connect as connect
from ._inprocess import serve_in_process as serve_in_process
from ._scripted import ScriptedStream as ScriptedStream
from ._scripted_model import ScriptedCall as ScriptedCall
from ._scripted_model import ScriptedModel as ScriptedModel
from ._scripted_model import ScriptError as ScriptError
from ._scripted_model import call as call

__all__ = [
    "CALLER_EXCHANGE",
    "OVERSIZE",
    "PAIR_RULES",
    "PEER_GONE",
    "REQUEST_RULES",
    "RuleResult",
    "ScriptError",
    "ScriptedCall",
    "ScriptedModel",
    "ScriptedStream",
    "call",
    "check_request_stream",
    "check_two_way_message_stream",
    "connect",
    "contract_server",
    "serve_in_process",
]
