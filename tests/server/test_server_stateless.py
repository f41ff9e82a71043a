"""trimcp.server in the 2026-07-28 stateless era.

The server runs in-process over ``memory_stream_pair``; the client side is a
raw stateless client writing hand-built JSON-RPC messages (``Raw``), or the
sans-IO ``Connection`` in the client role for the discover probe, so these
tests depend on nothing but the wire format.  One test runs a handshake-era
``open_client`` against the same ``Server`` at the same time.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from trimcp import Handlers
from trimcp._errors import McpError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection import stateless as sl
from trimcp._sansio.connection.core import Connection
from trimcp._sansio.connection.lifecycle import Role
from trimcp._sansio.events import Discovered, ResponseReceived
from trimcp._sansio.revisions import ALL_VERSIONS
from trimcp._trio._groups import collapse
from trimcp._trio.client import open_client
from trimcp._trio.memory import memory_stream_pair
from trimcp._trio.stream import MessageStream, Received
from trimcp.reference.server import COUNTER_URI, build_server
from trimcp.server import Context, Server, inputs, serve_stream
from trimcp.server import _compat as compat
from trimcp.server._request_state import InvalidRequestState, StateSealer, request_digest
from trimcp.testing import connect, serve_in_process

MODERN = "2026-07-28"
CLIENT_INFO = {"name": "raw-stateless", "version": "1"}
ALL_INPUT_CAPS: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
SUB_ID = sl.SUBSCRIPTION_ID_KEY


def envelope(caps: dict[str, Any] | None = None, *, version: str = MODERN, level: str | None = None) -> dict[str, Any]:
    return sl.build_envelope(version, caps if caps is not None else {}, CLIENT_INFO, level)


class Raw:
    """A stateless client made of hand-built JSON-RPC messages."""

    def __init__(self, stream: MessageStream) -> None:
        self.stream = stream
        self.notes: list[dict[str, Any]] = []
        self._ids = 0

    async def send_request(self, request_id: rpc.RequestId, method: str, params: dict[str, Any] | None) -> None:
        await self.stream.send(rpc.Request(request_id, method, params))

    async def _next(self) -> Any:
        item = await self.stream.receive()
        assert isinstance(item, Received), item  # an in-process stream loses no request
        return json.loads(item.data)

    async def response(self, request_id: rpc.RequestId) -> dict[str, Any]:
        """Read until the answer to ``request_id``; notifications on the way go to ``notes``."""
        while True:
            msg = await self._next()
            if "method" in msg:
                self.notes.append(msg)
            elif msg.get("id") == request_id:
                return msg

    async def note(self) -> dict[str, Any]:
        """The next notification."""
        while True:
            msg = await self._next()
            if "method" in msg and "id" not in msg:
                return msg

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        caps: dict[str, Any] | None = None,
        level: str | None = None,
        version: str = MODERN,
        bare: bool = False,
    ) -> dict[str, Any]:
        """One request; the whole response message (``result`` or ``error``)."""
        self._ids += 1
        if not bare:
            params = sl.with_envelope(params, envelope(caps, version=version, level=level))
        await self.send_request(self._ids, method, params)
        return await self.response(self._ids)

    async def tool(self, name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        for key in ("inputResponses", "requestState"):
            if key in kw:
                params[key] = kw.pop(key)
        return await self.call("tools/call", params, **kw)


@asynccontextmanager
async def stateless(server: Server) -> AsyncIterator[Raw]:
    async with serve_in_process(server) as client_end:
        yield Raw(client_end)


def text_of(response: dict[str, Any]) -> str:
    result = response["result"]
    assert result["resultType"] == "complete", result
    return " ".join(b["text"] for b in result["content"] if b.get("type") == "text")


def error_of(response: dict[str, Any]) -> tuple[int, Any]:
    assert "error" in response, response
    return response["error"]["code"], response["error"].get("data")


def tamper(token: str) -> str:
    """Flip one byte of the sealed payload (the token stays well-formed base64url)."""
    prefix, payload, tag = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    raw[-3] ^= 0x01
    return ".".join((prefix, base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode(), tag))


# ---------------------------------------------------------------- discovery and the envelope


async def test_discover_and_a_call_through_the_sansio_client() -> None:
    conn = Connection(Role.CLIENT, info=CLIENT_INFO, capabilities={}, supported_versions=(MODERN,))
    client_end, server_end = memory_stream_pair()

    async def exchange() -> list[Any]:
        for msg in conn.outgoing():
            await client_end.send(msg)
        return conn.receive_payload((await client_end.receive()).payload)

    with trio.fail_after(5), collapse():
        async with trio.open_nursery() as nursery:
            await nursery.start(serve_stream, build_server(), server_end)
            conn.discover()
            [found] = await exchange()
            assert isinstance(found, Discovered)
            assert found.protocol_version == MODERN
            result = found.result
            assert result["resultType"] == "complete"
            assert sorted(result["supportedVersions"]) == sorted(ALL_VERSIONS) and len(ALL_VERSIONS) == 5
            assert result["ttlMs"] == 300_000 and result["cacheScope"] == "public"
            assert result["_meta"][sl.SERVER_INFO_KEY]["name"] == "trimcp-reference"
            assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
            assert "instructions" in result

            conn.send_request("tools/call", {"name": "echo", "arguments": {"message": "hi"}})
            [answer] = await exchange()
            assert isinstance(answer, ResponseReceived)
            assert answer.result["content"] == [{"type": "text", "text": "hi"}]
            assert answer.result["_meta"][sl.SERVER_INFO_KEY]["name"] == "trimcp-reference"
            await client_end.aclose()


async def test_requests_without_a_valid_envelope_are_invalid_params() -> None:
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            assert error_of(await raw.call("tools/list", {}, bare=True))[0] == rpc.INVALID_PARAMS
            no_caps = {"_meta": {sl.PROTOCOL_VERSION_KEY: MODERN}}
            assert error_of(await raw.call("tools/list", no_caps, bare=True))[0] == rpc.INVALID_PARAMS
            bad_level = await raw.call("tools/list", {}, level="loud")
            assert error_of(bad_level)[0] == rpc.INVALID_PARAMS
            # the connection goes on: every request stands on its own
            assert "tools" in (await raw.call("tools/list"))["result"]


async def test_unsupported_version_names_what_the_server_speaks() -> None:
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            code, data = error_of(await raw.call("tools/list", version="2099-01-01"))
            assert code == rpc.UNSUPPORTED_PROTOCOL_VERSION
            assert sorted(data["supported"]) == sorted(ALL_VERSIONS)
            assert data["requested"] == "2099-01-01"


async def test_context_comes_from_each_requests_envelope() -> None:
    server = Server("ctx", "1")
    seen: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = []

    @server.tool()
    async def inspect(ctx: Context) -> str:
        seen.append((ctx.protocol_version, ctx.client_info, ctx.client_capabilities, ctx.is_stateless))
        return "ok"

    with trio.fail_after(5):
        async with stateless(server) as raw:
            await raw.tool("inspect", caps={"roots": {}})
            await raw.tool("inspect", caps={})
    assert seen == [
        (MODERN, CLIENT_INFO, {"roots": {}}, True),
        (MODERN, CLIENT_INFO, {}, True),
    ]


async def test_cache_hints_on_lists_and_reads() -> None:
    server = build_server()
    tuned = build_server()
    tuned.list_ttl_ms = 60_000
    with trio.fail_after(5):
        async with stateless(server) as raw:
            for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
                result = (await raw.call(method))["result"]
                assert (result["ttlMs"], result["cacheScope"]) == (0, "public"), method
            read = (await raw.call("resources/read", {"uri": "test://static-text"}))["result"]
            assert (read["ttlMs"], read["cacheScope"]) == (0, "private")
            # an interim InputRequiredResult is not cacheable
            interim = (await raw.tool("elicit", {"message": "?"}, caps=ALL_INPUT_CAPS))["result"]
            assert "ttlMs" not in interim and "cacheScope" not in interim
        async with stateless(tuned) as raw:
            assert (await raw.call("tools/list"))["result"]["ttlMs"] == 60_000
    with pytest.raises(ValueError):
        Server("x", "1", list_ttl_ms=-1)
    with pytest.raises(ValueError):
        Server("x", "1", read_cache_scope="shared")  # type: ignore[arg-type]


async def test_resource_not_found_code_depends_on_the_requests_revision() -> None:
    server = build_server()
    with trio.fail_after(5):
        async with stateless(server) as raw:
            code, data = error_of(await raw.call("resources/read", {"uri": "test://nowhere"}))
            assert code == rpc.INVALID_PARAMS and data == {"uri": "test://nowhere"}
        async with connect(server, revision="2025-11-25") as client:
            with pytest.raises(McpError) as info:
                await client.request("resources/read", {"uri": "test://nowhere"})
            assert info.value.code == rpc.RESOURCE_NOT_FOUND_LEGACY


def test_tool_execution_member_is_trimmed_from_2026() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}}
    assert "execution" in compat.tool(tool, "2025-11-25")
    assert "execution" not in compat.tool(tool, MODERN)
    assert "execution" not in compat.tool(tool, "2025-06-18")


# ---------------------------------------------------------------- client capabilities


async def test_asking_without_the_capability_is_32021() -> None:
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            for tool, args, cap in (
                ("elicit", {"message": "?"}, "elicitation"),
                ("sample", {"prompt": "?"}, "sampling"),
                ("roots", {}, "roots"),
                ("test_missing_capability", {}, "sampling"),
            ):
                code, data = error_of(await raw.tool(tool, args, caps={"experimental": {}}))
                assert code == rpc.MISSING_CLIENT_CAPABILITY, tool
                assert data == {"requiredCapabilities": {cap: {}}}
            code, data = error_of(await raw.tool("test_input_required_result_multiple_inputs", caps={"roots": {}}))
            assert data == {"requiredCapabilities": {"elicitation": {}, "sampling": {}}}


async def test_fixture_asks_only_what_the_client_declared() -> None:
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            # can_ask: the prompt fixture does without elicitation when the client lacks it
            plain = await raw.call("prompts/get", {"name": "test_input_required_result_prompt"}, caps={})
            assert plain["result"]["messages"][0]["content"]["text"] == "Use this context: (none)"
            result = (await raw.tool("test_input_required_result_capabilities", caps={"sampling": {}}))["result"]
            assert result["resultType"] == "input_required"
            assert [r["method"] for r in result["inputRequests"].values()] == ["sampling/createMessage"]
            none = await raw.tool("test_input_required_result_capabilities", caps={})
            assert "declared none" in text_of(none)


# ---------------------------------------------------------------- multi-round-trip input

ELICIT_ANSWER = {"action": "accept", "content": {"name": "Ann", "age": 7}}
SAMPLE_ANSWER = {
    "role": "assistant",
    "content": {"type": "text", "text": "Paris"},
    "model": "m",
    "stopReason": "endTurn",
}
ROOTS_ANSWER = {"roots": [{"uri": "file:///work", "name": "work"}]}


@pytest.mark.parametrize(
    ("tool", "arguments", "key", "method", "answer", "expect"),
    [
        ("elicit", {"message": "Who?"}, "elicitation-1", "elicitation/create", ELICIT_ANSWER, '"name": "Ann"'),
        ("sample", {"prompt": "Capital?"}, "sampling-1", "sampling/createMessage", SAMPLE_ANSWER, "Paris"),
        ("roots", {}, "roots-1", "roots/list", ROOTS_ANSWER, "file:///work"),
    ],
)
async def test_mrtr_round_trip(
    tool: str, arguments: dict[str, Any], key: str, method: str, answer: dict[str, Any], expect: str
) -> None:
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            first = (await raw.tool(tool, arguments, caps=ALL_INPUT_CAPS))["result"]
            assert first["resultType"] == "input_required"
            assert list(first["inputRequests"]) == [key]
            assert first["inputRequests"][key]["method"] == method
            assert isinstance(first["requestState"], str)
            assert first["_meta"][sl.SERVER_INFO_KEY]["name"] == "trimcp-reference"
            if method == "elicitation/create":
                assert first["inputRequests"][key]["params"]["message"] == "Who?"
            done = await raw.tool(
                tool,
                arguments,
                caps=ALL_INPUT_CAPS,
                inputResponses={key: answer, "never-asked": {"whatever": 1}},
                requestState=first["requestState"],
            )
            assert expect in text_of(done)


async def test_tampered_or_garbage_request_state_is_invalid_params() -> None:
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            first = (await raw.tool("elicit", {"message": "?"}, caps=ALL_INPUT_CAPS))["result"]
            state = first["requestState"]
            for bad in (
                tamper(state),
                state + "-TAMPERED",
                "not-a-state",
                "v1.AAAA.BBBB",
                "v1.@@.##",
                "v1.A.B",
                "v1..x",
                "v1.\u00e9.x",
                42,
            ):
                response = await raw.tool(
                    "elicit",
                    {"message": "?"},
                    caps=ALL_INPUT_CAPS,
                    inputResponses={"elicitation-1": ELICIT_ANSWER},
                    requestState=bad,
                )
                assert error_of(response)[0] == rpc.INVALID_PARAMS, bad
            # and the genuine one still works
            ok = await raw.tool(
                "elicit",
                {"message": "?"},
                caps=ALL_INPUT_CAPS,
                inputResponses={"elicitation-1": ELICIT_ANSWER},
                requestState=state,
            )
            assert "Ann" in text_of(ok)


async def test_request_state_is_bound_to_its_request() -> None:
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            first = (await raw.tool("elicit", {"message": "a"}, caps=ALL_INPUT_CAPS))["result"]
            state = first["requestState"]
            retry = {"inputResponses": {"elicitation-1": ELICIT_ANSWER}, "requestState": state}
            other_args = await raw.tool("elicit", {"message": "b"}, caps=ALL_INPUT_CAPS, **retry)
            assert error_of(other_args) == (rpc.INVALID_PARAMS, None)
            assert "different request" in other_args["error"]["message"]
            other_tool = await raw.tool("test_input_required_result_tampered_state", caps=ALL_INPUT_CAPS, **retry)
            assert error_of(other_tool)[0] == rpc.INVALID_PARAMS
            other_method = await raw.call(
                "prompts/get",
                {"name": "test_input_required_result_prompt", **retry},
                caps=ALL_INPUT_CAPS,
            )
            assert error_of(other_method)[0] == rpc.INVALID_PARAMS


async def test_missing_or_malformed_answers_are_asked_again() -> None:
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            first = (await raw.tool("elicit", {"message": "?"}, caps=ALL_INPUT_CAPS))["result"]
            for responses in (
                {"wrong_key": ELICIT_ANSWER},
                {"elicitation-1": 12345},
                {"elicitation-1": {"action": "maybe"}},
                {},
            ):
                again = (
                    await raw.tool(
                        "elicit",
                        {"message": "?"},
                        caps=ALL_INPUT_CAPS,
                        inputResponses=responses,
                        requestState=first["requestState"],
                    )
                )["result"]
                assert again["resultType"] == "input_required", responses
                assert list(again["inputRequests"]) == ["elicitation-1"]
            for bad in (None, [1], "x"):
                params = {"name": "elicit", "arguments": {"message": "?"}, "inputResponses": bad}
                if bad is None:
                    params["requestState"] = 5
                assert error_of(await raw.call("tools/call", params, caps=ALL_INPUT_CAPS))[0] == rpc.INVALID_PARAMS


async def test_answers_without_request_state_are_taken() -> None:
    # The conformance suite's "ignore extra params" scenario sends first-round answers with no state.
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            done = await raw.tool(
                "test_input_required_result_elicitation",
                caps=ALL_INPUT_CAPS,
                inputResponses={
                    "user_name": {"action": "accept", "content": {"name": "Alice"}},
                    "unknown_extra_key": {"action": "accept", "content": {"foo": "bar"}},
                },
            )
            assert text_of(done) == "Hello, Alice!"


async def test_two_step_handler_keeps_earlier_answers_in_the_state() -> None:
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            name = "test_input_required_result_multi_round"
            r1 = (await raw.tool(name, caps=ALL_INPUT_CAPS))["result"]
            assert list(r1["inputRequests"]) == ["step1"]
            r2 = (
                await raw.tool(
                    name,
                    caps=ALL_INPUT_CAPS,
                    requestState=r1["requestState"],
                    inputResponses={"step1": {"action": "accept", "content": {"name": "Alice"}}},
                )
            )["result"]
            assert r2["resultType"] == "input_required" and list(r2["inputRequests"]) == ["step2"]
            assert r2["requestState"] != r1["requestState"]
            # only the new answer is sent: step1 comes back out of the state
            r3 = await raw.tool(
                name,
                caps=ALL_INPUT_CAPS,
                requestState=r2["requestState"],
                inputResponses={"step2": {"action": "accept", "content": {"color": "blue"}}},
            )
            assert text_of(r3) == "Alice likes blue"


async def test_several_questions_in_one_round() -> None:
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            name = "test_input_required_result_multiple_inputs"
            r1 = (await raw.tool(name, caps=ALL_INPUT_CAPS))["result"]
            methods = {k: v["method"] for k, v in r1["inputRequests"].items()}
            assert methods == {
                "user_name": "elicitation/create",
                "greeting": "sampling/createMessage",
                "client_roots": "roots/list",
            }
            # a partial answer keeps what was given and asks for the rest
            r2 = (
                await raw.tool(
                    name,
                    caps=ALL_INPUT_CAPS,
                    requestState=r1["requestState"],
                    inputResponses={"user_name": {"action": "accept", "content": {"name": "Alice"}}},
                )
            )["result"]
            assert set(r2["inputRequests"]) == {"greeting", "client_roots"}
            done = await raw.tool(
                name,
                caps=ALL_INPUT_CAPS,
                requestState=r2["requestState"],
                inputResponses={"greeting": SAMPLE_ANSWER, "client_roots": ROOTS_ANSWER},
            )
            assert text_of(done) == "Paris, Alice! Roots: file:///work"


async def test_request_state_fixture_and_prompt_and_resource_reads() -> None:
    server = build_server()

    @server.resource("test://asks", name="asks")
    async def asks(ctx: Context) -> str:
        answer = await ctx.elicit("Which?", {"type": "object", "properties": {"v": {"type": "string"}}})
        return f"you chose {answer['content']['v']}"

    with trio.fail_after(5):
        async with stateless(server) as raw:
            r1 = (await raw.tool("test_input_required_result_request_state", caps=ALL_INPUT_CAPS))["result"]
            done = await raw.tool(
                "test_input_required_result_request_state",
                caps=ALL_INPUT_CAPS,
                requestState=r1["requestState"],
                inputResponses={"confirm": {"action": "accept", "content": {"ok": True}}},
            )
            assert "state-ok" in text_of(done)

            p1 = await raw.call("prompts/get", {"name": "test_input_required_result_prompt"}, caps=ALL_INPUT_CAPS)
            assert list(p1["result"]["inputRequests"]) == ["user_context"]
            p2 = (
                await raw.call(
                    "prompts/get",
                    {
                        "name": "test_input_required_result_prompt",
                        "requestState": p1["result"]["requestState"],
                        "inputResponses": {"user_context": {"action": "accept", "content": {"context": "tests"}}},
                    },
                    caps=ALL_INPUT_CAPS,
                )
            )["result"]
            assert p2["resultType"] == "complete" and "tests" in json.dumps(p2["messages"])

            q1 = (await raw.call("resources/read", {"uri": "test://asks"}, caps=ALL_INPUT_CAPS))["result"]
            assert q1["resultType"] == "input_required" and "ttlMs" not in q1
            q2 = (
                await raw.call(
                    "resources/read",
                    {
                        "uri": "test://asks",
                        "requestState": q1["requestState"],
                        "inputResponses": {"elicitation-1": {"action": "accept", "content": {"v": "blue"}}},
                    },
                    caps=ALL_INPUT_CAPS,
                )
            )["result"]
            assert q2["contents"][0]["text"] == "you chose blue"
            assert q2["ttlMs"] == 0  # a retry's result must not be cached


async def test_suspension_passes_through_broad_excepts_and_nurseries() -> None:
    server = Server("s", "1")

    @server.tool()
    async def careless(ctx: Context) -> str:
        try:
            answer = await ctx.elicit("?", {"type": "object"}, key="q")
        except Exception:
            return "swallowed"
        return str(answer["action"])

    @server.tool()
    async def nursery(ctx: Context) -> str:
        out: list[str] = []

        async def child() -> None:
            out.append((await ctx.sample("hi", 5, key="s"))["model"])

        async with trio.open_nursery() as n:
            n.start_soon(child)
        return out[0]

    @server.tool()
    async def twice(ctx: Context) -> str:
        await ctx.elicit("?", {"type": "object"}, key="same")
        await ctx.elicit("?", {"type": "object"}, key="same")
        return "never"

    @server.completion("ref/prompt", "p", "a")
    async def complete(ctx: Context, value: str, context: dict[str, str]) -> list[str]:
        await ctx.elicit("?", {"type": "object"})
        return []

    @server.prompt()
    async def p(ctx: Context, a: str) -> str:
        return a

    with trio.fail_after(5):
        async with stateless(server) as raw:
            first = (await raw.tool("careless", caps=ALL_INPUT_CAPS))["result"]
            assert first["resultType"] == "input_required" and list(first["inputRequests"]) == ["q"]
            assert (await raw.tool("nursery", caps=ALL_INPUT_CAPS))["result"]["inputRequests"]["s"]
            done = await raw.tool("nursery", caps=ALL_INPUT_CAPS, inputResponses={"s": SAMPLE_ANSWER})
            assert text_of(done) == "m"
            dup = (await raw.tool("twice", caps=ALL_INPUT_CAPS, inputResponses={"same": ELICIT_ANSWER}))["result"]
            assert dup["isError"] is True and "already used" in dup["content"][0]["text"]
            # completion/complete may not answer with InputRequiredResult (spec: mrtr)
            refused = await raw.call(
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "p"},
                    "argument": {"name": "a", "value": ""},
                },
                caps=ALL_INPUT_CAPS,
            )
            assert "error" in refused


def test_state_sealer_expiry_principal_and_shared_secrets() -> None:
    now = [1000.0]
    secret = b"k" * 32
    sealer = StateSealer(secret, ttl=60, clock=lambda: now[0])
    digest = request_digest("tools/call", {"name": "t", "arguments": None})
    assert digest == request_digest("tools/call", {"name": "t", "arguments": {}})
    token = sealer.seal("tools/call", digest, {"k": {"action": "cancel"}}, principal="alice")
    assert sealer.open(token, "tools/call", digest, "alice") == {"k": {"action": "cancel"}}
    # another instance with the same secret accepts it; a different secret does not
    assert StateSealer(secret, clock=lambda: now[0]).open(token, "tools/call", digest, "alice")
    with pytest.raises(InvalidRequestState, match="integrity"):
        StateSealer(b"z" * 32, clock=lambda: now[0]).open(token, "tools/call", digest, "alice")
    with pytest.raises(InvalidRequestState, match="principal"):
        sealer.open(token, "tools/call", digest, "mallory")
    with pytest.raises(InvalidRequestState, match="different request"):
        sealer.open(token, "prompts/get", digest, "alice")
    now[0] += 61
    with pytest.raises(InvalidRequestState, match="expired"):
        sealer.open(token, "tools/call", digest, "alice")
    with pytest.raises(ValueError):
        StateSealer(b"short")
    with pytest.raises(ValueError):
        StateSealer(ttl=0)


async def test_request_state_principal_hook() -> None:
    who = {"name": "alice"}
    server = build_server()
    server.request_state_principal = lambda ctx: who["name"]
    with trio.fail_after(5):
        async with stateless(server) as raw:
            r1 = (await raw.tool("elicit", {"message": "?"}, caps=ALL_INPUT_CAPS))["result"]
            who["name"] = "mallory"
            replay = await raw.tool(
                "elicit",
                {"message": "?"},
                caps=ALL_INPUT_CAPS,
                requestState=r1["requestState"],
                inputResponses={"elicitation-1": ELICIT_ANSWER},
            )
            assert error_of(replay)[0] == rpc.INVALID_PARAMS


def test_input_request_builders() -> None:
    req = inputs.sampling(
        ["a", {"role": "assistant", "content": {"type": "text", "text": "b"}}],
        9,
        system_prompt="s",
        temperature=0.5,
        stop_sequences=["x"],
        metadata={"m": 1},
        model_preferences={"hints": []},
        include_context="none",
    )
    assert req.to_wire()["params"]["messages"][0]["content"]["text"] == "a"
    assert set(req.params) == {
        "messages",
        "maxTokens",
        "systemPrompt",
        "temperature",
        "stopSequences",
        "metadata",
        "modelPreferences",
        "includeContext",
    }
    assert inputs.roots().to_wire() == {"method": "roots/list", "params": {}}
    with pytest.raises(ValueError):
        inputs.missing_capability_error([inputs.InputRequest("ping")], {})


# ---------------------------------------------------------------- logging


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        (None, []),
        ("warning", ["warning", "error"]),
        ("debug", ["debug", "info", "warning", "error"]),
    ],
)
async def test_log_level_comes_from_the_request(level: str | None, expected: list[str]) -> None:
    with trio.fail_after(5):
        async with stateless(build_server()) as raw:
            await raw.tool("log_levels", level=level)
            assert [n["params"]["level"] for n in raw.notes if n["method"] == "notifications/message"] == expected


# ---------------------------------------------------------------- both eras, one server


async def test_one_server_serves_both_eras_at_once() -> None:
    server = build_server()
    handshake_notes: list[str] = []
    with trio.fail_after(10):
        client_end, server_end = memory_stream_pair()
        with collapse():
            async with trio.open_nursery() as nursery:
                await nursery.start(serve_stream, server, server_end)
                async with (
                    open_client(
                        client_end,
                        revision="2025-11-25",
                        handlers=Handlers(notification=lambda m, p: handshake_notes.append(m)),
                    ) as client,
                    stateless(server) as raw,
                ):
                    assert client.protocol_version == "2025-11-25"
                    assert len(server.sessions) == 2
                    slow_done = trio.Event()

                    async def slow_call() -> None:
                        result = await client.call_tool("slow", {"seconds": 0.2, "steps": 2})
                        assert "slept" in result.content[0].text  # type: ignore[union-attr]
                        slow_done.set()

                    nursery.start_soon(slow_call)
                    assert text_of(await raw.tool("echo", {"message": "meanwhile"})) == "meanwhile"
                    assert not slow_done.is_set()
                    await slow_done.wait()
                    await client.call_tool("echo", {"message": "still here"})
                    # a change made from the stateless side reaches the handshake session
                    await raw.tool("toggle_extra_tool")
                    await client.call_tool("echo", {"message": "sync"})
                    assert "notifications/tools/list_changed" in handshake_notes


# ---------------------------------------------------------------- subscriptions/listen


async def test_listen_acknowledges_delivers_and_stops_on_cancel() -> None:
    server = build_server()
    with trio.fail_after(5):
        async with stateless(server) as raw:
            listen = sl.with_envelope(
                {
                    "notifications": {
                        "toolsListChanged": True,
                        "promptsListChanged": False,
                        "resourceSubscriptions": [COUNTER_URI],
                        "somethingNew": True,
                    }
                },
                envelope(),
            )
            await raw.send_request("sub-1", "subscriptions/listen", listen)
            ack = await raw.note()
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert ack["params"]["_meta"][SUB_ID] == "sub-1"
            assert ack["params"]["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": [COUNTER_URI]}

            await raw.tool("toggle_extra_tool")
            [changed] = [n for n in raw.notes if n["method"] == "notifications/tools/list_changed"]
            assert changed["params"]["_meta"][SUB_ID] == "sub-1"
            await raw.tool("bump_counter")
            [updated] = [n for n in raw.notes if n["method"] == "notifications/resources/updated"]
            assert updated["params"] == {"uri": COUNTER_URI, "_meta": {SUB_ID: "sub-1"}}
            await raw.tool("test_trigger_prompt_change")  # not asked for: nothing arrives
            assert not [n for n in raw.notes if n["method"] == "notifications/prompts/list_changed"]

            await raw.stream.send(rpc.Notification("notifications/cancelled", {"requestId": "sub-1"}))
            while server.listeners:
                await trio.sleep(0.01)
            raw.notes.clear()
            await raw.tool("toggle_extra_tool")
            assert raw.notes == []


async def test_listen_graceful_end_and_filter_validation() -> None:
    server = Server("bare", "1")

    @server.tool()
    async def noop(ctx: Context) -> str:
        return ""

    with trio.fail_after(5):
        async with stateless(server) as raw:
            bad = await raw.call("subscriptions/listen", {"notifications": {"toolsListChanged": "yes"}})
            assert error_of(bad)[0] == rpc.INVALID_PARAMS
            bad = await raw.call("subscriptions/listen", {"notifications": {"resourceSubscriptions": "x"}})
            assert error_of(bad)[0] == rpc.INVALID_PARAMS
            assert error_of(await raw.call("subscriptions/listen", {}))[0] == rpc.INVALID_PARAMS

            params = sl.with_envelope(
                {
                    "notifications": {
                        "toolsListChanged": True,
                        "promptsListChanged": True,
                        "resourceSubscriptions": ["x:y"],
                    }
                },
                envelope(),
            )
            await raw.send_request(7, "subscriptions/listen", params)
            ack = await raw.note()
            assert ack["params"]["notifications"] == {"toolsListChanged": True}  # no prompts, no resources
            assert len(server.listeners) == 1
            server.end_subscriptions()
            closing = await raw.response(7)
            assert closing["result"]["resultType"] == "complete"
            assert closing["result"]["_meta"][SUB_ID] == 7
            assert not server.listeners


# ---------------------------------------------------------------- the reference fixtures, both eras


@pytest.mark.parametrize("revision", [None, "2025-11-25"])
async def test_reference_input_fixtures_work_in_both_eras(revision: str | None) -> None:
    from trimcp._sansio import schema as s

    async def on_sampling(params: Any) -> dict[str, Any]:
        return SAMPLE_ANSWER

    async def on_elicitation(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ann", "ok": True, "color": "red", "context": "c"}}

    server = build_server()
    client_end, server_end = memory_stream_pair()
    with trio.fail_after(10), collapse():
        async with trio.open_nursery() as nursery:
            await nursery.start(serve_stream, server, server_end)
            async with open_client(
                client_end,
                revision=revision,
                handlers=Handlers(sampling=on_sampling, elicitation=on_elicitation, roots=[s.Root(uri="file:///r")]),
            ) as client:
                assert (client.protocol_version == MODERN) is (revision is None)

                async def call(name: str) -> str:
                    result = await client.call_tool(name)
                    assert not result.is_error, result
                    return " ".join(b.text for b in result.content if isinstance(b, s.TextContent))

                assert await call("test_input_required_result_elicitation") == "Hello, Ann!"
                assert await call("test_input_required_result_sampling") == "Model answer: Paris"
                assert await call("test_input_required_result_list_roots") == "Client roots: file:///r"
                assert await call("test_input_required_result_multiple_inputs") == "Paris, Ann! Roots: file:///r"
                assert await call("test_input_required_result_multi_round") == "Ann likes red"
                assert await call("test_input_required_result_tampered_state") == "confirmed: True"
                assert await call("test_streaming_elicitation") == "confirmed: True"
                assert await call("test_missing_capability") == "Model answer: Paris"
                assert await call("test_input_required_result_capabilities") == (
                    "answered: client_roots, greeting, user_name"
                )
                state = await call("test_input_required_result_request_state")
                assert state.startswith("state-ok" if revision is None else "no request state")
                assert await call("test_logging_tool") == "logged three messages"
                assert await call("test_trigger_tool_change") == "test_dynamic_tool added"
                assert await call("test_dynamic_tool") == "dynamic"
                assert await call("test_trigger_tool_change") == "test_dynamic_tool removed"
                assert await call("test_trigger_prompt_change") == "test_dynamic_prompt added"
                prompt = await client.request("prompts/get", {"name": "test_dynamic_prompt"})
                assert prompt["messages"][0]["content"]["text"] == "A prompt that comes and goes."
                assert await call("test_trigger_prompt_change") == "test_dynamic_prompt removed"
                got = await client.request("prompts/get", {"name": "test_input_required_result_prompt"})
                assert got["messages"][0]["content"]["text"] == "Use this context: c"
                read = await client.request("resources/read", {"uri": "test://watched-resource"})
                assert read["contents"][0]["text"].startswith("A resource")
