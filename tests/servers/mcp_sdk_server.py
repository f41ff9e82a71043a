"""A third-party MCP server built with the official ``mcp`` Python SDK (2.x), for trimcp's tests.

Theory of operation: trimcp is written from the specification, so its tests talk to servers it
did not write.  This one uses the SDK's high-level ``MCPServer`` (formerly FastMCP,
``mcp.server.mcpserver``) and serves every revision the SDK knows: the handshake era
(2024-11-05 .. 2025-11-25, ``initialize`` first) and the stateless 2026-07-28 era
(``server/discover``, ``_meta`` envelope, ``InputRequiredResult`` for server->client input).

Features it exposes (names are part of the test contract -- change them with the tests):

tools
  echo(text)                  -> text content ``text``
  add(a, b)                   -> structured output ``{"sum": a + b}`` (+ outputSchema)
  slow(seconds)               -> sleeps, then ``"slept <seconds>"`` (cancellation/timeouts)
  big(size)                   -> a text of exactly ``size`` bytes of ``"x"`` (framing caps)
  progress(steps, delay=0.0)  -> logs one ``notifications/message`` and sends one
                                 ``notifications/progress`` per step (when the caller sent a
                                 progressToken); returns ``"done <steps>"``
  fail(message)               -> a tool error: result with ``isError: true``
  ask_name()                  -> elicitation (form: ``{"name": string}``); returns
                                 ``"hello <name>"`` / ``"declined"`` / ``"cancelled"``
  sample(prompt)              -> sampling/createMessage; returns the sampled text
  roots()                     -> roots/list; returns the root URIs, one per line
  (the last three send standalone requests in the handshake era and come back as
  ``InputRequiredResult`` at 2026-07-28)
resources
  trimcp://static/hello       -> text ``"hello from the mcp sdk server"``
  trimcp://echo/{value}       -> template: text ``"echo: <value>"``
prompts
  greet(name, style="plain")  -> one user message

Run:  python tests/servers/mcp_sdk_server.py [--transport stdio|streamable-http|sse]
                                             [--port N] [--host 127.0.0.1]
HTTP transports bind loopback only; ``--port 0`` is not supported by the SDK's uvicorn runner,
so pick a free port first.  stdout carries only protocol on stdio; chatter goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Annotated

import anyio
from mcp.server.mcpserver import (
    Context,
    Elicit,
    ElicitationResult,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field

# Logging, sampling and roots are deprecated at 2026-07-28 (SEP-2577) but we serve older
# revisions too; keep the SDK's deprecation warnings off stderr.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

LOOPBACK = {"127.0.0.1", "::1", "localhost"}

server = MCPServer(
    name="trimcp-test-sdk-server",
    version="1.0.0",
    instructions="Test server for trimcp, built with the official mcp Python SDK.",
    log_level="WARNING",
)


# -- tools ------------------------------------------------------------------------------------


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


class AddResult(BaseModel):
    sum: float = Field(description="a + b")


@server.tool()
def add(a: float, b: float) -> AddResult:
    """Add two numbers; the answer comes back as structured content."""
    return AddResult(sum=a + b)


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep for the given number of seconds, then answer."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def big(size: int) -> str:
    """Return a text of exactly `size` bytes."""
    if size < 0:
        raise ToolError("size must be >= 0")
    return "x" * size


@server.tool()
async def progress(steps: int, ctx: Context, delay: float = 0.0) -> str:
    """Log once, then report progress `steps` times (when the caller asked for progress)."""
    await ctx.info(f"progress: starting {steps} steps")
    for i in range(1, steps + 1):
        if delay:
            await anyio.sleep(delay)
        await ctx.report_progress(i, steps, f"step {i}/{steps}")
    return f"done {steps}"


@server.tool()
def fail(message: str = "this tool always fails") -> str:
    """Always fail with a tool error (isError: true)."""
    raise ToolError(message)


class Name(BaseModel):
    name: str = Field(description="Your name")


def _ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool()
def ask_name(answer: Annotated[ElicitationResult[Name], Resolve(_ask_name)]) -> str:
    """Ask the user for their name via elicitation (form mode)."""
    if answer.action == "accept":
        return f"hello {answer.data.name}"
    return "declined" if answer.action == "decline" else "cancelled"


def _sample(prompt: str) -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=64,
        system_prompt="You are a test double.",
    )


@server.tool()
def sample(prompt: str, result: Annotated[CreateMessageResult, Resolve(_sample)]) -> str:
    """Ask the client's LLM (sampling/createMessage) and return its text."""
    content = result.content
    return content.text if isinstance(content, TextContent) else repr(content)


def _list_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def roots(listed: Annotated[ListRootsResult, Resolve(_list_roots)]) -> str:
    """Return the client's roots (roots/list), one URI per line."""
    return "\n".join(str(r.uri) for r in listed.roots)


# -- resources --------------------------------------------------------------------------------


@server.resource("trimcp://static/hello", name="hello", mime_type="text/plain")
def hello() -> str:
    """A fixed text resource."""
    return "hello from the mcp sdk server"


@server.resource("trimcp://echo/{value}", name="echo-template", mime_type="text/plain")
def echo_resource(value: str) -> str:
    """A resource template: echoes the URI's value."""
    return f"echo: {value}"


# -- prompts ----------------------------------------------------------------------------------


@server.prompt()
def greet(name: str, style: str = "plain") -> str:
    """Greet someone, in a style."""
    if style == "shout":
        return f"HELLO, {name.upper()}!"
    return f"Please greet {name}."


# -- main -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="trimcp test server (official mcp SDK)")
    ap.add_argument("--transport", choices=["stdio", "streamable-http", "sse"], default="stdio")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument(
        "--json-response",
        action="store_true",
        help="streamable-http: answer POSTs with application/json, not SSE",
    )
    ap.add_argument(
        "--stateless",
        action="store_true",
        help="streamable-http: no Mcp-Session-Id (stateless_http=True)",
    )
    ns = ap.parse_args(argv)
    if ns.host not in LOOPBACK:
        ap.error("this test server binds loopback only")
    if ns.transport == "stdio":
        server.run("stdio")
    elif ns.transport == "sse":
        server.run("sse", host=ns.host, port=ns.port)
    else:
        server.run(
            "streamable-http",
            host=ns.host,
            port=ns.port,
            json_response=ns.json_response,
            stateless_http=ns.stateless,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
