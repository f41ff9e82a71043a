"""Replaying a recorded ``spec/`` transcript through fresh sans-IO Connections.

Theory of operation
-------------------
A transcript (spec/README.md, ``trimcp/conformance/transcript.py``) is the list
of JSON texts that crossed one transport, each ``send`` (client to server) or
``recv`` (server to client).  ``ClientReplay`` plays the client: every ``send``
is made again through the client Connection's own API (``initialize``,
``discover``, ``send_request``, ``cancel``, ``send_response``, ...) and what
the Connection emits is compared with what was recorded, modulo the one field
the Connection chooses itself - a request's ``id`` (the recorded ids are mapped
to the ones it picks).  Messages the Connection sends by itself (the
``notifications/initialized`` after the InitializeResult, ping answers,
refusals) must be the next recorded sends.  Every ``recv`` is fed in and must
give exactly the one event its kind implies (spec: basic/lifecycle, the answer
matched to its request), nothing else, and pass the checks a client makes of
what it is handed: the revision's schema for results, notifications and
requests (schema.json of the revision), and the capability rules (spec:
lifecycle, Capability Negotiation) - a notification whose capability the
server did not declare, a request for one the client did not declare.

``ServerReplay`` swaps the roles: the client's messages are fed to a server
Connection, which must take each as the event its kind implies; the server's
recorded messages are produced through the server API (``send_response`` with
the recorded result, ``send_error``, ``send_notification``, ``send_progress``),
and where the recorded server is trimcp's own what the Connection emits -
automatic answers such as the InitializeResult included - must equal the
recording as JSON.

``step(index)`` returns the problems one entry shows (empty when it is fine),
so a mutation test can ask where the first problem appears.

Two things a recording may show that are not trimcp's to fail:

- a defect of the recorded peer that the Connection tolerates by design (say
  a notifications/message from a server that did not declare ``logging``:
  notifications are taken in any state).  The caller names each one as
  ``excused={entry index: words of the problem}``; only a problem containing
  those words at that entry is dropped, and ``excused_seen`` tells which were
  met, so the caller can fail a stale excuse;
- progress that arrives after the client cancelled its request (spec:
  basic/utilities/cancellation - the notifications may cross; the client
  reports ``unknown-progress-token`` and drops it).  Accepted only for a token
  of a request whose cancellation the recording sent before, and still
  checked against the schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trimcp import Connection, Role
from trimcp import schema as s
from trimcp._errors import LocalProtocolError
from trimcp._sansio import events as ev
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection import stateless as sl
from trimcp._sansio.revisions import (
    REVISIONS,
    Era,
    get_revision,
    has_capability,
    own_gate,
    peer_gate,
)

Entry = tuple[str, Any]  # ("send" | "recv", a JSON-RPC object, a batch list, or None for a raw text)

#: Servers whose answers a server Connection of ours must reproduce byte for byte.
TRIMCP_SERVERS = frozenset({"trimcp-reference"})


def load(path: Path) -> list[Entry]:
    out: list[Entry] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            assert entry["dir"] in ("send", "recv"), entry
            out.append((entry["dir"], entry.get("message")))
    return out


def opening(entries: list[Entry]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first client request (initialize / server/discover) and its result."""
    first = next(m for d, m in entries if d == "send" and isinstance(m, dict) and "id" in m)
    answer = next((m for d, m in entries if d == "recv" and isinstance(m, dict) and m.get("id") == first["id"]), None)
    result = answer.get("result") if isinstance(answer, dict) else None
    return first, result if isinstance(result, dict) else {}


def revision_of(entries: list[Entry], default: str) -> str:
    first, result = opening(entries)
    if first.get("method") == "initialize":
        version = result.get("protocolVersion")
    else:
        version = sl.envelope_version(first.get("params"))
    return version if isinstance(version, str) else default


def server_name(entries: list[Entry]) -> str | None:
    _, result = opening(entries)
    info = result.get("serverInfo")
    if not isinstance(info, dict):
        meta = result.get("_meta")
        info = meta.get(sl.SERVER_INFO_KEY) if isinstance(meta, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else None


def _wire(msg: rpc.Message) -> dict[str, Any]:
    return json.loads(rpc.serialize(msg))  # type: ignore[no-any-return]


def _one(obj: Any) -> rpc.Message:
    parsed = rpc.parse_payload(json.dumps(obj))
    assert not parsed.invalid and len(parsed.messages) == 1, (obj, parsed.invalid)
    return parsed.messages[0]


def _strip_envelope(params: dict[str, Any] | None) -> tuple[dict[str, Any] | None, str | int | None]:
    """Params as a caller hands them to ``send_request``: without the envelope the
    Connection adds and without the progress token it adds from ``progress_token``."""
    if not params or not isinstance(params.get("_meta"), dict):
        return params, None
    meta = {k: v for k, v in params["_meta"].items() if k not in sl.ENVELOPE_KEYS}
    token = meta.pop("progressToken", None)
    out = {k: v for k, v in params.items() if k != "_meta"}
    if meta:
        out["_meta"] = meta
    return (out if out or "_meta" in params else None), token


def _schema_problem(kind: str, method: str, payload: Any, revision: str, params: Any = None) -> str | None:
    try:
        if kind == "result":
            if method in s.REQUEST_TYPES:
                s.parse_result(method, payload, params, revision)
        elif kind == "notification":
            cls = s.NOTIFICATION_TYPES.get(method)
            if cls is not None:
                s.from_wire(cls, payload)
        elif method in s.REQUEST_TYPES and method != "ping":
            s.from_wire(s.REQUEST_TYPES[method][0], payload)
    except s.SchemaError as exc:
        return f"schema: {method} {kind}: {exc}"
    return None


class ClientReplay:
    """The recorded client, played again by a fresh client Connection."""

    def __init__(self, entries: list[Entry], revision: str, excused: Mapping[int, str] | None = None) -> None:
        self.entries = entries
        self.revision = revision
        self.excused = dict(excused or {})
        self.excused_seen: set[int] = set()  # the excused entries whose problem did show
        first, _ = opening(entries)
        params = first.get("params") or {}
        self.stateless = get_revision(revision).era is Era.STATELESS
        if self.stateless:
            meta = params.get("_meta") or {}
            info = meta.get(sl.CLIENT_INFO_KEY) or {}
            caps = meta.get(sl.CLIENT_CAPABILITIES_KEY) or {}
        else:
            info, caps = params.get("clientInfo") or {}, params.get("capabilities") or {}
        self.conn = Connection(Role.CLIENT, info=info, capabilities=caps, supported_versions=[revision])
        self.ids: dict[Any, rpc.RequestId] = {}  # recorded id of our request -> the Connection's
        self.methods: dict[Any, str] = {}  # recorded id -> method (for schema checks)
        self.params: dict[Any, Any] = {}
        self.auto: list[dict[str, Any]] = []  # what the Connection sent by itself, not yet recorded
        self.cancelled: set[Any] = set()
        self.tokens: dict[Any, Any] = {}  # progress token -> recorded id of the request it rode on
        self.events: list[ev.Event] = []

    # ---------------------------------------------------------------- sending

    def _send(self, obj: dict[str, Any]) -> list[str]:
        if self.auto and self.auto[0] == obj:
            self.auto.pop(0)  # the Connection had already sent it by itself
            return []
        problems = [f"the Connection sent {m} by itself, not recorded" for m in self.auto]
        self.auto = []
        conn, msg = self.conn, _one(obj)
        expected = obj
        try:
            if isinstance(msg, rpc.Request):
                new = self._request(msg)
                self.ids[msg.id] = new
                _, token = _strip_envelope(msg.params)
                if token is not None:
                    self.tokens[token] = msg.id
                self.methods[msg.id], self.params[msg.id] = msg.method, msg.params
                expected = {**obj, "id": new}
            elif isinstance(msg, rpc.Notification):
                p = msg.params or {}
                if msg.method == "notifications/cancelled":
                    conn.cancel(self.ids[p["requestId"]], p.get("reason"))
                    self.cancelled.add(p["requestId"])
                    expected = {**obj, "params": {**p, "requestId": self.ids[p["requestId"]]}}
                elif msg.method == "notifications/progress":
                    conn.send_progress(p["progressToken"], p["progress"], p.get("total"), p.get("message"))
                else:
                    conn.send_notification(msg.method, msg.params)
            elif isinstance(msg, rpc.Response):
                conn.send_response(msg.id, msg.result)
            else:
                assert isinstance(msg, rpc.ErrorResponse) and msg.id is not None
                conn.send_error(msg.id, msg.error.code, msg.error.message, msg.error.data)
        except (LocalProtocolError, KeyError) as exc:
            return [*problems, f"the Connection refused to send {obj}: {exc!r}"]
        out = [_wire(m) for m in conn.outgoing()]
        if out != [expected]:
            problems.append(f"sent {out}, recorded {[expected]}")
        return problems

    def _request(self, msg: rpc.Request) -> rpc.RequestId:
        conn = self.conn
        if msg.method == "initialize":
            assert msg.params is not None
            return conn.initialize(protocol_version=msg.params.get("protocolVersion"))
        if msg.method == "server/discover":
            return conn.discover(protocol_version=sl.envelope_version(msg.params))
        meta = (msg.params or {}).get("_meta")
        if self.stateless and isinstance(meta, dict):
            # The caller's part of the envelope: capabilities and log level it set.
            conn.capabilities = meta.get(sl.CLIENT_CAPABILITIES_KEY, conn.capabilities)
            conn.request_log_level = meta.get(sl.LOG_LEVEL_KEY)
        params, token = _strip_envelope(msg.params)
        return conn.send_request(msg.method, params, progress_token=token)

    # ---------------------------------------------------------------- receiving

    def _recv(self, obj: Any) -> list[str]:
        conn = self.conn
        if obj is None:
            return ["a received text that is not JSON"]
        expected: type | None = None
        method = None
        problems: list[str] = []
        if isinstance(obj, dict) and ("result" in obj or "error" in obj) and "method" not in obj:
            rid = obj.get("id")
            if rid in self.ids and rid not in self.cancelled:
                method = self.methods[rid]
                obj = {**obj, "id": self.ids[rid]}
                if "error" in obj:
                    expected = ev.ErrorReceived
                elif method == "initialize":
                    expected = ev.Initialized
                elif method == "server/discover":
                    expected = ev.Discovered
                elif obj["result"].get("resultType") == s.ResultType.INPUT_REQUIRED:
                    expected = ev.InputRequired
                else:
                    expected = ev.ResponseReceived
            elif rid in self.cancelled:
                obj = {**obj, "id": self.ids[rid]}  # a late answer: dropped, no event
            elif rid is not None:
                # Not an id the recording sent: keep it unknown to the Connection too.
                obj = {**obj, "id": f"never-sent:{rid!r}"}
        events = conn.receive_bytes(json.dumps(obj))
        self.events += events
        self.auto += [_wire(m) for m in conn.outgoing()]
        bad = [e for e in events if isinstance(e, (ev.ProtocolIssue, ev.HandshakeFailed, ev.InvalidAnswer))]
        if bad and self._late_progress(obj, events):
            late = obj.get("params") if isinstance(obj, dict) else None
            return [p for p in [_schema_problem("notification", "notifications/progress", late, self.revision)] if p]
        problems += [f"the Connection reported {e!r}" for e in bad]
        if bad:
            return problems
        if isinstance(obj, dict) and "method" in obj:
            m = obj["method"]
            if "id" in obj:
                expected = None if m == "ping" else ev.RequestReceived
            elif m == "notifications/progress":
                expected = ev.ProgressReceived
            elif m == "notifications/cancelled":
                expected = ev.CancelRequested if events else None
            else:
                expected = ev.NotificationReceived
        kinds = [type(e) for e in events]
        if isinstance(obj, dict) and kinds != ([expected] if expected else []):
            problems.append(f"events {kinds}, expected {[expected] if expected else []} for {obj}")
        for e in events:
            problems += self._judge(e)
        return problems

    def _late_progress(self, obj: Any, events: list[ev.Event]) -> bool:
        """Progress whose request the recording had cancelled before it arrived."""
        if not (isinstance(obj, dict) and obj.get("method") == "notifications/progress" and "id" not in obj):
            return False
        params = obj.get("params")
        token = params.get("progressToken") if isinstance(params, dict) else None
        if not isinstance(token, (str, int)) or isinstance(token, bool) or token not in self.tokens:
            return False
        return self.tokens[token] in self.cancelled and all(
            isinstance(e, ev.ProtocolIssue) and e.kind == "unknown-progress-token" for e in events
        )

    def _judge(self, e: ev.Event) -> list[str]:
        """What a client checks beyond the Connection: schema and capabilities."""
        rev, found = self.revision, None
        if isinstance(e, ev.ResponseReceived):
            params = next((p for k, p in self.params.items() if self.ids[k] == e.id), None)
            found = _schema_problem("result", e.method, e.result, rev, params)
        elif isinstance(e, ev.Initialized):
            init = next(m for d, m in self.entries if d == "recv" and isinstance(m, dict) and "result" in m)
            found = _schema_problem("result", "initialize", init["result"], rev)
        elif isinstance(e, ev.NotificationReceived):
            found = _schema_problem("notification", e.method, e.params, rev)
            gate = own_gate(e.method)
            if found is None and gate is not None and not has_capability(self.conn.peer_capabilities, gate):
                found = f"{e.method} but the server did not declare {'.'.join(gate)}"
        elif isinstance(e, ev.RequestReceived):
            found = _schema_problem("request", e.method, e.params, rev)
            gate = peer_gate(e.method, get_revision(rev))
            if found is None and gate is not None and not has_capability(self.conn.capabilities, gate):
                found = f"{e.method} but the client did not declare {'.'.join(gate)}"
        return [found] if found else []

    def step(self, index: int) -> list[str]:
        direction, obj = self.entries[index]
        if direction == "send":
            if isinstance(obj, list):
                problems = [p for member in obj for p in self._send(member)]
            else:
                problems = self._send(obj)
        else:
            problems = self._recv(obj)
        rule = self.excused.get(index)
        if rule is not None:
            kept = [p for p in problems if rule not in p]
            if len(kept) < len(problems):
                self.excused_seen.add(index)
            problems = kept
        return problems

    def finish(self) -> list[str]:
        problems = [f"the Connection sent {m} by itself, not recorded" for m in self.auto]
        unanswered = [k for k, v in self.ids.items() if v in self.conn.pending]
        if unanswered:
            problems.append(f"requests never answered: {unanswered}")
        return problems


def first_problem(replay: ClientReplay | ServerReplay) -> tuple[int, list[str]] | None:
    for index in range(len(replay.entries)):
        problems = replay.step(index)
        if problems:
            return index, problems
    return None


class ServerReplay:
    """The same transcript with the roles swapped: a fresh server Connection takes the
    client's messages and says the server's through its API."""

    def __init__(self, entries: list[Entry], revision: str) -> None:
        self.entries = entries
        self.revision = revision
        _, result = opening(entries)
        self.trimcp = server_name(entries) in TRIMCP_SERVERS
        self.stateless = get_revision(revision).era is Era.STATELESS
        meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
        info = result.get("serverInfo") or meta.get(sl.SERVER_INFO_KEY) or {}
        # A DiscoverResult lists every revision the server speaks; the Connection must too.
        versions = [v for v in result.get("supportedVersions") or [] if v in REVISIONS] or [revision]
        self.conn = Connection(
            Role.SERVER,
            info=info,
            capabilities=result.get("capabilities") or {},
            supported_versions=versions,
            instructions=result.get("instructions"),
        )
        if self.stateless and "ttlMs" in result:
            self.conn.discover_ttl_ms = result["ttlMs"]
        self.auto: list[dict[str, Any]] = []
        self.ids: dict[Any, rpc.RequestId] = {}  # recorded id of a server request -> the Connection's

    def _client_message(self, obj: Any) -> list[str]:
        conn = self.conn
        if obj is None:
            return ["a sent text that is not JSON"]
        rid = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(obj, dict) and "method" not in obj and rid in self.ids:
            obj = {**obj, "id": self.ids[rid]}
        events = conn.receive_bytes(json.dumps(obj))
        self.auto += [_wire(m) for m in conn.outgoing()]
        problems = [
            f"the server Connection reported {e!r}"
            for e in events
            if isinstance(e, (ev.ProtocolIssue, ev.HandshakeFailed))
        ]
        if problems or isinstance(obj, list):
            return problems
        method = obj.get("method")
        expected: type | None
        if method is None:
            expected = ev.ErrorReceived if "error" in obj else ev.ResponseReceived
        elif "id" in obj:
            auto = method in ("initialize", "ping", "server/discover")
            expected = ev.LogLevelChanged if method == "logging/setLevel" else None if auto else ev.RequestReceived
        elif method == "notifications/initialized":
            expected = ev.Initialized
        elif method == "notifications/cancelled":
            expected = ev.CancelRequested if events else None  # (cancelling an answered request: nothing)
        else:
            expected = ev.NotificationReceived
        kinds = [type(e) for e in events]
        if kinds != ([expected] if expected else []):
            problems.append(f"events {kinds}, expected {expected} for {obj}")
        return problems

    def _server_message(self, obj: Any) -> list[str]:
        if obj is None or isinstance(obj, list):
            return []
        if self.auto:
            got = self.auto.pop(0)
            if self.trimcp and got != obj:
                return [f"the server Connection answered {got}, recorded {obj}"]
            return []
        conn, msg = self.conn, _one(obj)
        expected = obj
        try:
            if isinstance(msg, rpc.Response):
                if not conn.awaiting_answer(msg.id):
                    return []  # (an answer to a request the client cancelled)
                conn.send_response(msg.id, msg.result)
            elif isinstance(msg, rpc.ErrorResponse):
                if msg.id is None or not conn.awaiting_answer(msg.id):
                    return []
                conn.send_error(msg.id, msg.error.code, msg.error.message, msg.error.data)
            elif isinstance(msg, rpc.Notification):
                p = msg.params or {}
                if msg.method == "notifications/progress":
                    conn.send_progress(p["progressToken"], p["progress"], p.get("total"), p.get("message"))
                else:
                    conn.send_notification(msg.method, msg.params)
            else:
                new = conn.send_request(msg.method, msg.params)
                self.ids[msg.id] = new
                expected = {**obj, "id": new}
        except LocalProtocolError as exc:
            return [f"the server Connection refused to send {obj}: {exc!r}"] if self.trimcp else []
        out = [_wire(m) for m in conn.outgoing()]
        if self.trimcp and out != [expected]:
            return [f"the server Connection sent {out}, recorded {[expected]}"]
        return []

    def step(self, index: int) -> list[str]:
        direction, obj = self.entries[index]
        return self._client_message(obj) if direction == "send" else self._server_message(obj)
