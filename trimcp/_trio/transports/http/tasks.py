"""The long-lived parts of the HTTP client transport: GET streams, resumption,
re-initialization and the 2024-11-05 fallback (a mixin of ``HttpClientStream``).

Theory of operation
-------------------
An ``Exchange`` is one message in flight: its current POST plan (the wire id
changes when a 2026-07-28 request is re-issued; ``session_id`` stays the id the
session knows), the event set once its answer reached the session, and the
cancel scope that closes its stream.

* **Standalone GET stream** (handshake era, spec 2025-11-25 "Listening for
  Messages from the Server"): opened once ``notifications/initialized`` was
  accepted, with no deadline.  405 means the server offers none and is not an
  error.  When the server ends the stream the client reconnects, sending
  ``Last-Event-ID`` when it has one, after the server's ``retry`` time
  (``ReconnectPolicy``): a server may use this to "poll".  Attempts that bring
  nothing new count as failures, with growing waits, and end the stream after
  ``max_failures`` in a row.
* **Resuming a request's stream** ("Resumability and Redelivery"): a POST's
  event stream that ends before the answer, after the server gave an event id,
  is resumed by GET with ``Last-Event-ID`` (after ``retry``), as often as it
  keeps making progress and within the request's deadline.
* **Re-initialization** ("Session Management"): after a 404 on the session the
  client's own ``initialize`` is repeated under a private id (its answer is
  kept from the session, which already has one), the new session id and
  revision are adopted, ``notifications/initialized`` follows, and the
  standalone stream is reopened.  One re-initialization serves every request
  that hit the same dead session (``generation`` tells them apart).
* **2024-11-05 fallback** ("Backwards Compatibility"): GET the URL and wait
  (bounded) for the ``endpoint`` event; from then on that GET stream carries
  every server message, and its end ends the transport.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import attrs
import trio

from ...._errors import TransportError
from ...._sansio.http import response as hr
from ...._sansio import jsonrpc as rpc
from ...._sansio.http.plan import HttpPlanner, MessageKind, Mode, PostPlan, ReconnectPolicy
from ...._sansio.connection.stateless import SUBSCRIPTION_ID_KEY
from .executor import Executor

#: How long the 2024-11-05 fallback waits for the ``endpoint`` event.
LEGACY_ENDPOINT_TIMEOUT: Final = 10.0

_reinit_ids = itertools.count(1)


@attrs.define(eq=False)
class Exchange:
    """One message on its way: its POST, and the answer it waits for."""

    message: rpc.Message
    body: bytes
    plan: PostPlan
    #: The id the session knows (the wire id changes when a request is re-issued).
    session_id: rpc.RequestId | None
    answered: trio.Event = attrs.field(factory=trio.Event)
    scope: trio.CancelScope | None = None
    cancelled: bool = False
    reissues: int = 0
    reinitialized: bool = False
    auth_retried: bool = False
    #: Authorization rounds (OAuth) this exchange has triggered.
    auth_attempts: int = 0

    @property
    def wire_id(self) -> rpc.RequestId | None:
        return self.plan.wire_id

    @property
    def method(self) -> str | None:
        return self.plan.method

    @property
    def expects_answer(self) -> bool:
        return self.plan.kind is MessageKind.REQUEST


def rename_subscription(obj: Any, ex: Exchange, data: bytes) -> bytes:
    """A notification on a re-issued listen stream names the wire id: rename it back."""
    params = obj.get("params") if isinstance(obj, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and meta.get(SUBSCRIPTION_ID_KEY) == ex.wire_id:
        meta = {**meta, SUBSCRIPTION_ID_KEY: ex.session_id}
        return rpc.dumps({**obj, "params": {**params, "_meta": meta}})  # type: ignore[dict-item]
    return data


@attrs.define
class PumpResult:
    terminal: hr.HttpEvent | None = None
    elsewhere: bool = False
    accepted: bool = False
    messages: int = 0


def _describe(event: object) -> str:
    detail = getattr(event, "detail", None)
    if isinstance(detail, str):
        return detail
    return "the stream ended" if event is None or isinstance(event, hr.StreamEnded) else repr(event)


class StreamTasks:
    # Provided by HttpClientStream.
    planner: HttpPlanner
    executor: Executor
    reconnect: ReconnectPolicy
    standalone_stream: bool
    max_message_size: int
    post_timeout: float | None
    legacy_endpoint_timeout: float = LEGACY_ENDPOINT_TIMEOUT
    _nursery: trio.Nursery
    _closing: bool
    _standalone_scope: trio.CancelScope | None
    _reinit_lock: trio.Lock
    _legacy_lock: trio.Lock
    _session_ready: trio.Event
    _private: dict[rpc.RequestId, list[Any]]

    if TYPE_CHECKING:
        def _issue(self, detail: str, level: int = ...) -> None: ...
        def _die(self, reason: str) -> None: ...
        async def fail_request(self, ex: Exchange, detail: str) -> None: ...
        async def refresh_headers(self) -> None: ...
        def reader_for(self, plan: PostPlan) -> hr.ResponseReader: ...
        async def pump(
            self, reader: hr.ResponseReader, response: Any, *, linger: bool = False,
            on_endpoint: Callable[[str], None] | None = None, level: int = ...,
        ) -> PumpResult: ...

    # ------------------------------------------------------------------ standalone GET

    def start_standalone(self) -> None:
        """(Re)open the standalone GET stream in the background."""
        if not self.standalone_stream or self._closing:
            return
        if self._standalone_scope is not None:
            self._standalone_scope.cancel()
        scope = self._standalone_scope = trio.CancelScope()
        self._nursery.start_soon(self._standalone_task, scope)

    async def _standalone_task(self, scope: trio.CancelScope) -> None:
        last_id: str | None = None
        retry: int | None = None
        failures = 0
        with scope:
            while True:
                request = self.planner.plan_get(last_id)
                try:
                    response = await self.executor.open(request)
                except TransportError as exc:
                    failures += 1
                    if failures >= self.reconnect.max_failures:
                        self._issue(f"gave up the standalone GET stream: {exc}")
                        return
                    await trio.sleep(self.reconnect.delay(failures, retry))
                    continue
                reader = hr.ResponseReader(
                    hr.Purpose.STANDALONE, sent_session=self.planner.session_id is not None,
                    last_event_id=last_id, retry_ms=retry,
                    max_message_size=self.max_message_size, url=request.url,
                )
                try:
                    result = await self.pump(reader, response)
                finally:
                    await response.aclose()
                term = result.terminal
                if isinstance(term, hr.StreamRefused) and term.status == 405:
                    return  # the server offers no standalone stream: fine
                if isinstance(term, (hr.SessionExpired, hr.StreamFailed, hr.StreamRefused)):
                    self._issue(f"the standalone GET stream stopped: {_describe(term)}")
                    return
                progress = (
                    result.messages > 0 or reader.last_event_id != last_id
                    or (reader.retry_ms is not None and reader.retry_ms != retry)
                )
                failures = 0 if progress else failures + 1
                if failures >= self.reconnect.max_failures:
                    self._issue("gave up the standalone GET stream: it keeps ending with nothing new")
                    return
                last_id = reader.last_event_id or last_id
                retry = reader.retry_ms
                await trio.sleep(self.reconnect.delay(failures, retry))

    # ------------------------------------------------------------------ resumption

    async def resume(self, ex: Exchange, broken: hr.StreamBroken) -> None:
        """Resume a request's broken event stream with GET + ``Last-Event-ID``."""
        last_id, retry = broken.last_event_id, broken.retry_ms
        failures = 0
        while not ex.answered.is_set():
            await trio.sleep(self.reconnect.delay(failures, retry))
            request = self.planner.plan_get(last_id)
            try:
                response = await self.executor.open(request)
            except TransportError as exc:
                failures += 1
                if failures >= self.reconnect.max_failures:
                    await self.fail_request(ex, f"{broken.detail}; resuming it failed: {exc}")
                    return
                continue
            reader = hr.ResponseReader(
                hr.Purpose.RESUME, answer_id=ex.wire_id, expects_answer=True,
                sent_session=self.planner.session_id is not None, last_event_id=last_id,
                retry_ms=retry, max_message_size=self.max_message_size, url=request.url,
            )
            try:
                result = await self.pump(reader, response, linger=True)
            finally:
                await response.aclose()
            if ex.answered.is_set() or reader.answered:
                return
            term = result.terminal
            if not isinstance(term, hr.StreamBroken):
                await self.fail_request(ex, f"{broken.detail}; resuming it failed: {_describe(term)}")
                return
            progress = result.messages > 0 or reader.last_event_id != last_id
            failures = 0 if progress else failures + 1
            if failures >= self.reconnect.max_failures:
                await self.fail_request(ex, f"{broken.detail}; resuming it brought nothing new")
                return
            last_id = reader.last_event_id or last_id
            retry = reader.retry_ms

    # ------------------------------------------------------------------ new session

    async def reinitialize(self, generation: int) -> bool:
        """Start a new session after a 404 (see the module docstring); ``True`` on success."""
        async with self._reinit_lock:
            if self.planner.generation != generation:
                return self.planner.session_id is not None or self.planner.mode is Mode.LEGACY_SSE
            if self.planner.initialize_params is None:
                return False
            self._session_ready = trio.Event()
            try:
                return await self._new_session()
            finally:
                self._session_ready.set()

    async def _new_session(self) -> bool:
        self.planner.session_expired()
        if self._standalone_scope is not None:
            self._standalone_scope.cancel()
        try:
            await self.refresh_headers()
        except TransportError as exc:
            self._issue(f"re-initializing: {exc}")
            return False
        plan = self.planner.plan_reinitialize(f"trimcp-reinit-{next(_reinit_ids)}")
        answer = await self._private_exchange(plan)
        result = answer.get("result") if isinstance(answer, dict) else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if not isinstance(version, str):
            self._issue(f"re-initializing failed: {answer!r}"[:300])
            return False
        self.planner.initialized(version)
        note = self.planner.plan_post(rpc.Notification("notifications/initialized"))
        await self._private_exchange(note)
        self.start_standalone()
        return True

    async def _private_exchange(self, plan: PostPlan) -> Any:
        """POST on the transport's own behalf; return the answer (kept from the session)."""
        holder: list[Any] = []
        if plan.wire_id is not None:
            self._private[plan.wire_id] = holder
        reader = self.reader_for(plan)
        reader.legacy_fallback = False
        try:
            with trio.move_on_after(math.inf if self.post_timeout is None else self.post_timeout):
                response = await self.executor.open(plan.request)
                try:
                    await self.pump(reader, response, linger=True)
                finally:
                    await response.aclose()
        except TransportError as exc:
            self._issue(f"{plan.method} failed: {exc}")
        finally:
            if plan.wire_id is not None:
                del self._private[plan.wire_id]
        return holder[0] if holder else None

    # ------------------------------------------------------------------ 2024-11-05

    async def fall_back_to_legacy(self) -> bool:
        """Switch to the HTTP+SSE transport if the server offers it; ``True`` on success."""
        async with self._legacy_lock:
            if self.planner.mode is Mode.LEGACY_SSE:
                return True
            url = await self._nursery.start(self._legacy_task)
            return url is not None

    async def _legacy_task(self, *, task_status: trio.TaskStatus[str | None] = trio.TASK_STATUS_IGNORED) -> None:
        announced = False
        request = self.planner.plan_legacy_get()
        wait = trio.CancelScope(deadline=trio.current_time() + self.legacy_endpoint_timeout)

        def on_endpoint(url: str) -> None:
            nonlocal announced
            if not announced:
                announced = True
                wait.deadline = math.inf
                self.planner.use_legacy(url)
                task_status.started(url)

        try:
            result: PumpResult | None = None
            with wait:
                response = await self.executor.open(request)
                reader = hr.ResponseReader(
                    hr.Purpose.LEGACY_SSE, max_message_size=self.max_message_size, url=request.url
                )
                try:
                    result = await self.pump(reader, response, on_endpoint=on_endpoint)
                finally:
                    await response.aclose()
            what = "no endpoint event in time" if result is None else _describe(result.terminal)
            if announced:
                self._die(f"the 2024-11-05 event stream ended: {what}")
            else:
                self._issue(f"no 2024-11-05 HTTP+SSE transport at {request.url}: {what}")
        except TransportError as exc:
            if announced:
                self._die(f"the 2024-11-05 event stream failed: {exc}")
            else:
                self._issue(f"no 2024-11-05 HTTP+SSE transport at {request.url}: {exc}")
        finally:
            if not announced:
                task_status.started(None)
