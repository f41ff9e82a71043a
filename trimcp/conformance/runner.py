"""Run the handshake-era checks against one server.

Theory of operation
-------------------
``run_checks`` opens the target through a ``Connector`` (an async context
manager factory yielding a ``MessageStream``: a subprocess for stdio targets,
an in-memory pipe in tests), wraps it in a ``RecordingStream`` and drives a
normal trimcp client session through a fixed tour: handshake, ping, every list
(all pages), every resource read, every prompt fetched, every tool marked
read-only called, plus negative probes (unknown method, unknown tool, unknown
resource, a capability the server did not advertise).  Each step records one
or more ``CheckResult``s; at the end the whole recorded conversation is
validated against the schema.  A check whose feature the server lacks is
reported as ``skip``, so the report always lists the whole catalog.

A probe that needs a pristine session (the unsupported-version handshake)
opens a second connection and speaks raw JSON-RPC, since the client
``Connection`` rightly refuses to offer a revision it does not know.
"""

from __future__ import annotations

import re
from contextlib import AbstractAsyncContextManager
from typing import Any, Callable

import trio

from .._errors import McpError, RemoteProtocolError, RequestTimeout, TrimcpError
from .._sansio import jsonrpc as rpc
from .._sansio import schema as s
from .._sansio.revisions import ALL_VERSIONS, LATEST_HANDSHAKE, has_capability, own_gate
from .._trio.client import ClientSession, open_client
from .._trio.stream import MessageStream
from .catalog import CATALOG
from .model import CheckResult, Report, Status
from .recorder import RecordingStream
from .validate import validate_conversation
from .values import example_arguments

Connector = Callable[[], AbstractAsyncContextManager[MessageStream]]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
_BOGUS_REVISION = "1999-01-01"


class _Recorder:
    def __init__(self) -> None:
        self.results: dict[str, CheckResult] = {}

    def put(self, check_id: str, status: Status, detail: str = "") -> None:
        spec = CATALOG[check_id]
        previous = self.results.get(check_id)
        # A check run several times keeps its worst outcome.
        if previous is not None and _rank(previous.status) >= _rank(status):
            return
        self.results[check_id] = CheckResult(check_id, spec.level, status, detail)

    def ok(self, check_id: str, detail: str = "") -> None:
        self.put(check_id, Status.PASS, detail)

    def fail(self, check_id: str, detail: str) -> None:
        self.put(check_id, Status.FAIL, detail)

    def warn(self, check_id: str, detail: str) -> None:
        self.put(check_id, Status.WARN, detail)

    def skip(self, check_id: str, detail: str) -> None:
        self.put(check_id, Status.SKIP, detail)


def _rank(status: Status) -> int:
    return {Status.SKIP: 0, Status.PASS: 1, Status.WARN: 2, Status.FAIL: 3}[status]


async def _sampling(params: s.CreateMessageRequestParams) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "trimcp check"}, "model": "trimcp-check"}


async def _elicitation(params: s.ElicitRequestParams) -> dict[str, Any]:
    return {"action": "decline"}


async def run_checks(
    connect: Connector,
    *,
    target: str,
    revision: str | None = None,
    connect_timeout: float = 30.0,
    request_timeout: float = 30.0,
) -> Report:
    report = Report(target=target)
    rec = _Recorder()
    recording: RecordingStream | None = None
    try:
        async with connect() as raw:
            recording = RecordingStream(raw)
            async with open_client(
                recording,
                # The catalog is handshake-era: don't let the dual-era probe pick 2026-07-28.
                revision=revision or LATEST_HANDSHAKE,
                connect_timeout=connect_timeout,
                request_timeout=request_timeout,
                sampling_handler=_sampling,
                elicitation_handler=_elicitation,
                roots=[],
            ) as client:
                report.revision = client.protocol_version
                report.server_info = client.server_info
                _check_handshake(rec, client, revision)
                await _tour(rec, client)
                _check_notifications(rec, recording, client.server_capabilities)
            if hasattr(raw, "returncode"):
                await _check_shutdown(rec, raw)
    except TrimcpError as exc:
        if report.revision is None:
            rec.fail("lifecycle.initialize", f"{type(exc).__name__}: {exc}")
            chosen = _offered_revision(recording)
            if chosen is not None and chosen not in ALL_VERSIONS:
                rec.fail("lifecycle.version", f"server chose {chosen!r}")
        else:
            rec.fail("jsonrpc.valid-messages", f"the session failed: {type(exc).__name__}: {exc}")
    if recording is not None:
        _check_conversation(rec, recording, stdio=hasattr(recording.inner, "stderr_tail"))
    if report.revision is not None:
        await _check_unsupported_version(rec, connect, connect_timeout)
    for check_id in CATALOG:
        if check_id not in rec.results:
            rec.skip(check_id, "not reached" if report.revision is None else "not applicable to this server")
    report.results = [rec.results[c] for c in CATALOG]
    return report


def _offered_revision(recording: RecordingStream | None) -> Any:
    """The protocolVersion of the server's initialize answer, if one arrived."""
    if recording is None:
        return None
    init_ids = {i for i, m in recording.sent_methods.items() if m == "initialize"}
    for data in recording.received:
        try:
            messages = rpc.parse_payload(data).messages
        except RemoteProtocolError:
            continue
        for msg in messages:
            if isinstance(msg, rpc.Response) and msg.id in init_ids:
                return msg.result.get("protocolVersion")
    return None


def _check_handshake(rec: _Recorder, client: ClientSession, pinned: str | None) -> None:
    rec.ok("lifecycle.initialize", f"revision {client.protocol_version}")
    if client.protocol_version in ALL_VERSIONS and (pinned is None or client.protocol_version == pinned):
        rec.ok("lifecycle.version", client.protocol_version)
    else:
        rec.fail("lifecycle.version", f"server chose {client.protocol_version!r}")
    info = client.server_info
    if isinstance(info.get("name"), str) and isinstance(info.get("version"), str):
        rec.ok("lifecycle.server-info", f"{info['name']} {info['version']}")
    else:
        rec.fail("lifecycle.server-info", f"serverInfo is {info!r}")


async def _tour(rec: _Recorder, client: ClientSession) -> None:
    caps = client.server_capabilities
    with trio.move_on_after(10) as scope:
        try:
            await client.ping()
            rec.ok("lifecycle.ping")
        except TrimcpError as exc:
            rec.fail("lifecycle.ping", str(exc))
    if scope.cancelled_caught:
        rec.fail("lifecycle.ping", "no answer within 10 s")
    await _probe_unknown_method(rec, client)
    await _probe_gating(rec, client, caps)
    if "tools" in caps:
        await _tools(rec, client)
    if "resources" in caps:
        await _resources(rec, client)
    if "prompts" in caps:
        await _prompts(rec, client, caps)
    if "logging" in caps:
        try:
            await client.set_logging_level("info")
            rec.ok("logging.set-level")
        except TrimcpError as exc:
            rec.fail("logging.set-level", str(exc))


async def _probe_unknown_method(rec: _Recorder, client: ClientSession) -> None:
    try:
        await client.request("trimcp/no-such-method", {})
        rec.fail("jsonrpc.unknown-method", "an unknown method got a result")
    except McpError as exc:
        if exc.code == rpc.METHOD_NOT_FOUND:
            rec.ok("jsonrpc.unknown-method")
        else:
            rec.fail("jsonrpc.unknown-method", f"answered with code {exc.code}, not -32601")
    except RequestTimeout:
        rec.fail("jsonrpc.unknown-method", "no answer")


async def _probe_gating(rec: _Recorder, client: ClientSession, caps: dict[str, Any]) -> None:
    absent = next((f for f in ("prompts", "resources", "tools") if f not in caps), None)
    if absent is None:
        rec.skip("capabilities.gating", "the server advertises tools, resources and prompts")
        return
    method = {"prompts": "prompts/list", "resources": "resources/list", "tools": "tools/list"}[absent]
    # Bypass the local gate on purpose: we are testing the server's side of it.
    conn = client.connection
    saved = conn.peer_capabilities
    conn.peer_capabilities = {**(saved or {}), absent: {}}
    try:
        await client.request(method, {})
        rec.warn("capabilities.gating", f"{method} answered although {absent} was not advertised")
    except McpError as exc:
        rec.ok("capabilities.gating", f"{method} refused with {exc.code}")
    except RequestTimeout:
        rec.fail("capabilities.gating", f"{method} got no answer")
    finally:
        conn.peer_capabilities = saved


async def _tools(rec: _Recorder, client: ClientSession) -> None:
    try:
        tools = await client.list_tools()
    except RemoteProtocolError as exc:
        rec.fail("pagination.cursors" if "cursor" in str(exc) else "tools.list", str(exc))
        return
    except TrimcpError as exc:
        rec.fail("tools.list", str(exc))
        return
    rec.ok("tools.list", f"{len(tools)} tools")
    rec.ok("pagination.cursors")
    names = [t.name for t in tools]
    dupes = sorted({n for n in names if names.count(n) > 1})
    (rec.warn("tools.unique-names", f"duplicates: {', '.join(dupes)}") if dupes else rec.ok("tools.unique-names"))
    bad_names = [n for n in names if not _TOOL_NAME.match(n)]
    if bad_names:
        rec.warn("tools.name-format", ", ".join(bad_names[:5]))
    else:
        rec.ok("tools.name-format")
    bad_schema = [t.name for t in tools if not (isinstance(t.input_schema, dict) and t.input_schema.get("type") == "object")]
    if bad_schema:
        rec.fail("tools.input-schema", f"not type object: {', '.join(bad_schema[:5])}")
    else:
        rec.ok("tools.input-schema")
    for tool in tools:
        if tool.annotations is not None and tool.annotations.read_only_hint:
            await _call_read_only(rec, client, tool)
    try:
        result = await client.call_tool("trimcp-no-such-tool-7d1f", {})
        if result.is_error:
            rec.ok("tools.unknown-tool", "isError result")
        else:
            rec.warn("tools.unknown-tool", "unknown tool returned a normal result")
    except McpError as exc:
        rec.ok("tools.unknown-tool", f"error {exc.code}")


async def _call_read_only(rec: _Recorder, client: ClientSession, tool: s.Tool) -> None:
    args = example_arguments(tool.input_schema)
    if args is None:
        rec.skip("tools.call-read-only", f"{tool.name}: cannot invent arguments for its schema")
        return
    try:
        result = await client.call_tool(tool.name, args)
    except McpError as exc:
        rec.fail("tools.call-read-only", f"{tool.name}: error {exc.code} {exc.message}")
        return
    except TrimcpError as exc:
        rec.fail("tools.call-read-only", f"{tool.name}: {exc}")
        return
    rec.ok("tools.call-read-only", f"called {tool.name}")
    if tool.output_schema is not None and not result.is_error:
        problem = _structured_problem(tool.output_schema, result.structured_content)
        if problem:
            rec.fail("tools.structured-output", f"{tool.name}: {problem}")
        else:
            rec.ok("tools.structured-output", tool.name)


def _structured_problem(schema: dict[str, Any], content: Any) -> str | None:
    if content is None:
        return "no structuredContent although an outputSchema is declared"
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - jsonschema is a dependency
        return None
    try:
        jsonschema.validate(content, schema)
    except jsonschema.ValidationError as exc:
        return f"structuredContent does not match outputSchema: {exc.message}"
    except jsonschema.SchemaError as exc:
        return f"outputSchema is not a valid JSON Schema: {exc.message}"
    return None


async def _resources(rec: _Recorder, client: ClientSession) -> None:
    try:
        resources = await client.list_resources()
        rec.ok("resources.list", f"{len(resources)} resources")
    except TrimcpError as exc:
        rec.fail("resources.list", str(exc))
        resources = []
    try:
        templates = await client.list_resource_templates()
        rec.ok("resources.templates", f"{len(templates)} templates")
    except McpError as exc:
        if exc.code == rpc.METHOD_NOT_FOUND:
            rec.warn("resources.templates", "templates/list not implemented (-32601)")
        else:
            rec.fail("resources.templates", str(exc))
    except TrimcpError as exc:
        rec.fail("resources.templates", str(exc))
    for resource in resources[:50]:
        try:
            result = await client.read_resource(resource.uri)
        except TrimcpError as exc:
            rec.fail("resources.read", f"{resource.uri}: {exc}")
            continue
        if not result.contents:
            rec.warn("resources.read", f"{resource.uri}: no contents")
        else:
            rec.ok("resources.read", f"read {min(len(resources), 50)} resources")
    try:
        await client.read_resource("trimcp-check://no/such/resource")
        rec.fail("resources.unknown", "an unknown URI was read successfully")
    except McpError as exc:
        if exc.code in (rpc.RESOURCE_NOT_FOUND_LEGACY, rpc.INVALID_PARAMS):
            rec.ok("resources.unknown", f"error {exc.code}")
        else:
            rec.warn("resources.unknown", f"error {exc.code}, the spec names -32002")


async def _prompts(rec: _Recorder, client: ClientSession, caps: dict[str, Any]) -> None:
    try:
        prompts = await client.list_prompts()
        rec.ok("prompts.list", f"{len(prompts)} prompts")
    except TrimcpError as exc:
        rec.fail("prompts.list", str(exc))
        return
    for prompt in prompts[:50]:
        required = [a.name for a in (prompt.arguments or []) if a.required]
        args = {name: await _suggest(client, caps, prompt.name, name) for name in required}
        try:
            result = await client.get_prompt(prompt.name, args or None)
            rec.ok("prompts.get", f"fetched {min(len(prompts), 50)} prompts")
            if not result.messages:
                rec.warn("prompts.get", f"{prompt.name}: no messages")
        except McpError as exc:
            # With invented arguments an error may be the server's right answer.
            (rec.warn if args else rec.fail)("prompts.get", f"{prompt.name} {args or ''}: {exc}")
        except TrimcpError as exc:
            rec.fail("prompts.get", f"{prompt.name}: {exc}")
    if "completions" in caps:
        target = next((p for p in prompts if p.arguments), None)
        if target is None or not target.arguments:
            rec.skip("completion.complete", "no prompt with arguments to complete")
            return
        try:
            done = await client.complete({"type": "ref/prompt", "name": target.name}, target.arguments[0].name, "")
            rec.ok("completion.complete", f"{len(done.completion.values)} values")
        except TrimcpError as exc:
            rec.fail("completion.complete", str(exc))


async def _suggest(client: ClientSession, caps: dict[str, Any], prompt: str, argument: str) -> str:
    """A plausible argument value: the server's own first completion, else "test"."""
    if "completions" in caps:
        try:
            done = await client.complete({"type": "ref/prompt", "name": prompt}, argument, "")
            if done.completion.values:
                return done.completion.values[0]
        except TrimcpError:
            pass
    return "test"


def _check_conversation(rec: _Recorder, recording: RecordingStream, *, stdio: bool) -> None:
    outcome = validate_conversation(recording.received, recording.sent_methods)
    if outcome.invalid_jsonrpc:
        rec.fail("jsonrpc.valid-messages", "; ".join(outcome.invalid_jsonrpc[:3]))
        if stdio:
            rec.fail("stdio.clean-stdout", f"{len(outcome.invalid_jsonrpc)} non-JSON-RPC lines on stdout")
    else:
        rec.ok("jsonrpc.valid-messages", f"{outcome.checked} messages")
        if stdio:
            rec.ok("stdio.clean-stdout")
    if outcome.unknown_ids or outcome.duplicate_ids:
        rec.fail("jsonrpc.ids", "; ".join((outcome.unknown_ids + outcome.duplicate_ids)[:3]))
    else:
        rec.ok("jsonrpc.ids")
    if outcome.schema_errors:
        rec.fail("schema.messages", "; ".join(outcome.schema_errors[:3]))
    else:
        rec.ok("schema.messages", f"{outcome.checked} messages")


def _check_notifications(rec: _Recorder, recording: RecordingStream, caps: dict[str, Any]) -> None:
    undeclared: dict[str, str] = {}
    for data in recording.received:
        for msg in rpc.parse_payload(data).messages:
            if isinstance(msg, rpc.Notification):
                gate = own_gate(msg.method)
                if gate is not None and not has_capability(caps, gate):
                    undeclared[msg.method] = ".".join(gate)
    if undeclared:
        rec.fail("capabilities.notifications", "; ".join(f"{m} without {g}" for m, g in undeclared.items()))
    else:
        rec.ok("capabilities.notifications")


async def _check_shutdown(rec: _Recorder, stream: Any) -> None:
    signals = getattr(stream, "signals_sent", None)
    if signals:
        rec.warn("stdio.shutdown", f"needed {', '.join(signals)} after stdin closed")
    else:
        rec.ok("stdio.shutdown", f"exit status {stream.returncode}")


async def _check_unsupported_version(rec: _Recorder, connect: Connector, timeout: float) -> None:
    request = rpc.Request(0, "initialize", {
        "protocolVersion": _BOGUS_REVISION, "capabilities": {},
        "clientInfo": {"name": "trimcp-check", "version": "0"},
    })
    try:
        with trio.fail_after(timeout):
            async with connect() as stream:
                await stream.send(request)
                answer = await _first_answer(stream)
    except (TrimcpError, trio.TooSlowError) as exc:
        rec.fail("lifecycle.unsupported-version", f"no answer: {type(exc).__name__} {exc}")
        return
    if isinstance(answer, rpc.Response):
        chosen = answer.result.get("protocolVersion")
        if chosen in ALL_VERSIONS:
            rec.ok("lifecycle.unsupported-version", f"offered {_BOGUS_REVISION}, got {chosen}")
        else:
            rec.fail("lifecycle.unsupported-version", f"offered {_BOGUS_REVISION}, got {chosen!r}")
    else:
        rec.fail("lifecycle.unsupported-version", f"answered with an error: {answer.error.message}")


async def _first_answer(stream: MessageStream) -> rpc.Response | rpc.ErrorResponse:
    while True:
        parsed = rpc.parse_payload(await stream.receive())
        for msg in parsed.messages:
            if isinstance(msg, (rpc.Response, rpc.ErrorResponse)) and msg.id == 0:
                return msg

