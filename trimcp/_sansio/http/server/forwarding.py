"""Which client messages of a session belong to another replica (sans-IO).

Theory of operation
-------------------
Spec 2025-11-25, basic/transports: a client POSTs its answers to the
server's requests (sampling, elicitation, roots) and its
``notifications/cancelled`` like any other message, to the one endpoint.
Behind a load balancer that is not sticky, the POST may reach a replica
other than the one waiting for that answer, or running that request.  Such a
message is not this replica's to handle (its Connection would count an answer
to a request it never sent as a peer mistake): it goes to the other replicas
over the store's bus, and the one waiting for it takes it.

``split`` sorts a POST's messages: an answer whose id this replica's
Connection awaits, a cancellation of a request in flight here, and every
other message stay; answers and cancellations that name nothing here go.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ... import jsonrpc as rpc

__all__ = ["split"]


def split(
    messages: Sequence[rpc.Message],
    *,
    awaiting: Callable[[rpc.RequestId], bool],
    in_flight: Callable[[rpc.RequestId], bool],
) -> tuple[list[rpc.Message], list[rpc.Message]]:
    """``(for this replica, for the others)``."""
    here: list[rpc.Message] = []
    elsewhere: list[rpc.Message] = []
    for message in messages:
        if isinstance(message, (rpc.Response, rpc.ErrorResponse)) and message.id is not None:
            (here if awaiting(message.id) else elsewhere).append(message)
        elif isinstance(message, rpc.Notification) and message.method == "notifications/cancelled":
            rid = (message.params or {}).get("requestId")
            ours = isinstance(rid, (int, str)) and rpc.is_valid_id(rid) and in_flight(rid)
            (here if ours else elsewhere).append(message)
        else:
            here.append(message)
    return here, elsewhere
