"""The ``Context`` every tool, resource, prompt and completion handler receives.

Theory of operation
-------------------
A handler runs as its own Trio task inside the session's ``SessionDriver``,
in a cancel scope that ``notifications/cancelled`` (or the client going away)
cancels: cancellation arrives as ``trio.Cancelled`` raised at the handler's
next checkpoint, and needs no API of its own.

Through the context a handler talks back to the client while it works:

* ``log`` sends ``notifications/message`` (spec: Utilities / Logging),
  filtered by the level the client set with ``logging/setLevel``;
* ``report_progress`` sends ``notifications/progress`` when the request
  carried a ``progressToken`` (and is a no-op otherwise); values must grow;
* ``sample``, ``elicit`` and ``list_roots`` send the server-to-client requests
  ``sampling/createMessage``, ``elicitation/create`` and ``roots/list`` and
  wait for the answer.  The client must have advertised the matching
  capability (and its revision must have the method: elicitation exists from
  2025-06-18); otherwise ``ClientCapabilityError`` is raised *before*
  anything is sent.  A refusal by the client arrives as ``McpError``.

Results of server-to-client requests are returned as plain wire dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._sansio import jsonrpc as rpc
from .._sansio.revisions import get_revision, has_capability, peer_gate
from .._trio.session import USE_DEFAULT, RequestContext, UseDefault
from ._errors import ClientCapabilityError

if TYPE_CHECKING:
    from .app import Server
    from .session import ServerSession

Timeout = float | None | UseDefault
SamplingMessages = str | Sequence[str | Mapping[str, Any]]


def _sampling_messages(messages: SamplingMessages) -> list[dict[str, Any]]:
    items: Sequence[str | Mapping[str, Any]] = [messages] if isinstance(messages, str) else messages
    return [
        {"role": "user", "content": {"type": "text", "text": m}} if isinstance(m, str) else dict(m)
        for m in items
    ]


class Context:
    """What a handler knows about its request and can do with the client."""

    def __init__(self, session: ServerSession, request: RequestContext) -> None:
        self.session = session
        self.request = request

    @property
    def server(self) -> Server:
        return self.session.server

    @property
    def request_id(self) -> rpc.RequestId:
        return self.request.request_id

    @property
    def method(self) -> str:
        return self.request.method

    @property
    def params(self) -> dict[str, Any]:
        return self.request.params

    @property
    def progress_token(self) -> str | int | None:
        return self.request.progress_token

    @property
    def protocol_version(self) -> str:
        return self.session.protocol_version

    @property
    def client_info(self) -> dict[str, Any]:
        return self.session.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.session.client_capabilities

    # ------------------------------------------------------------ notifications

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Log to the client at an RFC 5424 ``level`` (``debug`` .. ``emergency``)."""
        await self.session.log(level, data, logger)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        await self.request.report_progress(progress, total, message)

    # ------------------------------------------------------------ server -> client requests

    def _check_client_can(self, method: str, what: str) -> None:
        revision = get_revision(self.protocol_version)
        if method not in revision.server_requests:
            raise ClientCapabilityError(
                f"{what}: protocol revision {revision.name} has no {method!r}"
            )
        gate = peer_gate(method, revision)
        if gate is not None and not has_capability(self.client_capabilities, gate):
            raise ClientCapabilityError(
                f"{what}: the client did not advertise the {'.'.join(gate)!r} capability "
                f"needed for {method!r}"
            )

    async def _ask(self, method: str, params: dict[str, Any] | None, timeout: Timeout, what: str) -> dict[str, Any]:
        self._check_client_can(method, what)
        return await self.session.driver.request(method, params, timeout=timeout)

    async def sample(
        self,
        messages: SamplingMessages,
        max_tokens: int,
        *,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: Mapping[str, Any] | None = None,
        include_context: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: Timeout = None,
    ) -> dict[str, Any]:
        """Ask the client's LLM for a message (``sampling/createMessage``).

        ``messages`` is a string (one user text message) or a list of strings
        and ``SamplingMessage`` dicts.  Returns the ``CreateMessageResult`` dict.
        ``timeout=None`` (the default) waits as long as the user takes.
        """
        params: dict[str, Any] = {"messages": _sampling_messages(messages), "maxTokens": max_tokens}
        optional = {
            "systemPrompt": system_prompt, "temperature": temperature,
            "stopSequences": list(stop_sequences) if stop_sequences is not None else None,
            "modelPreferences": dict(model_preferences) if model_preferences is not None else None,
            "includeContext": include_context,
            "metadata": dict(metadata) if metadata is not None else None,
        }
        params.update({k: v for k, v in optional.items() if v is not None})
        return await self._ask("sampling/createMessage", params, timeout, "ctx.sample()")

    async def elicit(
        self, message: str, requested_schema: Mapping[str, Any], *, timeout: Timeout = None
    ) -> dict[str, Any]:
        """Ask the user for structured input through the client (form mode).

        Returns the ``ElicitResult`` dict: ``action`` is ``accept``, ``decline``
        or ``cancel``; ``content`` holds the answers when accepted.
        """
        params = {"message": message, "requestedSchema": dict(requested_schema)}
        return await self._ask("elicitation/create", params, timeout, "ctx.elicit()")

    async def list_roots(self, *, timeout: Timeout = USE_DEFAULT) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``): dicts with ``uri`` and maybe ``name``."""
        result = await self._ask("roots/list", None, timeout, "ctx.list_roots()")
        roots = result.get("roots")
        return [r for r in roots if isinstance(r, dict)] if isinstance(roots, list) else []
