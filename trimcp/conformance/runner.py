"""Run every check of the catalog against one server, under the rules of the negotiated revision.

Theory of operation
-------------------
``run_checks`` opens the target through a ``Connector`` (an async context
manager factory yielding a ``MessageStream``: a subprocess for stdio targets,
an in-memory pipe in tests), wraps it in a ``RecordingStream`` and opens a
normal trimcp client session on it.  With no ``revision`` the client is
dual-era: it probes with ``server/discover`` and falls back to
``initialize``, exactly as a real client would, so the report says which era
and revision the server ended up speaking.  A pinned revision is offered
alone (a stateless one: discover with no fallback; a handshake one:
``initialize`` only).

The tour then depends on the era:

* handshake (``checks/handshake.py``): the InitializeResult, ``ping``,
  ``logging/setLevel``;
* stateless (``checks/stateless.py``): the DiscoverResult, a logging call
  with a ``logLevel``, a ``subscriptions/listen`` stream;

and in both the feature tour (``checks/features.py``): every list, read and prompt,
the tools the calling policy allows (``checks/tool_calls.py``: ``call_tools``,
``probe_tools``, ``open_world``), the negative probes a correct client may send too.
Afterwards the whole recorded conversation is validated with the negotiated
revision's schema tables, the stateless rules that are properties of every
message (``resultType``, cache hints, the fate of every InputRequiredResult,
stray log messages) are read off it, and the raw probes run on fresh
connections: ``checks/probes.py`` (a method of an unadvertised capability,
unknown revision, missing envelope, tampered ``requestState``; at 2025-11-25
the tasks walk, ``checks/tasks.py``), ``checks/feature_probes.py`` (invalid
cursors, unknown prompts, wrong arguments) and ``checks/negative.py`` (invalid
JSON, invalid requests, stray cancellations, a cancellation in flight).  What
the probe connections received is judged like the main conversation (JSON-RPC,
schema, capabilities, error codes, progress, ``_meta``).  For an ``http(s)://``
target, last come the authorization checks (``checks/auth*.py``: what the server
shows a client without credentials, or with a forged token) and the transport
checks (``checks/http*.py``, ``checks/sse_legacy.py``: status codes, headers,
sessions, streams, Origin and Host) as raw HTTP exchanges, carrying the OAuth
``Authorization`` when the run was authorized.  A ``selection`` (``--only`` /
``--skip``) leaves out each probe group none of whose checks it selects.

Every catalog check ends up in the report: a check the negotiated revision
does not have is ``skip`` "not in <revision>", one whose feature the server
lacks ``skip`` with the reason, one a probe's time limit cut short ``skip``
"not reached: timed out after N s" (``results.timed``), never "not
applicable".  A target that could not be started or
reached, or that closed the transport before sending a byte, gets no report:
``TargetUnreachable`` (a ``ConnectError``, which the CLI turns into exit 4)
says why in one line.  A server that is there but silent still gets its
report, with a failed handshake and, having sent nothing, nothing passed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._errors import ConnectError, ConnectTimeout, RequestTimeout, TransportClosed, TrimcpError
from .._sansio import apps
from .._sansio import jsonrpc as rpc
from .._sansio import schema as s
from .._sansio.extensions import UI
from .._sansio.revisions import (
    ALL_VERSIONS,
    HANDSHAKE_VERSIONS,
    Era,
    get_revision,
    has_capability,
    own_gate,
)
from .._trio.client import open_client
from .._trio.client.options import Handlers, Timeouts
from .checks.apps import check_apps
from .checks.auth import check_auth, probe_unauthenticated, skip_auth
from .checks.auth_binding import AuthTokens
from .checks.base_rules import check_base_rules
from .checks.contract26 import check_capability_errors, probe_partial_envelope
from .checks.ext_tasks import check_ext_tasks
from .checks.feature_probes import probe_features
from .checks.features import feature_tour
from .checks.handshake import check_handshake, check_version_same, handshake_tour, offered_revision
from .checks.http import check_http_transport, is_http_target, skip_http
from .checks.http_stateless import check_http26
from .checks.meta import check_meta_keys
from .checks.negative import check_error_codes, probe_negative
from .checks.probes import (
    CANNED_INPUT,
    RETRY_VARIANTS,
    probe_gating,
    probe_handshake_version,
    probe_input_requests,
    probe_missing_envelope,
)
from .checks.progress import cancel_target, check_progress
from .checks.progress_rules import (
    check_init_first,
    check_input_request_keys,
    check_request_ids_in_flight,
    check_server_progress_tokens,
    check_task_cancellations,
)
from .checks.sampling_balance import ToolUseSampler
from .checks.sent_by_server import (
    check_server_cancellations,
    check_server_request_ids,
    check_subscription_ids,
)
from .checks.sent_schemas import judge_schemas
from .checks.server_requests import judge_probe_sessions, probe_narrow_session
from .checks.stateless import (
    check_discover,
    check_input_request_kinds,
    check_stateless_conversation,
    input_target,
    stateless_tour,
)
from .checks.stdio import check_shutdown, check_stdio_lines, settle
from .checks.tasks import check_tasks
from .checks.tool_calls import CallTools, ToolPolicy
from .checks.version_probes import probe_stateless_version
from .checks.versions import ServerVersions, connector_initialize
from .connectors import transport_of
from .http_evidence import annotate
from .model import CheckResult, Report
from .prespawn import ahead
from .rawhttp import ProbeError, RawClient, RawResponse
from .recorder import HttpCapture, RecordingStream, recording_connector
from .results import Connector, Results, Tour, timed
from .selection import Selection
from .timeouts import collect_timeouts, timed_out_after
from .validate import ValidationOutcome, validate_conversation

if TYPE_CHECKING:
    from .._trio.oauth.provider import OAuthProvider

__all__ = ["Connector", "TargetUnreachable", "run_checks"]

#: The checks the negative probe connection decides (``checks/negative.py``).
NEGATIVE_PROBE_CHECKS = (
    "cancellation.honoured",
    "cancellation.ignored",
    "jsonrpc.ids",
    "jsonrpc.invalid-params",
    "jsonrpc.invalid-request",
    "jsonrpc.notification-no-response",
    "jsonrpc.parse-error",
    "lifecycle.before-initialize",
)
#: The checks the feature probe connection decides (``checks/feature_probes.py``).
FEATURE_PROBE_CHECKS = (
    "completion.invalid-ref",
    "features.declared",
    "features.stable-lists",
    "logging.invalid-level",
    "pagination.invalid-cursor",
    "prompts.missing-argument",
    "prompts.unknown-name",
    "resources.invalid-uri",
    "tools.call-without-name",
    "tools.input-validation",
)


class TargetUnreachable(ConnectError):
    """The target could not be started or reached, or it died before saying anything.

    Nothing was tested, so ``run_checks`` raises this instead of reporting a table of
    skips; the message is one line, ending with the last line the server wrote on stderr."""


async def _elicitation(params: s.ElicitRequestParams) -> dict[str, Any]:
    return CANNED_INPUT["elicitation/create"]


async def run_checks(
    connect: Connector,
    *,
    target: str,
    revision: str | None = None,
    connect_timeout: float = 30.0,
    request_timeout: float = 30.0,
    auth: OAuthProvider | None = None,
    unauthorized: RawResponse | None = None,
    selection: Selection | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    call_tools: CallTools = "read-only",
    probe_tools: int = 1,
    open_world: bool = True,
    auth_tokens: AuthTokens | None = None,
) -> Report:
    """Test the server ``connect`` reaches; ``revision=None`` lets the client negotiate.

    A ``target`` that is an ``http(s)://`` URL also gets the Streamable HTTP
    transport checks (``checks/http.py``), sent straight to that URL, and the
    authorization checks (``checks/auth.py``) on ``unauthorized``, the answer
    to a request without credentials (probed here when not given).  ``auth``
    is the ``OAuthProvider`` the connector uses: its ``Authorization`` goes on
    the raw transport requests too.  ``selection`` (``--only`` / ``--skip``) reports the
    checks it leaves out as ``skip`` "not selected" and skips each probe group none of
    whose checks it selects; ``on_result`` sees every outcome as it arrives.
    ``call_tools`` (``none``, ``read-only``, ``all``), ``open_world`` and ``probe_tools``
    are the tool-calling policy (``checks/tool_calls.py``).  ``auth_tokens`` are the tokens
    the user handed over (``checks/auth_binding.py``); without ``auth``, their valid one is the
    run's ``Authorization`` on the raw requests."""
    if revision is not None:
        get_revision(revision)  # ValueError for a revision nobody knows
    with collect_timeouts():
        async with ahead(connect) as connect:
            return await _run_checks(
                connect,
                target=target,
                revision=revision,
                connect_timeout=connect_timeout,
                request_timeout=request_timeout,
                auth=auth,
                unauthorized=unauthorized,
                selection=selection,
                on_result=on_result,
                policy=ToolPolicy(call_tools, probe_tools, open_world),
                auth_tokens=auth_tokens,
            )


async def _run_checks(
    connect: Connector,
    *,
    target: str,
    revision: str | None,
    connect_timeout: float,
    request_timeout: float,
    auth: OAuthProvider | None,
    unauthorized: RawResponse | None,
    selection: Selection | None,
    on_result: Callable[[CheckResult], None] | None,
    policy: ToolPolicy,
    auth_tokens: AuthTokens | None,
) -> Report:
    report = Report(target=target)
    rec = Results(selection=selection, on_result=on_result)
    recording: RecordingStream | None = None
    tour: Tour | None = None
    versions: ServerVersions | None = None
    cut_short: float | None = None
    try:
        async with connect() as raw:
            recording = RecordingStream(raw, capture=_http_capture(raw))
            async with open_client(
                recording,
                revision=revision,
                timeouts=Timeouts(
                    connect=connect_timeout,
                    request=request_timeout,
                    # A server still starting (a loaded CI machine) must not be mistaken for a
                    # handshake-only one: the harness waits longer for server/discover than a host.
                    probe=max(5.0, connect_timeout / 2),
                ),
                # Sampling with tools and URL elicitation are declared so that a server using them
                # shows how (checks/server_requests.py, checks/sampling_balance.py); the harness
                # only answers, it never asks for either.
                handlers=Handlers(
                    sampling=ToolUseSampler(),
                    sampling_tools=True,
                    elicitation=_elicitation,
                    elicitation_modes=("form", "url"),
                    roots=[],
                ),
                # MCP Apps is opt-in: declared so that a server linking views only for
                # clients that asked links them here (checks/apps.py).
                extensions=apps.client_extension(),
            ) as client:
                report.revision = rec.revision = client.protocol_version
                report.era = client.era.value
                report.server_info = client.server_info
                report.transport = transport_of(raw)
                rec.ok("lifecycle.connect", "the first request got a JSON-RPC answer")
                tour = Tour(rec, client, recording, connect, client.protocol_version, request_timeout)
                # Every probe connection is recorded: the run-wide checks read what it received.
                tour.connect = recording_connector(connect, tour.probe_recordings)
                # What the server implements is probed (once, on demand), not read off one field.
                versions = ServerVersions.of(
                    client.supported_versions or (),
                    client.protocol_version,
                    connector_initialize(tour.connect, connect_timeout),
                )
                try:
                    await _tour(tour, revision, policy)
                except RequestTimeout as exc:
                    # A step of the tour ran out of --timeout; the session lives on and the probes
                    # still run: what is left unjudged at the end was not reached, not inapplicable.
                    cut_short = timed_out_after(exc) or request_timeout
                if hasattr(raw, "returncode"):
                    await settle(recording)
            if hasattr(raw, "returncode"):
                check_shutdown(rec, recording)
    except TrimcpError as exc:
        if report.revision is None and _unreachable(exc, recording):
            raise TargetUnreachable(_one_line(exc, recording)) from exc
        if report.revision is None and (hint := _host_refused(exc, target)):
            raise TargetUnreachable(hint) from exc
        if report.revision is None:
            _connect_failed(rec, exc, revision, recording)
        else:
            rec.fail("jsonrpc.valid-messages", f"the session failed: {type(exc).__name__}: {exc}")
    if recording is not None:
        report.conversation = recording.transcript()
        if recording.capture is not None:
            report.conversation = annotate(
                report.conversation, recording.http_tags, recording.capture, report.transport
            )
        stdio = hasattr(recording.inner, "stderr_tail")
        outcome = _check_conversation(rec, recording, report.revision, stdio=stdio)
        if stdio:
            check_stdio_lines(rec, recording, report.era == Era.STATELESS.value)
        if tour is not None:
            _check_notifications(rec, recording, tour.client.server_capabilities)
            # The schemas and structured results of every list and call of the session, even
            # one a server ended half-way (sends nothing).
            await judge_schemas(tour)
            if report.era == Era.STATELESS.value:
                check_stateless_conversation(tour, outcome.server_requests)
    if tour is not None:
        assert versions is not None
        await _probes(tour, connect_timeout, policy, versions)
        if rec.wants(*FEATURE_PROBE_CHECKS):
            with timed(rec, *FEATURE_PROBE_CHECKS):
                await probe_features(tour, policy.probe_targets(tour.tools), connect_timeout)
        if rec.wants("features.server-requests"):
            with timed(rec, "features.server-requests"):
                await probe_narrow_session(tour, connect_timeout)
        # Last: the run-wide checks at its end read every probe connection before it.
        with timed(rec, *NEGATIVE_PROBE_CHECKS, "jsonrpc.unknown-method"):
            await _basic_probes(tour, connect, recording, connect_timeout, hasattr(recording, "stderr_tail"))
    # The raw transport checks carry the run's credentials, or they would only see 401s.
    credentials = tuple(await auth.headers()) if auth is not None and report.revision is not None else ()
    if not credentials and auth_tokens is not None and auth_tokens.valid and report.revision is not None:
        credentials = (("Authorization", f"Bearer {auth_tokens.valid}"),)
    if is_http_target(target):  # (even when nothing was negotiated: a 401 explains why)
        if rec.wants("auth.*"):
            with timed(rec, "auth.*"):
                await _auth_checks(
                    rec, target, unauthorized, min(connect_timeout, request_timeout), credentials, auth_tokens
                )
    elif report.revision is not None:
        skip_auth(rec, "not an HTTP target")
    # (nothing negotiated: every other check is "not reached")
    if report.revision is not None and rec.wants("http.*", "http26.*", "sse.*", "stdio.*"):
        probes = RawClient(min(connect_timeout, request_timeout), extra_headers=credentials)
        with timed(rec, "http.*", "http26.*", "sse.*"):
            await _transport_checks(rec, target, report.revision, probes, report.transport, versions)
    if report.revision is None:
        unjudged = "not reached"
    elif cut_short is not None:
        unjudged = f"not reached: timed out after {cut_short:g} s (the tour was cut short)"
    else:
        unjudged = "not applicable to this server"
    report.results = rec.finish(unjudged)
    report.selection = rec.selection
    return report


async def _auth_checks(
    rec: Results,
    target: str,
    unauthorized: RawResponse | None,
    timeout: float,
    credentials: tuple[tuple[str, str], ...],
    tokens: AuthTokens | None = None,
) -> None:
    if unauthorized is None:
        try:
            unauthorized = await probe_unauthenticated(target, timeout)
        except ProbeError:
            unauthorized = None
    await check_auth(rec, target, unauthorized, timeout, credentials, tokens)


async def _transport_checks(
    rec: Results,
    target: str,
    revision: str,
    raw: RawClient,
    transport: str | None,
    versions: ServerVersions | None,
) -> None:
    await check_http26(rec, target, revision, raw, versions)  # 2026-07-28 Streamable HTTP (skips other targets)
    if not is_http_target(target):
        skip_http(rec)
        return
    rec.skip("stdio.clean-stdout", "not a stdio target")
    rec.skip("stdio.shutdown", "not a stdio target")
    await check_http_transport(rec, target, revision, raw, transport)


async def _tour(tour: Tour, pinned: str | None, policy: ToolPolicy) -> None:
    client = tour.client
    if client.era is Era.STATELESS:
        check_discover(tour.rec, client)
    else:
        check_handshake(tour.rec, client, pinned)
        await handshake_tour(tour)
    await feature_tour(tour, policy)
    if tour.revision in UI.revisions:  # MCP Apps: tools carry _meta
        await check_apps(tour)
    if client.era is Era.STATELESS:
        await stateless_tour(tour)


async def _probes(tour: Tour, timeout: float, policy: ToolPolicy, versions: ServerVersions) -> None:
    rec, client, revision = tour.rec, tour.client, tour.revision
    # Each group runs only when the selection wants one of its checks (``--only``).
    if rec.wants("capabilities.gating"):
        with timed(rec, "capabilities.gating"):
            await probe_gating(rec, tour.connect, revision, client.server_capabilities, timeout)
    if client.era is not Era.STATELESS:
        if rec.wants("lifecycle.unsupported-version"):
            with timed(rec, "lifecycle.unsupported-version"):
                await probe_handshake_version(rec, tour.connect, timeout)
        if rec.wants("lifecycle.version"):
            # One initialize per handshake revision, on fresh connections (judged with the rest
            # of the run's initialize answers: handshake.check_version_same).
            with timed(rec, "lifecycle.version"):
                for version in HANDSHAKE_VERSIONS:
                    await versions.offer(version)
        if rec.wants("tasks.*"):
            with timed(rec, "tasks.*"):
                await check_tasks(rec, tour.connect, revision, client.server_capabilities, timeout)
        return
    caps = client.server_capabilities
    if rec.wants("ext-tasks.*"):
        tools = tour.tools
        if not tools and "tools" in caps:
            with contextlib.suppress(TrimcpError):
                tools = await client.list_tools()
        with timed(rec, "ext-tasks.*"):
            await check_ext_tasks(rec, tour.connect, revision, caps, tools, policy, timeout)
    if rec.wants("stateless.unsupported-version", "versioning.initialize-error"):
        with timed(rec, "stateless.unsupported-version", "versioning.initialize-error"):
            await probe_stateless_version(
                rec, tour.connect, revision, caps, timeout, client.supported_versions or (), versions
            )
    if rec.wants("stateless.missing-envelope", "stateless.partial-envelope"):
        dual_era = (
            any(v in HANDSHAKE_VERSIONS for v in client.supported_versions or ()) or await versions.serves_legacy()
        )
        if rec.wants("stateless.missing-envelope"):
            with timed(rec, "stateless.missing-envelope"):
                await probe_missing_envelope(rec, tour.connect, revision, caps, timeout, dual_era)
        if rec.wants("stateless.partial-envelope"):
            with timed(rec, "stateless.partial-envelope"):
                await probe_partial_envelope(rec, tour.connect, revision, caps, timeout, dual_era)
    if not rec.wants("mrtr.*"):
        return
    original = input_target(tour.recording)
    if original is None:
        rec.skip("mrtr.input-required", "no read-only tool asked for input")
        rec.skip("mrtr.tampered-state", "no read-only tool asked for input")
        for check_id, _ in RETRY_VARIANTS:
            rec.skip(check_id, "no read-only tool asked for input")
        return
    declared = client.connection.capabilities
    with timed(rec, "mrtr.*"):
        await probe_input_requests(rec, tour.connect, revision, declared, original, timeout)


async def _basic_probes(
    tour: Tour,
    connect: Connector,
    main: RecordingStream | None,
    timeout: float,
    stdio: bool,
) -> None:
    # The negative probes (checks/negative.py) record their connections themselves (on the
    # bare ``connect``: they reach under the recording to the transport); what those
    # received is judged too.
    probed: list[RecordingStream] = []
    slow = cancel_target(main) if main is not None else None
    if tour.rec.wants(*NEGATIVE_PROBE_CHECKS):
        await probe_negative(tour.rec, connect, tour.revision, timeout, probed, slow)
    for recording in probed:
        _check_conversation(tour.rec, recording, tour.revision, stdio=stdio)
        _check_notifications(tour.rec, recording, tour.client.server_capabilities)
    judge_probe_sessions(tour.rec, probed)
    check_error_codes(tour.rec, ([main] if main else []) + probed, tour.revision)
    check_progress(tour.rec, ([main] if main else []) + probed)
    everything = ([main] if main else []) + probed
    # The sentences about every message the server sends also read every other probe's connection.
    check_base_rules(tour.rec, everything + tour.probe_recordings, tour.revision)
    check_meta_keys(tour.rec, everything + tour.probe_recordings, tour.revision)
    check_server_cancellations(tour.rec, everything, tour.revision)
    if tour.client.era is not Era.STATELESS:
        check_server_request_ids(tour.rec, everything)
        check_version_same(tour.rec, everything + tour.probe_recordings)
        check_init_first(tour.rec, everything)
        check_server_progress_tokens(tour.rec, everything)
        check_task_cancellations(tour.rec, everything)
    else:
        check_subscription_ids(tour.rec, everything)
        check_capability_errors(tour.rec, everything)
        check_request_ids_in_flight(tour.rec, everything)
        check_input_request_keys(tour.rec, everything)
        check_input_request_kinds(tour.rec, everything + tour.probe_recordings)


def _http_capture(stream: object) -> HttpCapture | None:
    """The ``HttpCapture`` under an HTTP stream whose connector records its exchanges."""
    executor = getattr(stream, "executor", None)
    return executor if isinstance(executor, HttpCapture) else None


def _unreachable(exc: TrimcpError, recording: RecordingStream | None) -> bool:
    # The connector itself failed (spawn, refused connection), or the transport closed
    # before one byte came back; a silent or misbehaving server still gets its report.
    if recording is None:
        return True
    return not recording.received and isinstance(exc.__cause__, TransportClosed)


def _host_refused(exc: TrimcpError, target: str) -> str | None:
    """The server's own Host allow-list (DNS-rebinding protection: 421, or 403 naming the Host)
    refused the URL's address: a configuration matter, so "could not be checked", with a hint."""
    parts = urlsplit(target)
    text = " ".join(str(exc).split())
    if parts.hostname not in ("127.0.0.1", "::1") or not (
        "HTTP 421" in text or ("HTTP 403" in text and "host" in text.lower())
    ):
        return None
    other = parts._replace(netloc=f"localhost:{parts.port}" if parts.port else "localhost").geturl()
    return f"the server refused Host {parts.hostname} ({text[:160]}); try {other}"


def _one_line(exc: TrimcpError, recording: RecordingStream | None) -> str:
    text, _, quoted = str(exc).partition("\n--- last stderr lines ---")
    line = " ".join(text.split())
    tail = getattr(recording.inner, "stderr_tail", None) if recording is not None else None
    quoted = quoted or (tail() if callable(tail) else "")
    lines = [ln.strip() for ln in quoted.splitlines() if ln.strip()]
    if lines:
        line += f" (stderr: {lines[-1]})"
    return line


def _server_answers(recording: RecordingStream) -> list[rpc.Response | rpc.ErrorResponse]:
    """The answers to the client's requests that the server wrote: not a copy of a message the
    client sent (a server echoing every line hands the client's own error back)."""
    return [m for _, m in recording.answers().values() if m.id in recording.requests and m not in recording.sent]


def _connect_failed(rec: Results, exc: TrimcpError, pinned: str | None, recording: RecordingStream | None) -> None:
    detail = f"{type(exc).__name__}: {exc}"
    answered = recording is not None and bool(_server_answers(recording))
    if isinstance(exc, ConnectTimeout) and answered:
        # The answer came, after the deadline: --timeout cut the run short, the server broke
        # nothing (issue 27: a probe cut short is "not reached", never a failure).
        why = f"not reached: timed out after {exc.seconds:g} s ({exc.phase} was answered only later: raise --timeout)"
        for check_id in ("lifecycle.connect", "discover.result", "lifecycle.initialize"):
            rec.skip(check_id, why)
        return
    if not answered:
        # Refused (an HTTP error status, a process gone after the first line) or silent:
        # no JSON-RPC answer at all, so there is no InitializeResult/DiscoverResult to judge.
        echoed = " (only copies of the client's own messages came back)" if recording and recording.answers() else ""
        rec.fail("lifecycle.connect", f"the first request got no JSON-RPC answer{echoed}: {detail}")
        return
    rec.ok("lifecycle.connect", "the first request got a JSON-RPC answer")
    sent = set(recording.sent_methods.values()) if recording is not None else set()
    stateless_pin = pinned is not None and get_revision(pinned).era is Era.STATELESS
    if stateless_pin or ("server/discover" in sent and "initialize" not in sent):
        rec.fail("discover.result", detail)
        return
    rec.fail("lifecycle.initialize", detail)
    chosen = offered_revision(recording)
    if chosen is not None and chosen not in ALL_VERSIONS:
        rec.fail("lifecycle.version", f"server chose {chosen!r}")


def _check_conversation(
    rec: Results, recording: RecordingStream, revision: str | None, *, stdio: bool
) -> ValidationOutcome:
    outcome = validate_conversation(recording.received, recording.sent_methods, revision)
    if not recording.received:
        # Nothing arrived, so nothing was judged: a silent server passes none of these.
        for check_id in ("jsonrpc.valid-messages", "jsonrpc.ids", "schema.messages"):
            rec.skip(check_id, "the server sent no messages")
        if stdio:
            rec.skip("stdio.clean-stdout", "the server wrote nothing on stdout")
        return outcome
    if outcome.invalid_jsonrpc:
        rec.fail("jsonrpc.valid-messages", "; ".join(outcome.invalid_jsonrpc[:3]))
        if stdio:
            rec.fail("stdio.clean-stdout", f"{len(outcome.invalid_jsonrpc)} non-JSON-RPC lines on stdout")
    else:
        rec.ok("jsonrpc.valid-messages", f"{outcome.checked} messages")
        if stdio:
            rec.ok("stdio.clean-stdout", f"{len(recording.received)} lines, each a JSON-RPC message")
    answered = len(_server_answers(recording))
    copies = len(recording.answers()) - answered
    if outcome.unknown_ids or outcome.duplicate_ids:
        rec.fail("jsonrpc.ids", "; ".join((outcome.unknown_ids + outcome.duplicate_ids)[:3]))
    elif answered:
        rec.ok("jsonrpc.ids", f"{answered} responses")
    else:
        # A copy of the client's own error (a server echoing every line) answers nothing.
        also = f" ({copies} copies of the client's own messages came back)" if copies else ""
        rec.skip("jsonrpc.ids", f"the server answered no request{also}")
    if outcome.schema_errors:
        rec.fail("schema.messages", "; ".join(outcome.schema_errors[:3]))
    elif not outcome.checked:
        # Every message was invalid JSON-RPC (jsonrpc.valid-messages says so): no schema was applied.
        rec.skip(
            "schema.messages",
            f"none of the {len(recording.received)} messages received is valid JSON-RPC: no schema to apply",
        )
    else:
        rec.ok("schema.messages", f"{outcome.checked} messages" + (f" ({revision})" if revision else ""))
    return outcome


def _check_notifications(rec: Results, recording: RecordingStream, caps: dict[str, Any]) -> None:
    undeclared: dict[str, str] = {}
    seen = 0
    for _, msg in recording.messages():
        if isinstance(msg, rpc.Notification):
            seen += 1
            gate = own_gate(msg.method)
            if gate is not None and not has_capability(caps, gate):
                undeclared[msg.method] = ".".join(gate)
    if undeclared:
        rec.fail("capabilities.notifications", "; ".join(f"{m} without {g}" for m, g in undeclared.items()))
    elif seen:
        rec.ok("capabilities.notifications", f"{seen} notifications")
    else:
        rec.skip("capabilities.notifications", "the server sent no notifications")
