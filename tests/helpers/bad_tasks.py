"""A raw JSON-lines stdio MCP server (2025-11-25) with tasks, and one deliberate defect per ``--mode``.

Used by tests/check/test_check_tasks.py to make sure ``trimcp check`` judges the 2025-11-25
tasks utility (``basic/utilities/tasks``).  Plain Python on purpose (no trimcp import):
the harness must judge a server it had no hand in.

Tools (all read-only): ``slow_echo`` (``taskSupport`` optional; its work takes
``WORK`` seconds), ``must_task`` (required), ``no_task`` (no ``execution``: forbidden).
A task's status is computed when asked: ``working`` until its work is done,
then ``completed`` (``failed`` with a ``statusMessage`` for an isError result),
or ``cancelled`` for good once cancelled.  ``tasks/result`` blocks (sleeps) until
the work is done, sends ``notifications/tasks/status`` and answers the
CallToolResult with the related-task ``_meta``.  Apart from the selected defect it
behaves correctly:

  good                         no defect
  no-tasks                     declares no tasks capability (and ignores task fields)
  no-tools-call                declares tasks without requests.tools.call, ignores task fields (correct)
  tool-fails                   slow_echo answers isError; its task is failed with a statusMessage (correct)
  augments-undeclared          declares tasks without requests.tools.call, yet answers a CreateTaskResult
  undeclared-creates           declares no tasks capability at all, yet answers a CreateTaskResult
  undeclared-refuses           declares tasks without requests.tools.call, and refuses a tools/call carrying
                               a task with -32602 instead of ignoring the field
  create-not-working           a new task begins "completed"
  no-timestamps                tasks/get answers lack lastUpdatedAt
  wrong-status-flow            tasks/get of a task already reported terminal says "working"
  result-not-blocking          tasks/result of a working task answers at once
  result-without-related-meta  the tasks/result answer has no related-task _meta
  meta-over-param              tasks/get and tasks/result follow the related-task _meta, not taskId
  list-missing                 tasks/list lists nothing
  bad-cursor-ok                an unknown tasks/list cursor gets the first page
  unknown-task-wrong-code      an unknown taskId gets -32600, not -32602
  cancel-terminal-ok           cancelling a terminal task answers it, "cancelled"
  cancel-not-cancelled         cancelling a working task answers it still "working"
  cancel-not-sticky            a cancelled task becomes "completed" once its work would have ended
  required-without-task-ok     must_task called without a task runs normally
  forbidden-task-ok            no_task called with a task creates one
  related-meta-on-get          tasks/get results carry the related-task _meta
  empty-error-message          task errors have an empty message
  failed-no-message            like tool-fails, but the failed task has no statusMessage
  input-without-related-meta   the elicitation a task needs lacks the related-task _meta
  asks-with-task               that elicitation is itself task-augmented, though the client declared no tasks
  bad-timestamps               tasks/get answers carry a createdAt that is no ISO 8601 date-time
  result-meta-other-task       the tasks/result answer's related-task _meta names another task
  finishes-at-once             a task's work is done as soon as it is created (correct: tasks/result has
                               nothing to block on, so its blocking cannot be judged)
  progress-other-token         the notifications/progress of a task carry another progressToken
  progress-after-terminal      a task's notifications/progress go on after tasks/result answered
  reused-task-id               the fourth task created gets the id of the second
  list-duplicates              tasks/list lists the first task again on its last page
  result-differs               tasks/result's CallToolResult is not what the call without a task returns
  task-error-other-code        tasks/result of a task of an unknown tool gives -32603, not the -32602
                               the call without a task gets

A task-augmented call carrying ``_meta.progressToken`` gets a ``notifications/progress``
with it once the task is created and once more while ``tasks/result`` waits (before the
task is terminal).  A task-augmented call of an unknown tool makes a task, which fails
with the JSON-RPC error the plain call gets (-32602), as ``tasks/result`` says.

When the client declared elicitation, ``tasks/result`` of a ``slow_echo`` task first
asks it for a name (``elicitation/create`` with the related-task ``_meta``; the task
is ``input_required`` meanwhile) and waits for the answer.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from datetime import UTC, datetime
from typing import Any

from jsonrpc_lines import read_message  # tests/helpers, beside this file

REVISION = "2025-11-25"
WORK = 0.2
POLL = 100
RELATED = "io.modelcontextprotocol/related-task"
TERMINAL = ("completed", "failed", "cancelled")
MODES = (
    "good",
    "no-tasks",
    "no-tools-call",
    "tool-fails",
    "augments-undeclared",
    "create-not-working",
    "no-timestamps",
    "wrong-status-flow",
    "result-not-blocking",
    "result-without-related-meta",
    "meta-over-param",
    "list-missing",
    "bad-cursor-ok",
    "unknown-task-wrong-code",
    "cancel-terminal-ok",
    "cancel-not-cancelled",
    "cancel-not-sticky",
    "required-without-task-ok",
    "forbidden-task-ok",
    "related-meta-on-get",
    "empty-error-message",
    "failed-no-message",
    "input-without-related-meta",
    "asks-with-task",
    "finishes-at-once",
    "bad-timestamps",
    "result-meta-other-task",
    "progress-other-token",
    "progress-after-terminal",
    "reused-task-id",
    "list-duplicates",
    "result-differs",
    "task-error-other-code",
    "undeclared-creates",
    "undeclared-refuses",
)
READ_ONLY = {"readOnlyHint": True}
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}
TOOLS = [
    {"name": "slow_echo", "inputSchema": SCHEMA, "annotations": READ_ONLY, "execution": {"taskSupport": "optional"}},
    {"name": "must_task", "inputSchema": SCHEMA, "annotations": READ_ONLY, "execution": {"taskSupport": "required"}},
    {"name": "no_task", "inputSchema": SCHEMA, "annotations": READ_ONLY},
]


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


class Server:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.tasks: dict[str, dict[str, Any]] = {}
        self.client_caps: dict[str, Any] = {}
        self.next_id = 0
        self.created: list[str] = []

    # ------------------------------------------------------------------ wire

    def send(self, msg: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

    def error(self, rid: Any, code: int, message: str) -> None:
        if self.mode == "empty-error-message":
            message = ""
        self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

    def result(self, rid: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    # ------------------------------------------------------------------ tasks

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {"tools": {}}
        if self.mode in ("no-tasks", "undeclared-creates"):
            return caps
        caps["tasks"] = {"list": {}, "cancel": {}}
        if self.mode not in ("no-tools-call", "augments-undeclared", "undeclared-refuses"):
            caps["tasks"]["requests"] = {"tools": {"call": {}}}
        return caps

    def augments(self) -> bool:
        return self.mode not in ("no-tasks", "no-tools-call", "undeclared-refuses")

    def tool_result(self, name: str) -> dict[str, Any]:
        fails = self.mode in ("tool-fails", "failed-no-message") and name == "slow_echo"
        return {"content": [{"type": "text", "text": f"{name}: done"}], "isError": fails}

    def status(self, task: dict[str, Any]) -> str:
        done = time.monotonic() >= task["done_at"]
        if task["cancelled"]:
            return "completed" if self.mode == "cancel-not-sticky" and done else "cancelled"
        if not done:
            return "input_required" if task.get("input_required") else "working"
        return "failed" if task["error"] or task["result"]["isError"] else "completed"

    def view(self, task: dict[str, Any], *, op: str) -> dict[str, Any]:
        status = self.status(task)
        if op == "get" and self.mode == "wrong-status-flow":
            if task["reported_terminal"]:
                status = "working"
            elif status in TERMINAL:
                task["reported_terminal"] = True
        if op == "create" and self.mode == "create-not-working":
            status = "completed"
        if op == "create" and self.mode == "finishes-at-once":
            status = "working"  # (it begins working, and is done by the next look)
        out: dict[str, Any] = {
            "taskId": task["id"],
            "status": status,
            "createdAt": task["created"],
            "lastUpdatedAt": now_iso(),
            "ttl": task["ttl"],
            "pollInterval": POLL,
        }
        if status == "failed" and self.mode != "failed-no-message":
            out["statusMessage"] = task["error"][1] if task["error"] else "slow_echo returned isError"
        if op == "get" and self.mode == "bad-timestamps":
            out["createdAt"] = "yesterday"
        if op == "get" and self.mode == "no-timestamps":
            del out["lastUpdatedAt"]
        return out

    def find(self, rid: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        task_id = params.get("taskId")
        if self.mode == "meta-over-param":
            task_id = ((params.get("_meta") or {}).get(RELATED) or {}).get("taskId", task_id)
        task = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            code = -32600 if self.mode == "unknown-task-wrong-code" else -32602
            self.error(rid, code, f"Failed to retrieve task: no task {task_id!r}")
        return task

    def create(self, rid: Any, name: str, params: dict[str, Any], error: tuple[int, str] | None = None) -> None:
        task_params = params.get("task")
        ttl = task_params.get("ttl", 60000) if isinstance(task_params, dict) else 60000
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        task_id = secrets.token_hex(16)
        if self.mode == "reused-task-id" and len(self.created) == 3:
            task_id = self.created[1]
        self.created.append(task_id)
        task = {
            "id": task_id,
            "created": now_iso(),
            "done_at": time.monotonic() + (0.0 if self.mode == "finishes-at-once" else WORK),
            "cancelled": False,
            "result": self.tool_result(name),
            "ttl": ttl,
            "reported_terminal": False,
            "asked": False,
            "token": token,
            "error": error,
        }
        self.tasks[task["id"]] = task
        self.result(rid, {"task": self.view(task, op="create")})
        self.progress(task, 1)

    def progress(self, task: dict[str, Any], step: int) -> None:
        """A ``notifications/progress`` for a task whose request carried a progressToken."""
        if task["token"] is None:
            return
        token = "trimcp-audit-other-token" if self.mode == "progress-other-token" else task["token"]
        self.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": step, "total": 3},
            }
        )

    def tools_call(self, rid: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        tool = next((t for t in TOOLS if t["name"] == name), None)
        if tool is None and "task" in params and self.augments():
            self.create(rid, str(name), params, error=(-32602, f"Unknown tool: {name}"))
            return
        if tool is None:
            self.error(rid, -32602, f"Unknown tool: {name}")
            return
        if "task" in params and self.mode == "undeclared-refuses":
            self.error(rid, -32602, "Invalid params: unexpected field 'task'")
            return
        support = (tool.get("execution") or {}).get("taskSupport", "forbidden")
        wants_task = "task" in params and (
            self.augments() or self.mode in ("augments-undeclared", "undeclared-creates")
        )
        if wants_task and support == "forbidden" and self.mode != "forbidden-task-ok":
            self.error(rid, -32601, f"Tool {name} does not support task-augmented execution")
        elif wants_task:
            self.create(rid, str(name), params)
        elif support == "required" and self.augments() and self.mode != "required-without-task-ok":
            self.error(rid, -32601, f"Tool {name} requires task-augmented execution")
        else:
            self.result(rid, self.tool_result(str(name)))

    def tasks_result(self, rid: Any, params: dict[str, Any]) -> None:
        task = self.find(rid, params)
        if task is None:
            return
        if "elicitation" in self.client_caps and not task["cancelled"] and not task["asked"] and not task["error"]:
            task["asked"] = True
            self.ask_input(task)
        if not task["cancelled"] and self.status(task) not in TERMINAL:
            self.progress(task, 2)
        if self.mode != "result-not-blocking" and not task["cancelled"]:
            time.sleep(max(0.0, task["done_at"] - time.monotonic()))
        self.send({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": self.view(task, op="note")})
        if task["cancelled"]:
            self.error(rid, -32603, "The task was cancelled")
            return
        if task["error"]:
            code = -32603 if self.mode == "task-error-other-code" else task["error"][0]
            self.error(rid, code, task["error"][1])
            return
        result = dict(task["result"])
        if self.mode == "result-differs":
            result["content"] = [{"type": "text", "text": "done, as a task"}]
        if self.mode != "result-without-related-meta":
            other = "trimcp-audit-other-task" if self.mode == "result-meta-other-task" else task["id"]
            result["_meta"] = {RELATED: {"taskId": other}}
        self.result(rid, result)
        if self.mode == "progress-after-terminal":
            self.progress(task, 3)

    def ask_input(self, task: dict[str, Any]) -> None:
        """An elicitation the task needs, tied to it; wait for the client's answer."""
        self.next_id += 1
        params: dict[str, Any] = {
            "mode": "form",
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        }
        if self.mode != "input-without-related-meta":
            params["_meta"] = {RELATED: {"taskId": task["id"]}}
        if self.mode == "asks-with-task":
            params["task"] = {"ttl": 60000}
        rid = f"ask-{self.next_id}"
        task["input_required"] = True
        self.send({"jsonrpc": "2.0", "id": rid, "method": "elicitation/create", "params": params})
        while True:
            line = sys.stdin.readline()
            if not line:
                raise SystemExit(0)
            if line.strip():
                msg = json.loads(line)
                if msg.get("id") == rid and "method" not in msg:
                    break
                self.handle(msg)
        task["input_required"] = False

    def tasks_cancel(self, rid: Any, params: dict[str, Any]) -> None:
        task = self.find(rid, params)
        if task is None:
            return
        status = self.status(task)
        if status in TERMINAL and self.mode != "cancel-terminal-ok":
            self.error(rid, -32602, f"Cannot cancel task: already in terminal status '{status}'")
            return
        if self.mode != "cancel-not-cancelled":
            task["cancelled"] = True
        self.result(rid, self.view(task, op="cancel"))

    def tasks_list(self, rid: Any, params: dict[str, Any]) -> None:
        cursor = params.get("cursor")
        ids = list(self.tasks)
        if cursor is not None and self.mode != "bad-cursor-ok":
            if cursor not in ids:
                self.error(rid, -32602, "Invalid cursor")
                return
            ids = ids[ids.index(cursor) :]
        # One task a page, to make the harness follow nextCursor.
        page = [] if self.mode == "list-missing" else [self.view(self.tasks[t], op="list") for t in ids[:1]]
        if self.mode == "list-duplicates" and len(ids) == 1 and len(self.tasks) > 1:
            page.append(self.view(next(iter(self.tasks.values())), op="list"))
        result: dict[str, Any] = {"tasks": page}
        if len(ids) > 1 and self.mode != "list-missing":
            result["nextCursor"] = ids[1]
        self.result(rid, result)

    # ------------------------------------------------------------------ dispatch

    def handle(self, msg: dict[str, Any]) -> None:
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if rid is None:
            return  # notifications: nothing to do
        if method == "initialize":
            self.client_caps = params.get("capabilities") or {}
            self.result(
                rid,
                {
                    "protocolVersion": REVISION,
                    "capabilities": self.capabilities(),
                    "serverInfo": {"name": f"bad-tasks-{self.mode}", "version": "0"},
                },
            )
        elif method == "ping":
            self.result(rid, {})
        elif method == "tools/list":
            self.result(rid, {"tools": TOOLS})
        elif method == "tools/call":
            self.tools_call(rid, params)
        elif method in ("tasks/get", "tasks/result", "tasks/cancel", "tasks/list") and self.mode == "no-tasks":
            self.error(rid, -32601, f"Method not found: {method}")
        elif method == "tasks/get":
            task = self.find(rid, params)
            if task is not None:
                view = self.view(task, op="get")
                if self.mode == "related-meta-on-get":
                    view["_meta"] = {RELATED: {"taskId": task["id"]}}
                self.result(rid, view)
        elif method == "tasks/result":
            self.tasks_result(rid, params)
        elif method == "tasks/cancel":
            self.tasks_cancel(rid, params)
        elif method == "tasks/list":
            self.tasks_list(rid, params)
        else:
            self.error(rid, -32601, f"Method not found: {method}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=MODES, default="good")
    server = Server(parser.parse_args().mode)
    while line := sys.stdin.readline():
        if not line.strip():
            continue
        # Malformed input gets the JSON-RPC answers, as a correct server gives them.
        msg = read_message(line, server.error)
        if msg is None:
            continue
        server.handle(msg)


if __name__ == "__main__":
    main()
