"""The elicitation flow a host runs: hooks, one prompt at a time, result hooks, the reply.

Theory of operation
-------------------
Spec "Client features / Elicitation" (2025-06-18 form mode; 2025-11-25 adds URL
mode, ``notifications/elicitation/complete`` and error -32042; 2026-07-28 carries
the same request inside an ``InputRequiredResult``, basic/patterns/mrtr).

An ``Elicitation`` answers every ``elicitation/create`` of the servers it is given
to (``flow.handler`` for one ``open_client``; ``open_pool(elicitation=flow)`` for
each server of a pool, through ``for_server(name)`` so the UI is told who asks).
The same handler answers the stateless era's ``inputRequests`` (``_trio/client/
mrtr.py`` reuses the elicitation handler), so one flow serves both eras.

One request goes through:

1. ``hooks`` in order, each ``async (params, ctx) -> ElicitResult | None``; the
   first that answers wins (a programmatic answer: an IDE's, a test's).
2. Otherwise the ``ui`` (``async (params, ctx) -> ElicitResult``), under a
   ``trio.StrictFIFOLock`` shared by every server of the flow: one prompt at a
   time, in the order the requests reached the UI.  No ``ui``: decline.
3. Accepted form content goes through ``validate`` (``async (requested_schema,
   content) -> .content / .errors``; by default ``validate_form_async``: types
   coerced, defaults applied, natural-language dates read; ``None`` = none).  Invalid UI content asks
   the UI again with ``ctx.errors`` set, at most ``max_attempts`` times, then
   the answer is ``cancel``.  Invalid *hook* content is never sent: it is logged
   and the next hook, then the UI, is asked (with the errors in ``ctx``) -- a
   schema the hook did not expect should reach a person, not the server.
4. ``result_hooks`` in order, each ``async (params, ctx, result) -> ElicitResult |
   None`` (``None`` keeps it): the application's last word, not validated again.
5. The reply.

The server cancelling its request (``notifications/cancelled``) cancels the
handler's task (``_trio/serving.py`` runs each request in its own cancel scope),
so the prompt is cancelled wherever it waits; the stateless era's rounds run
under the client request's deadline the same way.  ``timeout`` bounds our answer
to one request, its wait for the UI's turn included: past it the answer is ``cancel``.

URL mode (only when ``url=True``; otherwise the request is refused with -32602 as
the 2025-11-25 page requires): hooks first, then the UI is asked for consent
(no UI: consent is the caller's, who turned URL mode on); on accept the flow
registers the ``elicitationId``, calls ``open_url(url)`` (default
``webbrowser.open`` in a worker thread) and replies accept.  ``wait_complete``
waits (bounded) for the server's ``notifications/elicitation/complete``;
completions of ids never registered are ignored, as the spec requires.  A
``tools/call`` refused with -32042 is handled by ``ClientSession.call_tool``
through ``UrlElicitation.required`` (each listed elicitation through this flow,
each completion awaited up to ``complete_timeout``; then one retry).
"""

from __future__ import annotations

import logging
import webbrowser
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import attrs
import trio

from .._errors import McpError
from .._sansio import jsonrpc as rpc
from .._sansio import schema as s
from .._trio.client.options import Handlers
from .form_dates import validate_form_async

__all__ = [
    "Elicitation",
    "ElicitationContext",
    "ElicitationHook",
    "ElicitationUI",
    "ResultHook",
    "ServerElicitation",
    "Validate",
]

logger = logging.getLogger("trimcp.host")

DEFAULT_COMPLETE_TIMEOUT = 300.0
#: Completions remembered per flow (ids registered and not yet awaited).
MAX_PENDING_URLS = 256


@attrs.frozen(kw_only=True)
class ElicitationContext:
    """What the flow tells a hook or the UI besides the request itself."""

    #: The server that asked (its pool name), or ``None`` for a lone ``open_client``.
    server: str | None
    #: Field -> message from validating the previous answer (empty the first time).
    errors: Mapping[str, str] = attrs.field(factory=dict)
    #: 1 for the first prompt, 2 when asked again, ...
    attempt: int = 1
    #: The content that failed validation, for a UI to refill its form.
    previous: Mapping[str, Any] | None = None


ElicitationHook = Callable[[s.ElicitRequestParams, ElicitationContext], Awaitable[s.ElicitResult | None]]
ElicitationUI = Callable[[s.ElicitRequestParams, ElicitationContext], Awaitable[s.ElicitResult]]
ResultHook = Callable[[s.ElicitRequestParams, ElicitationContext, s.ElicitResult], Awaitable[s.ElicitResult | None]]
OpenUrl = Callable[[str], Awaitable[object]]


class ValidationOutcome(Protocol):
    @property
    def content(self) -> Mapping[str, Any]: ...

    @property
    def errors(self) -> Mapping[str, str]: ...


Validate = Callable[[Mapping[str, Any], Mapping[str, Any]], Awaitable[ValidationOutcome]]


async def open_in_browser(url: str) -> bool:
    """The default ``open_url``: the system browser, from a worker thread (it may block)."""
    return await trio.to_thread.run_sync(webbrowser.open, url)


class Elicitation:
    """The elicitation flow; see the module docstring.

    ``hooks`` / ``ui`` / ``result_hooks`` / ``validate`` as described there;
    ``url``: accept URL mode (declared as ``{"form": {}, "url": {}}``);
    ``open_url``: how a URL is opened (default the system browser);
    ``timeout``: bound on answering one request, queue included (``None``: none); ``max_attempts``: prompts
    for one request while its content is invalid; ``complete_timeout``: how long
    the -32042 retry waits for each completion.
    """

    def __init__(
        self,
        *,
        hooks: Sequence[ElicitationHook] = (),
        ui: ElicitationUI | None = None,
        result_hooks: Sequence[ResultHook] = (),
        validate: Validate | None = validate_form_async,
        url: bool = False,
        open_url: OpenUrl = open_in_browser,
        timeout: float | None = None,
        max_attempts: int = 3,
        complete_timeout: float = DEFAULT_COMPLETE_TIMEOUT,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.hooks = list(hooks)
        self.ui = ui
        self.result_hooks = list(result_hooks)
        self.validate = validate
        self.url = url
        self.open_url = open_url
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.complete_timeout = complete_timeout
        #: One prompt at a time across every server of the flow, first come first served.
        self._ui_lock = trio.StrictFIFOLock()
        #: (server, elicitationId) -> set when the server says it completed.
        self._pending: dict[tuple[str | None, str], trio.Event] = {}
        self._default = ServerElicitation(self, None)

    @property
    def modes(self) -> tuple[str, ...]:
        """The ``elicitation_modes`` to declare."""
        return ("form", "url") if self.url else ("form",)

    @property
    def handler(self) -> Callable[[s.ElicitRequestParams], Awaitable[s.ElicitResult]]:
        """What ``open_client(handlers=Handlers(elicitation=...))`` takes (no server name)."""
        return self._default.handler

    def for_server(self, server: str | None) -> ServerElicitation:
        """The flow as one server's: its handler, and its URL-mode hooks for ``open_client``."""
        return ServerElicitation(self, server)

    def client_options(self, server: str | None = None) -> dict[str, Any]:
        """The ``open_client`` keywords that plug this flow into one session (its ``handlers``)."""
        return self.for_server(server).client_options()

    # ------------------------------------------------------------------ one request

    async def elicit(self, params: s.ElicitRequestParams, server: str | None = None) -> s.ElicitResult:
        """Run one request through the flow and return the answer to send."""
        if isinstance(params, s.ElicitRequestURLParams) and not self.url:
            # 2025-11-25 client/elicitation "Error Handling": an undeclared mode is -32602.
            raise McpError(rpc.INVALID_PARAMS, "this client did not declare URL-mode elicitation")
        ctx = ElicitationContext(server=server)
        if self.timeout is None:
            result = await self._answer(params, ctx)
        else:
            with trio.move_on_after(self.timeout) as scope:
                result = await self._answer(params, ctx)
            if scope.cancelled_caught:
                logger.info("elicitation from %s: no answer within %s s; cancelled", _who(server), self.timeout)
                return s.ElicitResult(action="cancel")
        for hook in self.result_hooks:
            changed = await hook(params, ctx, result)
            if changed is not None:
                result = changed
        if isinstance(params, s.ElicitRequestURLParams) and result.action == "accept":
            await self._open(params, server)
            result = s.ElicitResult(action="accept")  # URL mode carries no content
        return result

    async def _answer(self, params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        for hook in self.hooks:
            answer = await hook(params, ctx)
            if answer is None:
                continue
            checked, errors = await self._check(params, answer)
            if not errors:
                return checked
            logger.warning("elicitation hook %r answered invalid content (%s); asking on", hook, errors)
            ctx = attrs.evolve(ctx, errors=errors, previous=answer.content)
        if self.ui is None:
            return s.ElicitResult(action="decline" if not isinstance(params, s.ElicitRequestURLParams) else "accept")
        async with self._ui_lock:
            for attempt in range(1, self.max_attempts + 1):
                answer = await self.ui(params, attrs.evolve(ctx, attempt=attempt))
                checked, errors = await self._check(params, answer)
                if not errors:
                    return checked
                ctx = attrs.evolve(ctx, errors=errors, previous=answer.content)
        logger.info(
            "elicitation from %s: still invalid after %d prompts; cancelled", _who(ctx.server), self.max_attempts
        )
        return s.ElicitResult(action="cancel")

    async def _check(
        self, params: s.ElicitRequestParams, answer: s.ElicitResult
    ) -> tuple[s.ElicitResult, dict[str, str]]:
        """The answer with validated content, or the errors; only accepted forms are checked."""
        if answer.action != "accept" or not isinstance(params, s.ElicitRequestFormParams):
            return answer, {}
        content = answer.content or {}
        if self.validate is None:
            return s.ElicitResult(action="accept", content=dict(content)), {}
        outcome = await self.validate(params.requested_schema, content)
        if outcome.errors:
            return answer, dict(outcome.errors)
        return s.ElicitResult(action="accept", content=dict(outcome.content)), {}

    # ------------------------------------------------------------------ URL mode

    def _register(self, server: str | None, elicitation_id: str) -> None:
        if len(self._pending) >= MAX_PENDING_URLS:
            # The oldest registration goes: a server that never completes must not grow us.
            del self._pending[next(iter(self._pending))]
        self._pending.setdefault((server, elicitation_id), trio.Event())

    async def _open(self, params: s.ElicitRequestURLParams, server: str | None) -> None:
        if params.elicitation_id is not None:
            # Registered before the URL opens: the completion may beat our reply.
            self._register(server, params.elicitation_id)
        await self.open_url(params.url)

    def completed(self, elicitation_id: str, server: str | None = None) -> None:
        """The server sent ``notifications/elicitation/complete`` (unknown ids are ignored)."""
        event = self._pending.get((server, elicitation_id))
        if event is None:
            logger.debug("elicitation complete for unknown id %r from %s: ignored", elicitation_id, _who(server))
            return
        event.set()

    async def wait_complete(
        self, elicitation_id: str, *, server: str | None = None, timeout: float | None = None
    ) -> bool:
        """Wait for the completion of a URL elicitation this flow opened: True once the server
        said so, False after ``timeout`` (default ``complete_timeout``) or for an id never opened."""
        event = self._pending.get((server, elicitation_id))
        if event is None:
            return False
        with trio.move_on_after(self.complete_timeout if timeout is None else timeout):
            await event.wait()
        if event.is_set():
            self._pending.pop((server, elicitation_id), None)
            return True
        return False

    async def required(self, elicitations: Sequence[s.ElicitRequestURLParams], server: str | None = None) -> bool:
        """A -32042 refusal: elicit each URL, wait for each completion; whether to retry.

        A declined or cancelled elicitation means no retry.  A completion that does not
        come within ``complete_timeout`` still lets the call be retried: the notification
        is optional (the server MAY send it), and the server is the one who knows."""
        if not self.url:
            return False
        for params in elicitations:
            result = await self.elicit(params, server)
            if result.action != "accept":
                return False
            if params.elicitation_id is not None and not await self.wait_complete(params.elicitation_id, server=server):
                logger.info(
                    "no completion for elicitation %r from %s; retrying anyway", params.elicitation_id, _who(server)
                )
        return True


class ServerElicitation:
    """The flow as seen by one server's session (``UrlElicitation`` for ``open_client``)."""

    def __init__(self, flow: Elicitation, server: str | None) -> None:
        self.flow = flow
        self.server = server

    async def handler(self, params: s.ElicitRequestParams) -> s.ElicitResult:
        return await self.flow.elicit(params, self.server)

    def completed(self, elicitation_id: str) -> None:
        self.flow.completed(elicitation_id, self.server)

    async def required(self, elicitations: Sequence[s.ElicitRequestURLParams]) -> bool:
        return await self.flow.required(elicitations, self.server)

    def client_options(self) -> dict[str, Any]:
        url = self if self.flow.url else None
        return {"handlers": Handlers(elicitation=self.handler, elicitation_modes=self.flow.modes, url_elicitation=url)}


def _who(server: str | None) -> str:
    return "the server" if server is None else f"server {server!r}"
