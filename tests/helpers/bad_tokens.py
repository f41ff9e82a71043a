"""A protected 2025-11-25 MCP server that knows the tokens ``--auth-token-*`` hand over, with one defect.

``TokenFake`` is ``bad_auth.AuthFake`` (correct in every respect the
discovery and forged-token checks look at) holding these tokens:

``AT-alice`` / ``AT-bob``  valid, two identities (scope ``read``)
``AT-narrow``              alice without ``read``: ``initialize`` passes, ``tools/list`` gets 403
                           ``insufficient_scope``
``AT-other-aud``           issued for another resource: 401
``AT-expired``             expired: 401

It declares tasks (``list``, ``cancel``, ``requests.tools.call``) and one read-only tool
``slow`` that allows tasks; each task belongs to the identity that created it and runs
until its owner asks ``tasks/result`` (then ``completed``) or cancels it.
``mode`` names the one defect:

``accepts-any-audience``     the other resource's token is taken as alice's
``accepts-expired``          the expired token is taken as alice's
``scope-401``                the narrow token's ``tools/list`` gets 401 ``invalid_token``, not 403
``tasks-shared``             every identity reads, lists and cancels every task
``list-shared``              ``tasks/get`` is bound, but ``tasks/list`` shows every task
``result-shared``            ``tasks/result`` is not bound: another identity's request waits for the
                             task's end, then gets its result
``cancel-then-refuse``       another identity's ``tasks/cancel`` cancels the task, then answers the
                             ownership error
"""

from __future__ import annotations

import itertools
from typing import Any

import trio
from helpers.bad_auth import AuthFake
from helpers.h11_fake import Reply, Req, result
from helpers.oauth_fakes import AuthServer

TOKEN_MODES = (
    "accepts-any-audience",
    "accepts-expired",
    "scope-401",
    "tasks-shared",
    "list-shared",
    "result-shared",
    "cancel-then-refuse",
)
IDENTITIES = {"AT-alice": "alice", "AT-bob": "bob", "AT-narrow": "alice"}
SCOPES = {"AT-alice": {"read"}, "AT-bob": {"read"}, "AT-narrow": set()}
_TOOL = {
    "name": "slow",
    "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True},
    "execution": {"taskSupport": "optional"},
}
_STAMP = "2025-01-01T00:00:00Z"


class TokenFake(AuthFake):
    def __init__(self, auth: AuthServer, mode: str = "") -> None:
        super().__init__(auth)
        assert mode in ("", *TOKEN_MODES), mode
        self.token_mode = mode
        for token, scopes in SCOPES.items():
            auth.access[token] = set(scopes)
        self.tools = [_TOOL]
        self.tasks: dict[str, str] = {}  # taskId -> owner
        self.status: dict[str, str] = {}
        self.ended: dict[str, trio.Event] = {}
        self._n = itertools.count(1)

    def _token(self, req: Req) -> str:
        header = req.header("authorization") or ""
        token = header[7:] if header.startswith("Bearer ") else ""
        if (token == "AT-other-aud" and self.token_mode == "accepts-any-audience") or (
            token == "AT-expired" and self.token_mode == "accepts-expired"
        ):
            return "AT-alice"
        return token

    async def __call__(self, req: Req, reply: Reply) -> None:
        token = self._token(req)
        if token and token != (req.header("authorization") or "")[7:]:
            req.headers = {**req.headers, "authorization": f"Bearer {token}"}  # the defect: taken as valid
        await super().__call__(req, reply)

    async def on_initialize(self, req: Req, reply: Reply, sid: str) -> None:
        caps: dict[str, Any] = {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
        await reply.json(
            result(
                req,
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": caps,
                    # (the caller's token echoed: the report's redactor must hide it)
                    "serverInfo": {"name": f"token-fake for {req.header('authorization')}", "version": "1"},
                },
            ),
            headers=[("Mcp-Session-Id", sid)],
        )

    def _task(self, task_id: str) -> dict[str, Any]:
        return {
            "taskId": task_id,
            "status": self.status[task_id],
            "createdAt": _STAMP,
            "lastUpdatedAt": _STAMP,
            "ttl": 60000,
        }

    def _end(self, task_id: str, status: str) -> None:
        if self.status[task_id] == "working":
            self.status[task_id] = status
            self.ended[task_id].set()

    async def on_request(self, req: Req, reply: Reply) -> None:
        msg = req.json
        method, params = msg["method"], msg.get("params") or {}
        token = self._token(req)
        who = IDENTITIES[token]
        if method == "tools/list" and "read" not in SCOPES[token]:
            if self.token_mode == "scope-401":
                await reply.json(
                    {"error": "unauthorized"},
                    401,
                    headers=[("WWW-Authenticate", 'Bearer error="invalid_token", scope="read"')],
                )
            else:
                prm = f"{self.base}/.well-known/oauth-protected-resource/mcp"
                challenge = f'Bearer error="insufficient_scope", scope="read", resource_metadata="{prm}"'
                await reply.json({"error": "forbidden"}, 403, headers=[("WWW-Authenticate", challenge)])
            return
        if method == "tools/call" and "task" in params:
            task_id = f"task-{next(self._n)}"
            self.tasks[task_id] = who
            self.status[task_id], self.ended[task_id] = "working", trio.Event()
            await reply.json(result(req, {"task": self._task(task_id)}))
            return
        if method in ("tasks/get", "tasks/result", "tasks/cancel"):
            task_id = params.get("taskId", "")
            owner = self.tasks.get(task_id)
            shared = self.token_mode == "tasks-shared" or (
                method == "tasks/result" and self.token_mode == "result-shared"
            )
            if (
                owner is not None
                and owner != who
                and method == "tasks/cancel"
                and (self.token_mode == "cancel-then-refuse")
            ):
                self._end(task_id, "cancelled")
            if owner is None or (owner != who and not shared):
                await reply.json(
                    {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32602, "message": "unknown task"}}
                )
            elif method == "tasks/result":
                if owner == who:
                    self._end(task_id, "completed")
                await self.ended[task_id].wait()
                await reply.json(result(req, {"content": [{"type": "text", "text": "done"}]}))
            else:
                if method == "tasks/cancel":
                    self._end(task_id, "cancelled")
                await reply.json(result(req, self._task(task_id)))
            return
        if method == "tasks/list":
            shared = self.token_mode in ("tasks-shared", "list-shared")
            await reply.json(
                result(req, {"tasks": [self._task(t) for t, o in self.tasks.items() if shared or o == who]})
            )
            return
        await super().on_request(req, reply)
