"""Client side of ext-tasks: following a task a ``tools/call`` was answered with.

Theory of operation
-------------------
ext-tasks (``io.modelcontextprotocol/tasks``, specification/draft/tasks.md):
a client that declared the extension on a request MUST be ready for a
``CreateTaskResult`` (``resultType: "task"``) instead of the
``CallToolResult``.  It then polls ``tasks/get`` at the server's
``pollIntervalMs`` (SHOULD) until the task is terminal, answers
``input_required`` tasks' ``inputRequests`` with ``tasks/update`` (each one
treated as the equivalent standalone request: the same handlers as
``elicitation/create``, ``sampling/createMessage`` and ``roots/list`` in the
handshake era, via ``mrtr.answer_input_requests``; keys already answered are
not asked again) and may ask to stop with ``tasks/cancel`` (never
``notifications/cancelled``).

Two surfaces, as the spec's backwards-compatibility note suggests:

* ``follow_to_result`` keeps ``ClientSession.call_tool``'s contract: it polls
  transparently and returns the final result (``completed``; a tool error is
  a completed task with ``isError``), raises ``McpError`` for a ``failed``
  task (the inlined JSON-RPC error) and ``TaskCancelled`` for a ``cancelled``
  one.  The call's deadline (``waiters.Deadline``: its timeout, pushed - if
  the session resets timeouts on progress - by each change of the task's
  status or ``lastUpdatedAt``, never past the total bound) covers the
  ``tools/call`` and every poll; past it the task is sent ``tasks/cancel`` and
  the caller gets ``RequestTimeout``.  When the caller cancels, or the
  follow-up fails, the task is sent ``tasks/cancel`` too (shielded, briefly):
  nobody will read its result.
* ``ToolTask`` (``ClientSession.call_tool_as_task``) hands the task to the
  caller: ``status()``, ``wait()``, ``result()``, ``cancel()``; leaving a
  ``wait()`` early does not cancel the task.

The decisions (parsing, deduplication, the next delay) are
``_sansio.task_poll``'s; this module only does the I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

import trio

from ..._errors import McpError, RemoteProtocolError, RequestTimeout, TaskCancelled, TrimcpError
from ..._sansio import events as ev
from ..._sansio import schema as s
from ..._sansio import task_poll as tp
from ..._sansio.connection import stateless as sl
from ..._sansio.task_table import CANCELLED, FAILED
from ..driver import SessionDriver
from ..waiters import Deadline
from .mrtr import answer_input_requests

logger = logging.getLogger("trimcp")

#: How long a ``tasks/cancel`` sent on the way out may take (it is shielded).
CANCEL_GRACE: Final = 5.0


def _call_result(state: tp.TaskState) -> s.CallToolResult:
    """A terminal task's outcome: the CallToolResult, or the error it ended in."""
    if state.status == FAILED:
        assert state.error is not None
        raise McpError(state.error["code"], state.error["message"], state.error.get("data"))
    if state.status == CANCELLED:
        raise TaskCancelled(state.task_id, state.status_message)
    assert state.result is not None
    try:
        return s.from_wire(s.CallToolResult, dict(state.result))
    except s.SchemaError as exc:
        raise RemoteProtocolError(f"task {state.task_id}: invalid CallToolResult: {exc}") from exc


class _Follower:
    """The poll loop over one task (shared by both surfaces)."""

    def __init__(self, driver: SessionDriver, created: tp.TaskState) -> None:
        self.driver = driver
        self.poller = tp.TaskPoller(created)
        #: Whether ``poller.state`` came from ``tasks/get`` (a CreateTaskResult carries no payload).
        self.detailed = False

    @property
    def task_id(self) -> str:
        return self.poller.task_id

    async def get(self) -> tuple[tp.TaskState, bool]:
        raw = await self.driver.request("tasks/get", {"taskId": self.task_id})
        state = tp.parse_task(raw, detailed=True, what=f"tasks/get answer for task {self.task_id}")
        changed = self.poller.observe(state)
        self.detailed = True
        return state, changed

    async def answer(self) -> None:
        """Answer the outstanding questions not answered yet (one ``tasks/update``)."""
        pending = self.poller.to_answer()
        if not pending:
            return
        problem = sl.input_required_problem(
            {"resultType": s.ResultType.INPUT_REQUIRED, "inputRequests": pending}, self.driver.connection.capabilities
        )
        if problem is not None:
            raise RemoteProtocolError(f"task {self.task_id}: unusable inputRequests: {problem}")
        event = ev.InputRequired(self.task_id, "tools/call", {}, dict(pending), None)
        responses = await answer_input_requests(self.driver, event)
        await self.driver.request("tasks/update", {"taskId": self.task_id, "inputResponses": responses})
        self.poller.answered_keys(responses)

    async def run(self, deadline: Deadline | None) -> tp.TaskState:
        """Poll until the task is terminal (``deadline`` pushed by its changes)."""
        while not (self.detailed and self.poller.state.terminal):
            if self.detailed:
                await self.answer()
                remaining = None if deadline is None or deadline.limit is None else deadline.at - trio.current_time()
                await trio.sleep(tp.poll_delay(self.poller.state, remaining))
            elif not self.poller.state.terminal:
                # The seed state: wait the suggested interval before the first poll.
                await trio.sleep(tp.poll_delay(self.poller.state, None))
            _, changed = await self.get()
            if changed and deadline is not None:
                deadline.progressed()
        return self.poller.state

    async def cancel(self) -> None:
        await self.driver.request("tasks/cancel", {"taskId": self.task_id})

    async def cancel_quietly(self) -> None:
        """Best effort, on the way out: shielded, within ``CANCEL_GRACE``."""
        with trio.CancelScope(shield=True), trio.move_on_after(CANCEL_GRACE):
            try:
                await self.driver.request("tasks/cancel", {"taskId": self.task_id}, timeout=CANCEL_GRACE)
            except TrimcpError as exc:
                logger.debug("tasks/cancel for task %s failed: %s", self.task_id, exc)


def created_task(result: Mapping[str, Any]) -> tp.TaskState:
    return tp.parse_task(result, detailed=False, what="CreateTaskResult")


async def follow_to_result(driver: SessionDriver, result: Mapping[str, Any], deadline: Deadline) -> s.CallToolResult:
    """``call_tool``'s transparent path (see the module docstring)."""
    follower = _Follower(driver, created_task(result))
    finished = False
    try:
        with trio.CancelScope(deadline=deadline.at) as scope:
            deadline.scope = scope
            state = await follower.run(deadline)
            finished = True
    finally:
        deadline.scope = None
        if not finished:
            await follower.cancel_quietly()
    if scope.cancelled_caught:
        raise RequestTimeout(
            f"tools/call: task {follower.task_id} did not finish within the call's deadline "
            f"({deadline.limit} s{', pushed by its changes' if deadline.extended else ''}); "
            "it was sent tasks/cancel"
        )
    return _call_result(state)


class ToolTask:
    """A ``tools/call`` the server runs as a task (``ClientSession.call_tool_as_task``)."""

    def __init__(self, driver: SessionDriver, created: tp.TaskState) -> None:
        self._follower = _Follower(driver, created)

    def __repr__(self) -> str:
        return f"<ToolTask {self.task_id} {self.state.status}>"

    @property
    def task_id(self) -> str:
        return self._follower.task_id

    @property
    def state(self) -> tp.TaskState:
        """The last state seen (the CreateTaskResult's until the first poll)."""
        return self._follower.poller.state

    async def status(self) -> tp.TaskState:
        """One ``tasks/get``: the task as the server sees it now (input is not answered)."""
        state, _ = await self._follower.get()
        return state

    async def wait(self) -> tp.TaskState:
        """Poll until the task is terminal, answering its questions with the session's
        handlers; the terminal state.  Bound it with a Trio cancel scope: leaving early
        does not cancel the task (``cancel()`` does)."""
        return await self._follower.run(None)

    async def result(self) -> s.CallToolResult:
        """``wait()``, then the outcome: the CallToolResult of a completed task,
        ``McpError`` for a failed one, ``TaskCancelled`` for a cancelled one."""
        return _call_result(await self.wait())

    async def cancel(self) -> None:
        """``tasks/cancel``: ask the server to stop (cooperative: it may still finish)."""
        await self._follower.cancel()
