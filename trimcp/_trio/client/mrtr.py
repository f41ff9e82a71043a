"""Client side of multi-round-trip requests (2026-07-28, spec: basic/patterns/mrtr).

Theory of operation
-------------------
In the stateless era a server does not send the client requests: it answers
``tools/call``, ``prompts/get`` or ``resources/read`` with an
``InputRequiredResult`` whose ``inputRequests`` map server-chosen keys to
elicitation, sampling or roots requests.  ``answer_input_requests`` serves each
one with the same ``SessionDriver.request_handlers`` that answer those methods
in the handshake era, so an application writes its handlers once for both
eras; the handler sees a ``RequestContext`` whose ``request_id`` is the
``inputRequests`` key.  The answers form the ``inputResponses`` map of the
retry, which ``SessionDriver.request`` sends: ``open_client`` gives the driver
this function as its ``answer_input`` (the driver does not import the client).

The requests are answered one after another, in the order the server listed
them (an elicitation is a question to a person: asking two at once would be
confusing).  ``InputResponses`` has no slot for an error, so a request the
client cannot answer - no handler, params that do not fit the schema, a handler
refusing with ``McpError`` - fails the whole request with
``RemoteProtocolError`` naming the key and the method.  The Connection has
already refused requests for capabilities the client never declared.
"""

from __future__ import annotations

from typing import Any

from ..._errors import McpError, RemoteProtocolError
from ..._sansio import events as ev
from ..driver import RequestContext, SessionDriver


async def answer_input_requests(driver: SessionDriver, event: ev.InputRequired) -> dict[str, Any]:
    """The ``inputResponses`` for one InputRequiredResult: ``{key: result}``."""
    responses: dict[str, Any] = {}
    for key, request in event.input_requests.items():
        method = request["method"]
        params = request.get("params") or {}
        handler = driver.request_handlers.get(method)
        if handler is None:
            raise RemoteProtocolError(
                f"{event.method}: the server asked for {method} (inputRequests[{key!r}]), "
                "which this client has no handler for"
            )
        try:
            responses[key] = await handler(RequestContext(driver, key, method, params))
        except McpError as exc:
            raise RemoteProtocolError(
                f"{event.method}: could not answer inputRequests[{key!r}] ({method}): {exc.message}"
            ) from exc
    return responses
