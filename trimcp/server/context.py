"""The ``Context`` every tool, resource, prompt and completion handler receives.

Theory of operation
-------------------
A handler runs as its own Trio task inside the session's ``SessionDriver``,
in a cancel scope that ``notifications/cancelled`` (or the client going away)
cancels: cancellation arrives as ``trio.Cancelled`` raised at the handler's
next checkpoint, and needs no API of its own.

What the context knows about the request depends on the era.  In the
handshake era the protocol version, client identity and capabilities are
the session's, fixed by ``initialize``.  In the 2026-07-28 stateless era
they come from the request's own ``_meta`` envelope (``ctx.envelope``) and
may differ from one request to the next on the same connection (spec:
basic/index, Statelessness); everything revision-specific (trimming,
error codes) follows ``ctx.protocol_version``.

Through the context a handler talks back to the client while it works:

* ``log`` sends ``notifications/message`` (spec: Utilities / Logging),
  filtered by the level the client set with ``logging/setLevel`` or, in
  the stateless era, by the request's ``logLevel``; a stateless request
  without one gets no log messages at all;
* ``report_progress`` sends ``notifications/progress`` when the request
  carried a ``progressToken`` (and is a no-op otherwise); values must grow;
* ``elicit``, ``sample``, ``list_roots``, ``ask`` and ``ask_all`` ask the
  client (see ``inputs.py``): real server-to-client requests in the
  handshake era, multi-round-trip ``InputRequiredResult`` answers in the
  stateless era, with the same return values either way.  In the handshake
  era a missing capability (or a revision without the method: elicitation
  exists from 2025-06-18) raises ``ClientCapabilityError`` before anything
  is sent and a refusal by the client arrives as ``McpError``; in the
  stateless era a missing capability answers the request with -32021.

Results of questions to the client are returned as plain wire dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import trio

from .._errors import LocalProtocolError
from .._sansio import jsonrpc as rpc
from .._sansio.connection.stateless import Envelope
from .._sansio.revisions import get_revision, has_capability, peer_gate
from .._trio.driver import USE_DEFAULT, RequestContext, UseDefault
from . import inputs
from ._errors import ClientCapabilityError
from .definition import Server
from .inputs import InputLedger, InputRequest, SamplingMessages
from .server_session import ServerSession
from .task_runner import TaskHandle

Timeout = float | None | UseDefault


class Context:
    """What a handler knows about its request and can do with the client."""

    def __init__(self, session: ServerSession, request: RequestContext, ledger: InputLedger | None = None) -> None:
        self.session = session
        self.request = request
        self._ledger = ledger
        #: ext-tasks: set while this call may run as a task (``trimcp.server.task_runner``).
        self._task: TaskHandle | None = None

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
    def envelope(self) -> Envelope | None:
        """Stateless era: the request's ``_meta`` envelope (None in the handshake era)."""
        return self.request.envelope

    @property
    def is_stateless(self) -> bool:
        return self.request.envelope is not None

    @property
    def protocol_version(self) -> str:
        envelope = self.request.envelope
        return envelope.protocol_version if envelope is not None else self.session.protocol_version

    @property
    def client_info(self) -> dict[str, Any]:
        envelope = self.request.envelope
        if envelope is not None:
            return envelope.client_info or {}
        return self.session.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        envelope = self.request.envelope
        return envelope.client_capabilities if envelope is not None else self.session.client_capabilities

    @property
    def resumed(self) -> bool:
        """Stateless era: the request carried a ``requestState`` this server issued and verified."""
        return self._ledger is not None and self._ledger.resumed

    @property
    def is_retry(self) -> bool:
        """Stateless era: the request carried ``inputResponses`` or ``requestState``."""
        return self._ledger is not None and self._ledger.is_retry

    def client_supports(self, *path: str) -> bool:
        """Whether the client declared capability ``path`` (e.g. ``"elicitation"``, ``"sampling", "tools"``)."""
        return has_capability(self.client_capabilities, path)

    def can_ask(self, method: str) -> bool:
        """Whether the client can be asked ``method`` (``elicitation/create``,
        ``sampling/createMessage``, ``roots/list``) in this request: its revision
        has the method and the client declared the capability."""
        revision = get_revision(self.protocol_version)
        gate = peer_gate(method, revision)
        return method in revision.server_requests and (gate is None or self.client_supports(*gate))

    # ------------------------------------------------------------ notifications

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Log to the client at an RFC 5424 ``level`` (``debug`` .. ``emergency``)."""
        await self.session.log(level, data, logger, request_id=self.request_id, envelope=self.envelope)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the client how far this request is: a ``notifications/progress`` when it asked
        for them (a ``progressToken``; otherwise nothing is sent).  Once the call runs as a task
        (ext-tasks) its request has been answered, so the task's ``statusMessage`` says it
        instead (``"3/10: copying"``)."""
        if self._task is not None and self._task.started:
            await self._task.report_progress(progress, total, message)
            return
        await self.request.report_progress(progress, total, message)

    # ------------------------------------------------------------ questions to the client

    def _check_client_can(self, method: str, what: str) -> None:
        revision = get_revision(self.protocol_version)
        if method not in revision.server_requests:
            raise ClientCapabilityError(f"{what}: protocol revision {revision.name} has no {method!r}")
        gate = peer_gate(method, revision)
        if gate is not None and not has_capability(self.client_capabilities, gate):
            raise ClientCapabilityError(
                f"{what}: the client did not advertise the {'.'.join(gate)!r} capability needed for {method!r}"
            )

    async def ask_all(
        self, requests: Mapping[str, InputRequest], *, timeout: Timeout = None
    ) -> dict[str, dict[str, Any]]:
        """Ask several questions at once; their answers, by key.

        Stateless era: every unanswered question goes into one
        ``InputRequiredResult``.  Handshake era: the requests are sent one
        after the other (``timeout`` bounds each) and the keys are only labels.
        """
        if not self.is_stateless:
            answers: dict[str, dict[str, Any]] = {}
            for key, request in requests.items():
                self._check_client_can(request.method, f"asking the client ({key})")
                answers[key] = await self.session.driver.request(
                    request.method,
                    request.params or None,
                    timeout=timeout,
                    related_request=self.request_id,
                )
            return answers
        ledger = self._ledger
        if ledger is None:
            raise LocalProtocolError(f"a {self.method} request can't ask the client for input (spec: mrtr)")
        refused = inputs.missing_capability_error(list(requests.values()), self.client_capabilities)
        if self._task is not None and self._task.started:
            if refused is not None:
                raise refused
            # A task asks through its inputRequests and waits for tasks/update (ext-tasks).
            return await self._task.ask({k: r.to_wire() for k, r in requests.items()})
        if refused is not None:
            raise inputs._Suspend(refused)
        found: dict[str, dict[str, Any]] = {}
        missing: dict[str, InputRequest] = {}
        for key, request in requests.items():
            answer = ledger.answer(key, request)
            if answer is None:
                missing[key] = request
            else:
                found[key] = answer
        if missing:
            raise ledger.suspend(missing)
        return found

    @property
    def task_id(self) -> str | None:
        """ext-tasks: the id of the task this call runs as, once it is one."""
        return self._task.task_id if self._task is not None else None

    def attach_task(self, handle: TaskHandle) -> None:
        """(framework) This call may run as the task behind ``handle``."""
        self._task = handle

    async def start_task(self) -> None:
        """ext-tasks, a tool declared ``task_start="explicit"``: become a task now (the
        client gets its ``CreateTaskResult``; the tool runs on).  A no-op when the call
        can't be a task (the client did not declare the extension, or the handshake era)."""
        if self._task is not None:
            self._task.start()
            await trio.lowlevel.checkpoint()

    async def ask(self, request: InputRequest, *, key: str | None = None, timeout: Timeout = None) -> dict[str, Any]:
        """Ask one question (see ``trimcp.server.inputs``); its answer.

        ``key`` names it in a stateless-era ``inputRequests`` map; by default
        ``<kind>-<n>`` in call order.
        """
        if key is None:
            key = self._ledger.next_key(request) if self._ledger is not None else request.method
        answers = await self.ask_all({key: request}, timeout=timeout)
        return answers[key]

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
        key: str | None = None,
        timeout: Timeout = None,
    ) -> dict[str, Any]:
        """Ask the client's LLM for a message (``sampling/createMessage``).

        ``messages`` is a string (one user text message) or a list of strings
        and ``SamplingMessage`` dicts.  Returns the ``CreateMessageResult`` dict.
        ``timeout=None`` (the default) waits as long as the user takes.
        """
        request = inputs.sampling(
            messages,
            max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
            stop_sequences=stop_sequences,
            model_preferences=model_preferences,
            include_context=include_context,
            metadata=metadata,
        )
        return await self.ask(request, key=key, timeout=timeout)

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any],
        *,
        key: str | None = None,
        timeout: Timeout = None,
    ) -> dict[str, Any]:
        """Ask the user for structured input through the client (form mode).

        Returns the ``ElicitResult`` dict: ``action`` is ``accept``, ``decline``
        or ``cancel``; ``content`` holds the answers when accepted.
        """
        return await self.ask(inputs.elicitation(message, requested_schema), key=key, timeout=timeout)

    async def list_roots(self, *, key: str | None = None, timeout: Timeout = USE_DEFAULT) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``): dicts with ``uri`` and maybe ``name``."""
        result = await self.ask(inputs.roots(), key=key, timeout=timeout)
        roots = result.get("roots")
        return [r for r in roots if isinstance(r, dict)] if isinstance(roots, list) else []
