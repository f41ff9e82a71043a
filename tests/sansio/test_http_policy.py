"""The HTTP client's policy (``_sansio/http/client/policy.py``): facts in, actions out, no I/O.

Every row of the exchange table and of the GET-stream loop, then properties
over random fact sequences (hypothesis): the policy always ends an exchange,
never re-issues, re-initializes or authorizes more than it may, gives a
request only typed errors naming the server, and gives up on an unreachable
server at once.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp._errors import AuthError, ConnectError, SessionExpired, TransportClosed, TransportError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.http.client import policy as p
from trimcp._sansio.http.client import response as hr
from trimcp._sansio.http.client.plan import HttpPlanner

URL = "http://127.0.0.1:8000/mcp"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
POLICY = p.ReconnectPolicy(max_failures=3, initial_delay=1.0, max_delay=8.0, max_reissues=2)


def plan(message: rpc.Message, *, session: bool = True) -> Any:
    planner = HttpPlanner(URL)
    if session:
        planner.session_assigned("s1")
        planner.initialized("2025-11-25")
    return planner.plan_post(message)


def call(method: str = "tools/call", *, stateless: bool = False, rid: int = 7) -> Any:
    params: dict[str, Any] = {"name": "echo"}
    if stateless:
        params["_meta"] = META
    return plan(rpc.Request(rid, method, params), session=not stateless)


def policy(the_plan: Any = None, **kwargs: Any) -> p.ExchangePolicy:
    return p.ExchangePolicy(the_plan if the_plan is not None else call(), POLICY, **kwargs)


def broken(last_event_id: str | None = None, retry_ms: int | None = None) -> p.Read:
    return p.Read(hr.StreamBroken(last_event_id, retry_ms, "the connection broke mid-stream (reset)"))


def error_of(action: p.Action) -> TransportError | AuthError:
    assert isinstance(action, p.GiveUp), action
    assert URL in str(action.error)  # every error says which server
    return action.error


# --------------------------------------------------------------------------- the exchange table


def test_an_answer_ends_the_exchange() -> None:
    assert policy().decide(p.Read(hr.StreamEnded(), answered=True)) == p.Done()
    # Whatever else the response said: the answer reached the session.
    assert policy().decide(p.Read(hr.StreamBroken("3", None, "x"), answered=True)) == p.Done()


def test_unreachable_is_fatal_only_before_the_server_ever_answered() -> None:
    # The executor's words ("cannot connect to URL: why") are the reason, as they are.
    assert policy().decide(p.Unreachable("refused", ever_reached=False)) == p.Die("refused")
    # Refused after it answered before: the server is gone, as a stdio server that exited.
    gone = error_of(policy().decide(p.Unreachable("refused")))
    assert type(gone) is TransportClosed and "went away" in str(gone)


def test_a_reset_before_any_answer() -> None:
    assert type(error_of(policy().decide(p.Lost("reset")))) is ConnectError
    action = policy(call(stateless=True)).decide(p.Lost("reset"))
    assert isinstance(action, p.Reissue) and action.delay == 0 and action.reissues == 1
    assert isinstance(action.error, TransportClosed)


def test_challenges() -> None:
    pol = policy(max_auth_rounds=2, headers_helper=True)
    assert pol.decide(p.Challenged(401, oauth_wants=True)) == p.Authorize(401)
    assert pol.decide(p.Authorized(True)) == p.Send()
    assert pol.decide(p.Challenged(403, oauth_wants=True)) == p.Authorize(403)
    # The OAuth rounds are used up: a headers helper gets its one chance on a 401 ...
    assert pol.decide(p.Challenged(401, oauth_wants=True)) == p.RefreshHeaders()
    assert pol.decide(p.HeadersRefreshed()) == p.Send()
    # ... and then the response is read as it is.
    assert pol.decide(p.Challenged(401, oauth_wants=True)) == p.ReadBody()
    assert isinstance(error_of(pol.decide(p.Read(hr.StreamFailed("HTTP 401 from x", 401)))), AuthError)
    assert policy().decide(p.Challenged(403)) == p.ReadBody()


def test_authorization_failures_are_auth_errors() -> None:
    pol = policy(max_auth_rounds=1)
    pol.decide(p.Challenged(401, oauth_wants=True))
    assert str(error_of(pol.decide(p.Authorized(False)))).startswith("HTTP 401: not authorized")
    flow = AuthError(f"invalid_grant: the code was refused ({URL})")
    assert policy().decide(p.Authorized(False, flow)) == p.GiveUp(flow)  # the provider's own error
    helper = ConnectError(f"headers helper exited 1 ({URL})")
    assert policy().decide(p.HeadersRefreshed(helper)) == p.GiveUp(helper)


def test_session_expiry_reinitializes_once() -> None:
    the_plan = call()
    pol = policy(the_plan)
    expired = p.Read(hr.SessionExpired("HTTP 404 on a request with a session id"))
    assert pol.decide(expired) == p.Reinitialize(the_plan.generation, "HTTP 404 on a request with a session id")
    assert pol.decide(p.Reinitialized(True)) == p.Send()
    error = error_of(pol.decide(expired))
    assert type(error) is SessionExpired and "dropped the session again" in str(error)
    pol = policy()
    pol.decide(expired)
    assert "re-initializing failed" in str(error_of(pol.decide(p.Reinitialized(False))))


def test_legacy_fallback() -> None:
    pol = policy(plan(rpc.Request(0, "initialize", {}), session=False))
    assert pol.decide(p.Read(hr.FallBackToLegacy(405, "initialize got HTTP 405"))) == p.FallBack(
        "initialize got HTTP 405"
    )
    assert pol.decide(p.FellBack(True)) == p.Send()
    pol.decide(p.Read(hr.FallBackToLegacy(405, "initialize got HTTP 405")))
    error = error_of(pol.decide(p.FellBack(False)))
    assert type(error) is ConnectError and "405" in str(error) and "not offered" in str(error)


def test_broken_streams_by_era() -> None:
    # Handshake era: resume from the last event id, or give up.
    assert policy().decide(broken("ev-3", 200)) == p.Resume("ev-3", 200, "the connection broke mid-stream (reset)")
    error = error_of(policy().decide(broken()))
    assert type(error) is TransportClosed and "no way to resume" in str(error)
    assert policy().decide(p.Resumed()) == p.Done()
    gone = TransportClosed(f"the server is gone ({URL})")
    assert policy().decide(p.Resumed(gone)) == p.GiveUp(gone)
    # 2026-07-28: re-issue (the event id does not matter: there is no GET), at most max_reissues.
    pol = policy(call(stateless=True))
    first = pol.decide(broken("ev-3"))
    assert isinstance(first, p.Reissue) and first.reissues == 1 and first.delay == 0
    pol = policy(call(stateless=True), reissues=2)
    error = error_of(pol.decide(broken()))
    assert type(error) is TransportClosed and "gave up after 2 re-issues" in str(error)


def test_a_listen_stream_pauses_and_counts_breaks_in_a_row() -> None:
    listen = call("subscriptions/listen", stateless=True)
    action = p.ExchangePolicy(listen, POLICY, reissues=1).decide(broken())
    assert isinstance(action, p.Reissue) and action.delay == POLICY.delay(2, None) and action.reissues == 2
    # Messages arrived before the break: it was working, the count starts again.
    action = p.ExchangePolicy(listen, POLICY, reissues=2).decide(p.Read(hr.StreamBroken(None, None, "cut"), messages=3))
    assert isinstance(action, p.Reissue) and action.delay == POLICY.delay(1, None) and action.reissues == 1


@pytest.mark.parametrize(
    ("status", "kind"), [(500, TransportError), (401, AuthError), (403, AuthError), (None, TransportError)]
)
def test_failed_responses_are_typed(status: int | None, kind: type[Exception]) -> None:
    error = error_of(policy().decide(p.Read(hr.StreamFailed(f"HTTP {status} from {URL}: boom", status))))
    assert type(error) is kind and str(error) == f"HTTP {status} from {URL}: boom"  # the URL once


def test_answers_elsewhere_and_deadlines() -> None:
    assert policy().decide(p.Read(hr.StreamEnded(), elsewhere=True)) == p.AwaitElsewhere()
    error = error_of(policy().decide(p.Read(hr.StreamEnded())))
    assert "ended without an answer" in str(error)
    error = error_of(policy().decide(p.TimedOut(0.5)))
    assert type(error) is TransportError and str(error).startswith("no answer to tools/call within 0.5 s")


def test_notifications_are_reported_not_failed() -> None:
    note = plan(rpc.Notification("notifications/initialized"))
    assert p.ExchangePolicy(note, POLICY).decide(p.Read(hr.StreamEnded(), accepted=True)) == p.OpenStandalone()
    roots = plan(rpc.Notification("notifications/roots/list_changed"))
    assert p.ExchangePolicy(roots, POLICY).decide(p.Read(hr.StreamEnded(), accepted=True)) == p.Done()
    action = p.ExchangePolicy(roots, POLICY).decide(p.Read(hr.StreamFailed(f"HTTP 500 from {URL}: no", 500)))
    assert isinstance(action, p.Report) and "notifications/roots/list_changed was not delivered" in action.detail
    assert isinstance(p.ExchangePolicy(roots, POLICY).decide(p.Lost("reset")), p.Report)


# --------------------------------------------------------------------------- one policy, every fact

EXCHANGE_FACTS = st.one_of(
    st.builds(p.Unreachable, st.just("refused"), st.booleans()),
    st.builds(p.Lost, st.just("reset")),
    st.builds(p.Challenged, st.sampled_from([401, 403]), st.booleans()),
    st.builds(p.Authorized, st.booleans()),
    st.builds(p.HeadersRefreshed, st.none() | st.just(ConnectError("helper failed"))),
    st.builds(
        p.Read,
        st.sampled_from(
            [
                hr.StreamEnded(),
                hr.StreamBroken(None, None, "cut"),
                hr.StreamBroken("e1", 10, "cut"),
                hr.StreamFailed("HTTP 500", 500),
                hr.StreamFailed("oversize"),
                hr.SessionExpired("gone"),
                hr.FallBackToLegacy(405, "405"),
            ]
        ),
        st.booleans(),
        st.booleans(),
        st.booleans(),
        st.integers(0, 3),
    ),
    st.builds(p.Reinitialized, st.booleans()),
    st.builds(p.FellBack, st.booleans()),
    st.builds(p.Resumed, st.none() | st.just(TransportClosed("gone"))),
    st.builds(p.TimedOut, st.just(1.0)),
)
PLANS = st.sampled_from(
    [
        ("tools/call", False),
        ("tools/call", True),
        ("subscriptions/listen", True),
        ("notification", False),
    ]
)
ENDING = (p.Reissue, p.AwaitElsewhere, p.OpenStandalone, p.Done, p.GiveUp, p.Report, p.Die)


@settings(max_examples=300)
@given(PLANS, st.integers(0, 3), st.integers(0, 2), st.booleans(), st.lists(EXCHANGE_FACTS, max_size=25))
def test_any_fact_sequence(
    kind: tuple[str, bool], reissues: int, auth_rounds: int, helper: bool, facts: list[Any]
) -> None:
    method, stateless = kind
    the_plan = (
        plan(rpc.Notification("notifications/x")) if method == "notification" else call(method, stateless=stateless)
    )
    pol = p.ExchangePolicy(the_plan, POLICY, reissues=reissues, max_auth_rounds=auth_rounds, headers_helper=helper)
    counts: dict[type, int] = {}
    for fact in facts:
        action = pol.decide(fact)
        counts[type(action)] = counts.get(type(action), 0) + 1
        if isinstance(action, p.GiveUp):
            assert pol.expects_answer and isinstance(action.error, (TransportError, AuthError))
        if isinstance(action, p.Report):
            assert not pol.expects_answer
        if isinstance(action, p.Reissue):
            assert stateless and action.reissues <= POLICY.max_reissues
            assert action.delay <= POLICY.max_delay
        if isinstance(action, p.Die):
            assert isinstance(fact, p.Unreachable) and not fact.ever_reached
        if isinstance(action, p.Resume):
            assert pol.expects_answer and not stateless
        if isinstance(action, p.AwaitElsewhere):
            assert pol.expects_answer
        assert isinstance(
            action, (*ENDING, p.Send, p.Authorize, p.RefreshHeaders, p.ReadBody, p.Reinitialize, p.FallBack, p.Resume)
        )
    assert counts.get(p.Reinitialize, 0) <= 1
    assert counts.get(p.Authorize, 0) <= auth_rounds
    assert counts.get(p.RefreshHeaders, 0) <= int(helper)


# --------------------------------------------------------------------------- the GET-stream loop


def stream_read(end: Any = None, **kwargs: Any) -> p.StreamRead:
    return p.StreamRead(end if end is not None else hr.StreamEnded(), **kwargs)


def test_standalone_stream_backs_off_without_progress_and_gives_up() -> None:
    follow = p.FollowPolicy(POLICY)
    assert follow.start() == p.Connect(0.0, None)
    assert follow.decide(stream_read()) == p.Connect(1.0, None)
    assert follow.decide(stream_read()) == p.Connect(2.0, None)
    stop = follow.decide(stream_read())
    assert isinstance(stop, p.Stop) and "nothing new" in (stop.detail or "")


def test_standalone_stream_polls_at_the_servers_pace() -> None:
    follow = p.FollowPolicy(POLICY)
    follow.start()
    for n in range(10):  # a server that "polls" forever, with progress each time
        assert follow.decide(stream_read(last_event_id=f"g-{n}", retry_ms=500)) == p.Connect(0.5, f"g-{n}")
    assert follow.decide(stream_read(messages=2, last_event_id="g-9", retry_ms=500)) == p.Connect(0.5, "g-9")


def test_standalone_stream_refusals() -> None:
    assert p.FollowPolicy(POLICY).decide(stream_read(hr.StreamRefused(405, "HTTP 405"))) == p.Stop(None)
    stop = p.FollowPolicy(POLICY).decide(stream_read(hr.SessionExpired("HTTP 404")))
    assert isinstance(stop, p.Stop) and "HTTP 404" in (stop.detail or "")
    stop = p.FollowPolicy(POLICY).decide(p.Unreachable("connection refused"))
    assert isinstance(stop, p.Stop) and "the server is gone" in (stop.detail or "")


def test_a_resumption() -> None:
    follow = p.FollowPolicy(POLICY, resuming="the stream broke", last_event_id="e1", retry_ms=250)
    assert follow.start() == p.Connect(0.25, "e1")  # the server's retry time first
    assert follow.decide(stream_read(hr.StreamBroken("e2", 250, "cut"), last_event_id="e2", retry_ms=250)) == p.Connect(
        0.25, "e2"
    )
    assert follow.decide(stream_read(hr.StreamBroken("e2", 250, "cut"), answered=True)) == p.Done()
    refused = p.FollowPolicy(POLICY, resuming="the stream broke").decide(stream_read(hr.StreamRefused(405, "HTTP 405")))
    assert isinstance(refused, p.GiveUp) and type(refused.error) is TransportClosed
    expired = p.FollowPolicy(POLICY, resuming="the stream broke").decide(stream_read(hr.SessionExpired("HTTP 404")))
    assert isinstance(expired, p.GiveUp) and type(expired.error) is SessionExpired


def test_a_resumption_gives_up_at_once_when_the_server_is_gone() -> None:
    """The server died mid-call: its port refuses. No back-off ladder against a closed port."""
    follow = p.FollowPolicy(POLICY, resuming="the connection broke mid-stream", last_event_id="e1")
    follow.start()
    action = follow.decide(p.Unreachable("cannot connect to http://127.0.0.1:8000: refused"))
    assert isinstance(action, p.GiveUp) and type(action.error) is TransportClosed
    assert "the server is gone" in str(action.error) and "mid-stream" in str(action.error)


FOLLOW_FACTS = st.one_of(
    st.builds(p.Lost, st.just("reset")),
    st.builds(
        p.StreamRead,
        st.sampled_from([hr.StreamEnded(), hr.StreamBroken(None, None, "cut")]),
        st.integers(0, 2),
        st.sampled_from([None, "a", "b", "c"]),
        st.sampled_from([None, 100, 2000]),
        st.booleans(),
    ),
)


@settings(max_examples=300)
@given(st.booleans(), st.lists(FOLLOW_FACTS, max_size=40))
def test_following_a_stream(resuming: bool, facts: list[Any]) -> None:
    """Waits stay within bounds; fruitless attempts end the stream after max_failures in a row."""
    follow = p.FollowPolicy(POLICY, resuming="broke" if resuming else None)
    follow.start()
    fruitless = 0
    previous = (None, None)
    for fact in facts:
        action = follow.decide(fact)
        if isinstance(fact, p.StreamRead) and resuming and fact.answered:
            assert action == p.Done()
            return
        progress = isinstance(fact, p.StreamRead) and (
            fact.messages > 0
            or fact.last_event_id != previous[0]
            or (fact.retry_ms is not None and fact.retry_ms != previous[1])
        )
        if isinstance(fact, p.StreamRead):
            previous = (fact.last_event_id or previous[0], fact.retry_ms)
        fruitless = 0 if progress else fruitless + 1
        if fruitless >= POLICY.max_failures:
            assert isinstance(action, (p.Stop, p.GiveUp))
            return
        assert isinstance(action, p.Connect)
        assert action.after <= max(POLICY.max_delay, 2.0)


@given(st.booleans(), st.lists(FOLLOW_FACTS, max_size=10))
def test_unreachable_always_ends_a_stream_at_once(resuming: bool, before: list[Any]) -> None:
    follow = p.FollowPolicy(p.ReconnectPolicy(max_failures=1000), resuming="broke" if resuming else None)
    for fact in before:
        follow.decide(fact)
    action = follow.decide(p.Unreachable("refused"))
    assert isinstance(action, p.GiveUp if resuming else p.Stop)
