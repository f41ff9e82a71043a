"""Client adapter for the official MCP conformance suite (``conformance client``).

Theory of operation
-------------------
The suite starts a mock server per scenario and runs this script with the
server's URL as the last argument; the scenario's name is in
``MCP_CONFORMANCE_SCENARIO``, its extra JSON in ``MCP_CONFORMANCE_CONTEXT``
and the revision under test in ``MCP_CONFORMANCE_PROTOCOL_VERSION``.  The
script must do what the scenario expects of a client and exit 0.

It uses only trimcp's public API (``trimcp.open_client`` and
``ClientSession``), so each handler doubles as an example of how a user writes
that behaviour.  Most scenarios want the same thing, "act like an ordinary
client": connect, list the tools, call them, read the resources, get the
prompts; ``exercise`` does that, and the table ``SCENARIOS`` names a handler
per scenario.  Server-to-client requests (sampling, elicitation, roots) are
answered by the callbacks given to ``open_client``; in the 2026-07-28 era the
very same callbacks answer the server's ``inputRequests``.

Authorization scenarios (``auth/*``) run the same ordinary client with a
``trimcp.oauth.OAuthProvider``: its headless ``authorize`` callback fetches
the authorization URL without following redirects and returns the
``Location`` the mock authorization server answers with; pre-registered
credentials come from the scenario context.  The client-credentials
scenarios (an extension) use ``OAuthProvider(grant="client_credentials")``
with the context's secret or private key instead; the DPoP scenarios
(``auth/dpop``, ``auth/dpop-nonce``, RFC 9449) use ``OAuthProvider(dpop=True)``;
enterprise-managed authorization and workload identity use
``EnterpriseProvider`` and ``WorkloadIdentityProvider`` with the context's ID
token or workload JWT.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import trio

import trimcp
from trimcp import schema

Handler = Callable[[str, dict[str, Any], "str | None"], Awaitable[None]]


def log(message: str) -> None:
    print(f"[trimcp-conformance-client] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------- callbacks


def _with_defaults(requested_schema: Any) -> dict[str, Any]:
    """The form a user accepts without touching anything: every field's ``default``."""
    wire = trimcp.schema.to_wire(requested_schema) if not isinstance(requested_schema, dict) else requested_schema
    content: dict[str, Any] = {}
    for name, prop in (wire.get("properties") or {}).items():
        if isinstance(prop, dict) and "default" in prop:
            content[name] = prop["default"]
    return content


async def accept_with_defaults(params: schema.ElicitRequestParams) -> dict[str, Any]:
    """Elicitation: accept, filling each field with its schema default (SEP-1034)."""
    wire = trimcp.schema.to_wire(params)
    return {"action": "accept", "content": _with_defaults(wire.get("requestedSchema") or {})}


async def sample(params: schema.CreateMessageRequestParams) -> dict[str, Any]:
    """Sampling: a canned model answer."""
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "Hello from the trimcp conformance client"},
        "model": "trimcp-test-model",
        "stopReason": "endTurn",
    }


ROOTS = [{"uri": "file:///tmp/trimcp-conformance", "name": "conformance root"}]


def connect(url: str, revision: str | None, **options: Any) -> Any:
    """``open_client`` with the answers an interactive user would give."""
    options.setdefault("elicitation_handler", accept_with_defaults)
    options.setdefault("sampling_handler", sample)
    options.setdefault("roots", [schema.from_wire(schema.Root, r) for r in ROOTS])
    return trimcp.open_client(url, revision=revision, timeouts=trimcp.Timeouts(connect=20), **options)


# ----------------------------------------------------------- behaviours


def _example(prop: dict[str, Any]) -> Any:
    """A plausible value for one property of a tool's inputSchema."""
    if "default" in prop:
        return prop["default"]
    if prop.get("enum"):
        return prop["enum"][0]
    if "const" in prop:
        return prop["const"]
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return {
        "number": 1,
        "integer": 1,
        "boolean": True,
        "array": [],
        "object": {},
        "null": None,
    }.get(kind, "example")


def example_arguments(tool: schema.Tool) -> dict[str, Any]:
    """Arguments for every required parameter of ``tool``."""
    wire = trimcp.schema.to_wire(tool).get("inputSchema") or {}
    props = wire.get("properties") or {}
    return {name: _example(props.get(name) or {}) for name in wire.get("required") or []}


async def exercise(url: str, context: dict[str, Any], revision: str | None) -> None:
    """Act like an ordinary client: use every tool, resource and prompt the server offers.

    The tool calls come from the scenario's ``toolCalls`` when it gives them,
    else one call per listed tool with example arguments.
    """
    async with connect(url, revision) as session:
        caps = (
            trimcp.schema.to_wire(session.server_capabilities)
            if not isinstance(session.server_capabilities, dict)
            else session.server_capabilities
        )
        if "tools" in caps:
            tools = await session.list_tools()
            calls = context.get("toolCalls")
            if calls is None:
                calls = [{"name": t.name, "arguments": example_arguments(t)} for t in tools]
            for call in calls:
                try:
                    result = await session.call_tool(call["name"], call.get("arguments") or {})
                    log(f"tools/call {call['name']}: {trimcp.schema.to_wire(result)}")
                except trimcp.TrimcpError as exc:
                    log(f"tools/call {call['name']} failed: {exc!r}")
        if "resources" in caps:
            for resource in await session.list_resources():
                await session.read_resource(resource.uri)
        if "prompts" in caps:
            for prompt in await session.list_prompts():
                wire = trimcp.schema.to_wire(prompt)
                args = {a["name"]: "example" for a in wire.get("arguments") or [] if a.get("required")}
                await session.get_prompt(prompt.name, args)


async def list_tools_only(url: str, context: dict[str, Any], revision: str | None) -> None:
    """List the tools (their schemas are kept as data: no ``$ref`` is fetched) and stop."""
    async with connect(url, revision) as session:
        for tool in await session.list_tools():
            log(f"tool {tool.name}")


async def echo_schema(url: str, context: dict[str, Any], revision: str | None) -> None:
    """Hand a tool's inputSchema back to the server exactly as the client holds it."""
    async with connect(url, revision) as session:
        tools = {tool.name: tool for tool in await session.list_tools()}
        focal = trimcp.schema.to_wire(tools["json_schema_2020_12_tool"])["inputSchema"]
        await session.call_tool("json_schema_echo", {"schema": focal})


async def initialize_only(url: str, context: dict[str, Any], revision: str | None) -> None:
    """Connect (initialize or server/discover) and disconnect."""
    async with connect(url, revision) as session:
        log(f"connected: {session.era.value} era, revision {session.protocol_version}")


CIMD_URL = "https://conformance-test.local/client-metadata.json"


async def headless_authorize(authorization_url: str) -> str:
    """The user agent: GET the authorization URL, return where it redirects."""
    import httpx

    async with httpx.AsyncClient(follow_redirects=False, timeout=20) as http:
        response = await http.get(authorization_url)
    location = response.headers.get("location")
    if response.status_code not in (301, 302, 303, 307, 308) or not location:
        raise RuntimeError(f"the authorization endpoint answered {response.status_code} without a redirect")
    return location


def scenario_issuer(issuer: str) -> bool:
    """The host's ``trust_issuer``: the scenario's credentials are for the mock authorization
    server it runs on another localhost port (so not on the MCP server's origin, which is
    all trimcp trusts on its own), and only that one."""
    from urllib.parse import urlsplit

    return urlsplit(issuer).hostname in ("localhost", "127.0.0.1")


def oauth_provider(context: dict[str, Any], revision: str | None, *, dpop: bool | None = None) -> Any:
    from trimcp.oauth import OAuthProvider

    return OAuthProvider(
        dpop=dpop,
        authorize=headless_authorize,
        redirect_uri="http://localhost:3000/callback",
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_metadata_url=CIMD_URL,
        client_name="trimcp-conformance-client",
        revision=revision,
        trust_issuer=scenario_issuer,
    )


def client_credentials_provider(context: dict[str, Any], revision: str | None) -> Any:
    """Machine-to-machine OAuth (SEP-1046): a secret or a private key from the scenario context."""
    from trimcp.oauth import OAuthProvider

    return OAuthProvider(
        grant="client_credentials",
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        private_key_pem=context.get("private_key_pem"),
        signing_algorithm=context.get("signing_algorithm"),
        revision=revision,
        trust_issuer=scenario_issuer,
    )


async def with_client_credentials(url: str, context: dict[str, Any], revision: str | None) -> None:
    """An ordinary client session, authorized with the client-credentials grant."""
    async with connect(url, revision, auth=client_credentials_provider(context, revision)) as session:
        for tool in await session.list_tools():
            await session.call_tool(tool.name, example_arguments(tool))


async def with_oauth(url: str, context: dict[str, Any], revision: str | None) -> None:
    """An ordinary client session, authorized with OAuth when the server asks."""
    async with connect(url, revision, auth=oauth_provider(context, revision)) as session:
        caps = (
            trimcp.schema.to_wire(session.server_capabilities)
            if not isinstance(session.server_capabilities, dict)
            else session.server_capabilities
        )
        if "tools" in caps:
            for tool in await session.list_tools():
                try:
                    await session.call_tool(tool.name, example_arguments(tool))
                except trimcp.TrimcpError as exc:
                    log(f"tools/call {tool.name} failed: {exc!r}")


async def with_dpop(url: str, context: dict[str, Any], revision: str | None) -> None:
    """OAuth with DPoP-bound tokens (RFC 9449): required here, not just taken when offered."""
    async with connect(url, revision, auth=oauth_provider(context, revision, dpop=True)) as session:
        for tool in await session.list_tools():
            await session.call_tool(tool.name, example_arguments(tool))


async def with_enterprise_auth(url: str, context: dict[str, Any], revision: str | None) -> None:
    """Enterprise-managed authorization: the context's IdP ID token -> ID-JAG -> access token."""
    from trimcp.oauth import EnterpriseProvider

    auth = EnterpriseProvider(
        id_token=context["idp_id_token"],
        idp_token_endpoint=context.get("idp_token_endpoint"),
        idp_issuer=context.get("idp_issuer"),
        idp_client_id=context.get("idp_client_id"),
        client_id=context["client_id"],
        client_secret=context.get("client_secret"),
        revision=revision,
        trust_issuer=scenario_issuer,
    )
    async with connect(url, revision, auth=auth) as session:
        for tool in await session.list_tools():
            await session.call_tool(tool.name, example_arguments(tool))


async def with_workload_identity(url: str, context: dict[str, Any], revision: str | None) -> None:
    """Workload identity federation: the context's workload JWT is the JWT-bearer assertion."""
    from trimcp.oauth import WorkloadIdentityProvider

    auth = WorkloadIdentityProvider(
        assertion=context["valid_jwt"],
        client_id=context.get("client_id"),
        revision=revision,
        trust_issuer=scenario_issuer,
    )
    async with connect(url, revision, auth=auth) as session:
        await session.list_tools()


SCENARIOS: dict[str, Handler] = {
    "initialize": initialize_only,
    "tools_call": exercise,
    "elicitation-sep1034-client-defaults": exercise,
    "sse-retry": exercise,
    "request-metadata": exercise,
    "sep-2322-client-request-state": exercise,
    "http-standard-headers": exercise,
    "http-custom-headers": exercise,
    "http-invalid-tool-headers": exercise,
    "json-schema-ref-no-deref": list_tools_only,
    "json-schema-2020-12-preservation": echo_schema,
    "auth/client-credentials-basic": with_client_credentials,
    "auth/client-credentials-jwt": with_client_credentials,
    "auth/dpop": with_dpop,
    "auth/dpop-nonce": with_dpop,
    "auth/enterprise-managed-authorization": with_enterprise_auth,
    "auth/wif-jwt-bearer": with_workload_identity,
}


def handler_for(scenario: str) -> Handler:
    if scenario.startswith("auth/") and scenario not in SCENARIOS:
        return with_oauth
    return SCENARIOS.get(scenario, exercise)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: client.py [options...] SERVER_URL", file=sys.stderr)
        return 2
    url = argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    revision = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None
    log(f"scenario {scenario!r}, revision {revision}, server {url}")
    try:
        trio.run(handler_for(scenario), url, context, revision)
    except NotImplementedError as exc:
        log(f"not built: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
