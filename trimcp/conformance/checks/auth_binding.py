"""Authorization checks that need tokens a black box cannot mint: the user hands them over.

Theory of operation
-------------------
``checks/auth_tokens.py`` judges what anyone can send (no token, a forged
one).  The rules about *real* tokens need credentials only the user has, so
``trimcp check`` takes them as options (``AuthTokens``: ``--auth-token``,
``--auth-token-other-resource``, ``--auth-token-expired``,
``--auth-token-insufficient-scope``, ``--auth-token-second``); a check whose
token was not given is ``skip`` "needs --auth-token-...", never a pass.

Each token check first sends the opening request (``initialize`` or
``server/discover``) with the run's valid token (``--auth-token``, else the
run's own OAuth token): when even that is refused, a refusal of the other
tokens would judge nothing, and the checks are ``skip``.  Then, each on a
connection of its own:

* ``auth.token-audience`` (``basic/authorization`` "Token Handling": "MCP
  servers MUST validate that access tokens were issued specifically for them
  as the intended audience"): a token issued for another resource is refused
  with 401 ("Invalid or expired tokens MUST receive a HTTP 401 response");
  accepted is a failure, another refusal (403, say) a warning;
* ``auth.expired-token``: an expired token gets 401;
* ``auth.insufficient-scope`` (2025-11-25 on, "Runtime Insufficient Scope
  Errors", a SHOULD): the opening request and then ``tools/list`` with a token
  lacking a scope; the first refusal must be 403 with a Bearer challenge
  naming ``error="insufficient_scope"`` and the ``scope`` needed.  When both
  requests are accepted the token lacks nothing they need: ``skip``;
* ``auth.task-binding`` (2025-11-25 ``basic/utilities/tasks``, "Task Isolation
  and Access Control": tasks are bound to the authorization context): the
  valid token (identity A) opens a session, calls a read-only tool that allows
  tasks as a task and reads it back with ``tasks/get``; the second token
  (identity B) opens its own session and must not get that task from
  ``tasks/get``, cancel it (``tasks/cancel``, sent while the task still
  runs: a refusal is judged only when the owner reads the task running
  before and after it, and a refusal after which the task is ``cancelled``
  fails), see it in ``tasks/list``, or get it from ``tasks/result``, sent
  once the owner has its own result (the task is then terminal, so a server
  answers at once and no answer is no refusal; when the owner's wait times
  out, B's unanswered ``tasks/result`` is not judged).

No token appears in a detail or in evidence: an ``Authorization`` shows as
``Bearer <second token>``, and any copy of a token in a body as ``<token>``
(the CLI's redactor hides them again in every format).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from ..._sansio import auth as sa
from ..._sansio.http import header_names as hn
from ..evidence import exchange
from ..rawhttp import ProbeError, RawResponse, request
from ..results import Results
from ..values import example_arguments
from .auth_tokens import is_stateless, opening_request, shaped_request

#: Makes the ``_Caller`` of a token, with the label it is shown as.
_MakeCaller = Callable[[str, str], "_Caller"]

__all__ = ["BINDING_CHECKS", "AuthTokens", "check_auth_binding", "skip_auth_binding"]

BINDING_CHECKS: Final = ("auth.token-audience", "auth.expired-token", "auth.insufficient-scope", "auth.task-binding")
#: How many pages of ``tools/list`` / ``tasks/list`` are read at most.
_MAX_PAGES: Final = 10
#: The lifetime asked for the probe's task (ms): long enough to be read back by the second identity.
_TTL_MS: Final = 60_000
_TERMINAL: Final = ("completed", "failed", "cancelled")


@attrs.frozen
class AuthTokens:
    """The tokens the user handed over (``None``: not given)."""

    valid: str | None = attrs.field(default=None, repr=False)
    other_resource: str | None = attrs.field(default=None, repr=False)
    expired: str | None = attrs.field(default=None, repr=False)
    insufficient_scope: str | None = attrs.field(default=None, repr=False)
    second: str | None = attrs.field(default=None, repr=False)

    def secrets(self) -> dict[str, str]:
        """Each token given, under the name it is redacted as."""
        named = {
            "AUTH_TOKEN": self.valid,
            "AUTH_TOKEN_OTHER_RESOURCE": self.other_resource,
            "AUTH_TOKEN_EXPIRED": self.expired,
            "AUTH_TOKEN_INSUFFICIENT_SCOPE": self.insufficient_scope,
            "AUTH_TOKEN_SECOND": self.second,
        }
        return {name: value for name, value in named.items() if value}


def skip_auth_binding(rec: Results, reason: str) -> None:
    for check in BINDING_CHECKS:
        rec.skip(check, reason)


class _Caller:
    """One identity's raw requests: its token, labelled, and (handshake era) its session."""

    def __init__(
        self, url: str, revision: str, timeout: float, token: str, label: str, secrets: tuple[str, ...]
    ) -> None:
        self.url, self.revision, self.timeout = url, revision, timeout
        self.token, self.label, self.secrets = token, label, secrets
        self.sid: str | None = None
        self.capabilities: dict[str, Any] = {}
        self._ids = itertools.count(10)
        self.last: tuple[dict[str, str], Any, RawResponse] | None = None

    def _headers(self, headers: dict[str, str]) -> dict[str, str]:
        out = {**headers, "Authorization": f"Bearer {self.token}"}
        if self.sid is not None:
            out[hn.SESSION_HEADER] = self.sid
        return out

    async def open(self) -> RawResponse:
        """The opening request (and, accepted in the handshake era, ``notifications/initialized``)."""
        headers, body = opening_request(self.revision)
        resp = await self._post(headers, body)
        if not 200 <= resp.status < 300:
            return resp
        self.sid = resp.header(hn.SESSION_HEADER)
        result = answer(resp)
        caps = result.get("capabilities") if isinstance(result, dict) else None
        self.capabilities = caps if isinstance(caps, dict) else {}
        if not is_stateless(self.revision):
            headers, note = shaped_request(self.revision, "notifications/initialized", {}, None)
            await self._post(headers, note)
        return resp

    async def ask(self, method: str, params: dict[str, Any]) -> RawResponse:
        headers, body = shaped_request(self.revision, method, params, next(self._ids))
        return await self._post(headers, body)

    async def _post(self, headers: dict[str, str], body: Any) -> RawResponse:
        resp = await request(self.url, "POST", self._headers(headers), body, timeout=self.timeout)
        self.last = (headers, body, resp)
        return resp

    def evidence(self) -> list[dict[str, Any]]:
        """The last exchange, the token shown as its label."""
        if self.last is None:
            return []
        headers, body, resp = self.last
        shown = {**self._headers(headers), "Authorization": f"Bearer <{self.label}>"}
        return [
            exchange(
                "POST",
                self.url,
                shown,
                self.hide(json.dumps(body)),
                status=resp.status,
                response_headers={k: self.hide(v) for k, v in resp.headers.items()},
                response_body=self.hide(resp.body.decode("utf-8", "replace")),
            )
        ]

    def hide(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "<token>")
        return text


def answer(resp: RawResponse) -> Any:
    """The ``result`` of the JSON-RPC response in ``resp`` (``None``: none, or an error)."""
    for msg in resp.messages:
        if isinstance(msg, dict) and "result" in msg and "id" in msg:
            return msg["result"]
    return None


def _refusal(resp: RawResponse) -> str | None:
    """How ``resp`` refused its request (``None``: it answered a result)."""
    if resp.status >= 400:
        return f"HTTP {resp.status}"
    code = resp.error_code()
    if code is not None:
        return f"JSON-RPC error {code}"
    return None if answer(resp) is not None else f"HTTP {resp.status} without a result"


def _challenge(resp: RawResponse) -> sa.Challenge | None:
    value = resp.header("www-authenticate")
    return sa.bearer_challenge([value]) if value else None


async def check_auth_binding(
    rec: Results, url: str, revision: str, timeout: float, tokens: AuthTokens, own_token: str | None
) -> None:
    """Run the ``BINDING_CHECKS``; ``own_token`` is the run's OAuth token (when it has one)."""
    valid = tokens.valid or own_token
    secrets = tuple(sorted({t for t in (*tokens.secrets().values(), own_token) if t}, key=len, reverse=True))

    def caller(token: str, label: str) -> _Caller:
        return _Caller(url, revision, timeout, token, label, secrets)

    if valid is None:
        skip_auth_binding(rec, "needs --auth-token (a valid token to compare the others with)")
        return
    baseline = caller(valid, "valid token")
    try:
        resp = await baseline.open()
    except ProbeError as exc:
        skip_auth_binding(rec, f"the valid token's request failed: {baseline.hide(str(exc))}")
        return
    if not 200 <= resp.status < 300:
        skip_auth_binding(rec, f"the valid token was refused too (HTTP {resp.status}): a refusal judges nothing")
        return
    await _refused_401(
        rec,
        "auth.token-audience",
        tokens.other_resource,
        "--auth-token-other-resource",
        caller,
        "a token issued for another resource",
        lenient=True,
    )
    await _refused_401(
        rec, "auth.expired-token", tokens.expired, "--auth-token-expired", caller, "an expired token", lenient=False
    )
    await _insufficient_scope(rec, tokens.insufficient_scope, caller)
    await _task_binding(rec, baseline, tokens.second, caller)


async def _refused_401(
    rec: Results, check: str, token: str | None, option: str, caller: _MakeCaller, what: str, *, lenient: bool
) -> None:
    if token is None:
        rec.skip(check, f"needs {option}")
        return
    who = caller(token, option.removeprefix("--"))
    try:
        resp = await who.open()
    except ProbeError as exc:
        rec.skip(check, f"{what}: {who.hide(str(exc))}")
        return
    method = "server/discover" if is_stateless(who.revision) else "initialize"
    if resp.status == 401:
        challenge = _challenge(resp)
        error = f', error="{challenge.error}"' if challenge is not None and challenge.error else ""
        rec.ok(check, f"{method} with {what}: 401{error}")
    elif 200 <= resp.status < 300:
        rec.fail(check, f"{method} with {what}: HTTP {resp.status}, accepted", who.evidence())
    elif lenient and resp.status == 403:
        # Refused, which is what the audience rule asks; the status is not the 401 invalid tokens get.
        rec.warn(check, f"{method} with {what}: refused with 403, not 401", who.evidence())
    else:
        rec.fail(check, f"{method} with {what}: HTTP {resp.status}, expected 401", who.evidence())


async def _insufficient_scope(rec: Results, token: str | None, caller: _MakeCaller) -> None:
    check = "auth.insufficient-scope"
    if token is None:
        rec.skip(check, "needs --auth-token-insufficient-scope")
        return
    who = caller(token, "auth-token-insufficient-scope")
    opening = "server/discover" if is_stateless(who.revision) else "initialize"
    try:
        resp = await who.open()
        sent = [opening]
        if 200 <= resp.status < 300:
            resp = await who.ask("tools/list", {})
            sent.append("tools/list")
    except ProbeError as exc:
        rec.skip(check, f"a token with insufficient scope: {who.hide(str(exc))}")
        return
    what = f"{sent[-1]} with a token lacking a scope"
    if 200 <= resp.status < 300:
        rec.skip(check, f"{' and '.join(sent)} were accepted with the token: it lacks no scope they need")
        return
    challenge = _challenge(resp)
    if resp.status != 403:
        rec.fail(check, f"{what}: HTTP {resp.status}, expected 403 Forbidden", who.evidence())
    elif challenge is None:
        rec.fail(check, f"{what}: 403 without a Bearer WWW-Authenticate challenge", who.evidence())
    elif challenge.error != "insufficient_scope":
        rec.fail(check, f'{what}: 403 naming error={challenge.error!r}, not "insufficient_scope"', who.evidence())
    elif not challenge.scope:
        rec.fail(check, f'{what}: 403 error="insufficient_scope" naming no scope', who.evidence())
    else:
        rec.ok(check, f'{what}: 403, error="insufficient_scope", scope={challenge.scope!r}')


def _declared(caps: Mapping[str, Any], *path: str) -> bool:
    node: Any = caps.get("tasks")
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return isinstance(node, dict)


async def _task_target(owner: _Caller) -> tuple[str, dict[str, Any]] | None:
    """A read-only tool that allows tasks, with arguments we can invent."""
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        result = answer(await owner.ask("tools/list", {"cursor": cursor} if cursor else {}))
        if not isinstance(result, dict):
            return None
        for tool in result.get("tools") or ():
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                continue
            annotations, execution = tool.get("annotations"), tool.get("execution")
            support = execution.get("taskSupport") if isinstance(execution, dict) else None
            if (
                isinstance(annotations, dict)
                and annotations.get("readOnlyHint") is True
                and support in ("optional", "required")
            ):
                args = example_arguments(tool.get("inputSchema"))
                if args is not None:
                    return tool["name"], args
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str):
            return None
    return None


async def _task_binding(rec: Results, owner: _Caller, second: str | None, caller: _MakeCaller) -> None:
    check = "auth.task-binding"
    if second is None:
        rec.skip(check, "needs --auth-token-second")
        return
    if second == owner.token:
        rec.skip(check, "--auth-token-second is the valid token itself: one identity")
        return
    if is_stateless(owner.revision):
        rec.skip(check, "tasks moved to an extension in this revision")
        return
    if not _declared(owner.capabilities, "requests", "tools", "call"):
        rec.skip(check, "the server declares no task support for tools/call")
        return
    try:
        await _bound(rec, check, owner, caller(second, "second token"))
    except ProbeError as exc:
        rec.skip(check, f"the task walk broke: {owner.hide(str(exc))}")


async def _status(owner: _Caller, task_id: str) -> str | None:
    """The task's status as its owner reads it with ``tasks/get`` (``None``: not read)."""
    result = answer(await owner.ask("tasks/get", {"taskId": task_id}))
    status = result.get("status") if isinstance(result, dict) else None
    return status if isinstance(status, str) else None


async def _bound(rec: Results, check: str, owner: _Caller, other: _Caller) -> None:
    target = await _task_target(owner)
    if target is None:
        rec.skip(check, "no read-only tool allows tasks (execution.taskSupport optional or required)")
        return
    name, args = target
    created = answer(await owner.ask("tools/call", {"name": name, "arguments": args, "task": {"ttl": _TTL_MS}}))
    task = created.get("task") if isinstance(created, dict) else None
    task_id = task.get("taskId") if isinstance(task, dict) else None
    if not isinstance(task_id, str):
        rec.skip(check, f"calling {name} as a task gave no taskId")
        return
    mine = await owner.ask("tasks/get", {"taskId": task_id})
    if _refusal(mine) is not None:
        rec.skip(check, f"identity A could not read its own task either ({_refusal(mine)})")
        return
    opened = await other.open()
    if not 200 <= opened.status < 300:
        rec.skip(check, f"the second token was refused (HTTP {opened.status}): no second identity")
        return
    seen: list[str] = []
    refused = _refusal(await other.ask("tasks/get", {"taskId": task_id}))
    if refused is None:
        rec.fail(check, "identity B got identity A's task from tasks/get", other.evidence())
        return
    seen.append(f"tasks/get refused ({refused})")
    if _declared(other.capabilities, "cancel") and not await _cancel_refused(rec, check, owner, other, task_id, seen):
        return
    if _declared(other.capabilities, "list") and not await _listed(rec, check, other, task_id, seen):
        return
    if await _result_refused(rec, check, owner, other, task_id, seen):
        rec.ok(check, f"identity B, for identity A's task: {', '.join(seen)}")


async def _cancel_refused(
    rec: Results, check: str, owner: _Caller, other: _Caller, task_id: str, seen: list[str]
) -> bool:
    """False (and the check failed) when identity B's ``tasks/cancel`` of A's task took effect.

    Sent while the task is still running, before anything else ends it: a
    refusal of a task already terminal is what every server answers, bound or
    not, so it judges nothing; a refusal after which the task is ``cancelled``
    was no refusal.
    """
    before = await _status(owner, task_id)
    refused = _refusal(await other.ask("tasks/cancel", {"taskId": task_id}))
    if refused is None:
        rec.fail(check, "identity B cancelled identity A's task (tasks/cancel answered a result)", other.evidence())
        return False
    after = await _status(owner, task_id)
    if before is not None and before not in _TERMINAL and after == "cancelled":
        rec.fail(
            check,
            f"identity B's tasks/cancel was refused ({refused}), yet identity A's task is now cancelled",
            other.evidence() + owner.evidence(),
        )
        return False
    if before in _TERMINAL or after is None or after in _TERMINAL:
        # Ended (or unread) around the request: the refusal may be the one every terminal task gets.
        seen.append(f"tasks/cancel refused ({refused}; not judged: the task was {after or before or 'unread'})")
    else:
        seen.append(f"tasks/cancel refused ({refused}) while the task was {after}")
    return True


async def _result_refused(
    rec: Results, check: str, owner: _Caller, other: _Caller, task_id: str, seen: list[str]
) -> bool:
    """False (and the check failed) when identity B got, or was not refused, A's ``tasks/result``.

    Asked once the owner has its result: then the task is terminal and a
    server answers at once, so no answer is no refusal.  While the task still
    runs, a server that does not bind it may wait for the end before it
    answers, which cannot be told from a slow refusal: not judged.
    """
    try:
        await owner.ask("tasks/result", {"taskId": task_id})
        terminal = await _status(owner, task_id) in _TERMINAL
    except ProbeError:
        terminal = False
    try:
        resp = await other.ask("tasks/result", {"taskId": task_id})
    except ProbeError:
        if terminal:
            rec.fail(
                check,
                "identity B's tasks/result for identity A's terminal task got no answer, no refusal",
                other.evidence(),
            )
            return False
        seen.append("tasks/result no answer (not judged: the task had not ended)")
        return True
    refused = _refusal(resp)
    if refused is None:
        rec.fail(check, "identity B got identity A's task from tasks/result", other.evidence())
        return False
    seen.append(f"tasks/result refused ({refused})")
    return True


async def _listed(rec: Results, check: str, other: _Caller, task_id: str, seen: list[str]) -> bool:
    """False (and the check failed) when ``task_id`` is on a page of the other identity's ``tasks/list``."""
    cursor: str | None = None
    for page in range(1, _MAX_PAGES + 1):
        resp = await other.ask("tasks/list", {"cursor": cursor} if cursor else {})
        result = answer(resp)
        if not isinstance(result, dict):
            seen.append(f"tasks/list refused ({_refusal(resp)})")
            return True
        ids = [t.get("taskId") for t in result.get("tasks") or () if isinstance(t, dict)]
        if task_id in ids:
            rec.fail(check, f"identity A's task is on page {page} of identity B's tasks/list", other.evidence())
            return False
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str):
            seen.append(f"tasks/list without it ({page} page{'s' if page > 1 else ''})")
            return True
    seen.append(f"tasks/list without it (first {_MAX_PAGES} pages)")
    return True
