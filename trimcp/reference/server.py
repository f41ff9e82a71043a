"""The trimcp reference server: every server feature of both eras, in one place.

Theory of operation
-------------------
Run it with ``python -m trimcp.reference`` (stdio).  It is what the
test-suite and the conformance harness talk to, and a worked example of the
``trimcp.server`` API.  ``build_server()`` returns a fresh ``Server`` so that
each session of a test starts from the same registry (``toggle_extra_tool``
mutates it).

It speaks every revision trimcp knows: handshake clients (2024-11-05 ..
2025-11-25) get a session, 2026-07-28 clients are served statelessly, and the
``sample``, ``elicit`` and ``roots`` tools work in both (real server-to-client
requests, or multi-round-trip ``InputRequiredResult`` answers).

What it exercises:

* tools: plain text (``echo``), structured output with ``outputSchema``
  (``add``), progress and cancellation (``slow``), logging at several levels
  (``log_levels``), server-to-client requests (``sample``, ``elicit``,
  ``roots``), ``isError`` (``fail``), every content type (``media``), large
  results (``large_output``), ``resources/updated`` (``bump_counter``) and
  ``tools/list_changed`` (``toggle_extra_tool``); read-only tools carry
  ``readOnlyHint`` and ``openWorldHint: false`` (none reaches outside);
* resources: static text, static binary, a counter that changes, and the
  template ``test://template/{id}/data``; subscriptions;
* an MCP Apps view of ``echo`` (``views.py``), linked for clients that declare
  the ``io.modelcontextprotocol/ui`` extension;
* prompts with arguments, embedded resources and images; completion of a
  prompt argument and of a template variable;
* pagination (``page_size`` 5 by default, so ``tools/list`` has several
  pages) and ``instructions``;
* the fixture names the official conformance suite's server scenarios call
  (``test_simple_text``, ``test://static-text``, ``test_simple_prompt``, ...),
  including the 2026-07-28 ones in ``stateless``
  (``test_input_required_result_*``, ``test_missing_capability``,
  ``test_trigger_tool_change``, ...).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import struct
import zlib
from typing import Any

import trio

from .._version import __version__
from ..server.content import audio, embedded_text, error_result, image, resource_link, text
from ..server.context import Context
from ..server.definition import Server
from ..server.serve import serve_stdio
from . import stateless as _reference_stateless
from .views import ECHO_VIEW, register_views

__all__ = ["INSTRUCTIONS", "NAME", "PNG", "VERSION", "WAV", "build_server", "main"]

NAME = "trimcp-reference"
VERSION = __version__
INSTRUCTIONS = (
    "Reference server of the trimcp library. Every tool is harmless; "
    "'slow' takes a while and can be cancelled, 'sample', 'elicit' and 'roots' ask the client."
)
#: Every tool here touches nothing outside the process (asking the client is not the outside
#: world), so it is closed-world too: ``trimcp check --no-open-world`` still calls it.
READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
COUNTER_URI = "trimcp://reference/counter"
LANGUAGES = ("Dutch", "English", "French", "German", "Greek", "Italian", "Polish", "Spanish")


def _png_1x1() -> bytes:
    """A valid 1x1 red PNG, built rather than pasted."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte + one red pixel
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def _wav_silence(samples: int = 80, rate: int = 8000) -> bytes:
    """A valid mono 8-bit PCM WAV of ``samples`` silent samples."""
    data = b"\x80" * samples
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate, 1, 8)
    return (
        b"RIFF"
        + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data))
        + b"WAVE"
        + b"fmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + b"data"
        + struct.pack("<I", len(data))
        + data
    )


PNG = _png_1x1()
WAV = _wav_silence()


def build_server(*, page_size: int | None = 5) -> Server:
    """A fresh reference server."""
    server = Server(
        NAME,
        VERSION,
        title="trimcp reference server",
        instructions=INSTRUCTIONS,
        page_size=page_size,
    )
    _register_tools(server)
    _register_conformance_tools(server)
    _register_resources(server)
    register_views(server)
    _register_prompts(server)
    _reference_stateless.register(server)
    return server


# ------------------------------------------------------------------------ tools


def _register_tools(server: Server) -> None:
    counter = {"value": 0}

    @server.tool(annotations=READ_ONLY, ui=ECHO_VIEW)
    async def echo(ctx: Context, message: str) -> str:
        """Return the message unchanged."""
        return message

    @server.tool(
        title="Add two numbers",
        output_schema={"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
        annotations=READ_ONLY,
    )
    async def add(ctx: Context, a: float, b: float) -> dict[str, Any]:
        """Add a and b; the sum comes back as structured content."""
        return {"sum": a + b}

    @server.tool(annotations=READ_ONLY)
    async def slow(ctx: Context, seconds: float = 1.0, steps: int = 4) -> str:
        """Sleep for `seconds`, reporting progress `steps` times; cancellable at any point."""
        steps = max(1, steps)
        for i in range(steps):
            await trio.sleep(seconds / steps)
            await ctx.report_progress(i + 1, steps, f"step {i + 1} of {steps}")
        return f"slept {seconds} s"

    @server.tool(annotations=READ_ONLY)
    async def log_levels(ctx: Context) -> str:
        """Log one message at each of debug, info, warning and error."""
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, f"a {level} message", logger="reference")
        return "logged at debug, info, warning and error"

    @server.tool(annotations=READ_ONLY)
    async def sample(ctx: Context, prompt: str, max_tokens: int = 100) -> str:
        """Ask the client's model to answer `prompt` (sampling/createMessage)."""
        result = await ctx.sample(prompt, max_tokens)
        return _sampled_text(result)

    @server.tool(annotations=READ_ONLY)
    async def elicit(ctx: Context, message: str) -> str:
        """Ask the user for a name and an age (elicitation/create)."""
        answer = await ctx.elicit(
            message,
            {
                "type": "object",
                "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
                "required": ["name"],
            },
        )
        return json.dumps(answer, sort_keys=True)

    @server.tool(annotations=READ_ONLY)
    async def roots(ctx: Context) -> str:
        """List the client's roots (roots/list)."""
        return json.dumps(await ctx.list_roots(), sort_keys=True)

    @server.tool(annotations=READ_ONLY)
    async def fail(ctx: Context, message: str = "this tool always fails") -> dict[str, Any]:
        """Report a tool error in the result (isError), not as a protocol error."""
        return error_result(message)

    @server.tool(annotations=READ_ONLY)
    async def media(ctx: Context) -> list[dict[str, Any]]:
        """Return one block of every content type: text, image, audio, resource link, resource."""
        return [
            text("one of each content type follows"),
            image(PNG, "image/png"),
            audio(WAV, "audio/wav"),
            resource_link("test://static-text", "static-text", mime_type="text/plain"),
            embedded_text("trimcp://reference/embedded", "embedded text resource"),
        ]

    @server.tool(annotations=READ_ONLY)
    async def large_output(ctx: Context, size: int = 1_000_000) -> str:
        """Return `size` bytes of text."""
        if not 0 <= size <= 64 * 1024 * 1024:
            raise ValueError("size must be between 0 and 64 MiB")
        return ("0123456789abcdef" * (size // 16 + 1))[:size]

    @server.resource(
        COUNTER_URI, name="counter", mime_type="text/plain", description="A number that bump_counter increments."
    )
    async def read_counter(ctx: Context) -> str:
        return str(counter["value"])

    @server.tool()
    async def bump_counter(ctx: Context) -> str:
        """Increment the counter resource and notify its subscribers (resources/updated)."""
        counter["value"] += 1
        await ctx.server.notify_resource_updated(COUNTER_URI)
        return str(counter["value"])

    @server.tool()
    async def toggle_extra_tool(ctx: Context) -> str:
        """Add the tool `extra`, or remove it if present, and announce tools/list_changed."""
        if "extra" in ctx.server.tools:
            ctx.server.remove_tool("extra")
            state = "removed"
        else:
            ctx.server.add_tool(_extra, "extra", annotations=READ_ONLY)
            state = "added"
        await ctx.server.notify_tools_list_changed()
        return f"extra tool {state}"


async def _extra(ctx: Context) -> str:
    """A tool that comes and goes."""
    return "extra"


def _elicitation_summary(answer: dict[str, Any]) -> str:
    content = json.dumps(answer.get("content", {}), sort_keys=True)
    return f"Elicitation completed: action={answer.get('action')}, content={content}"


#: The focal schema of the suite's ``json-schema-2020-12`` scenario: every keyword must survive tools/list.
JSON_SCHEMA_2020_12_INPUT: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        },
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def _sampled_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    blocks = content if isinstance(content, list) else [content]
    texts = [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return " ".join(texts) if texts else json.dumps(content)


def _register_conformance_tools(server: Server) -> None:
    """The tool fixtures of the official conformance suite's server scenarios."""

    @server.tool(annotations=READ_ONLY)
    async def test_simple_text(ctx: Context) -> str:
        """Return one text block."""
        return "A plain text answer from the trimcp reference server."

    @server.tool(annotations=READ_ONLY)
    async def test_image_content(ctx: Context) -> list[dict[str, Any]]:
        """Return a 1x1 PNG image."""
        return [image(PNG, "image/png")]

    @server.tool(annotations=READ_ONLY)
    async def test_audio_content(ctx: Context) -> list[dict[str, Any]]:
        """Return a short silent WAV clip."""
        return [audio(WAV, "audio/wav")]

    @server.tool(annotations=READ_ONLY)
    async def test_embedded_resource(ctx: Context) -> list[dict[str, Any]]:
        """Return an embedded text resource."""
        return [embedded_text("test://embedded-resource", "Text of a resource embedded in a tool result.")]

    @server.tool(annotations=READ_ONLY)
    async def test_multiple_content_types(ctx: Context) -> list[dict[str, Any]]:
        """Return text, an image and an embedded resource."""
        return [
            text("Three content blocks:"),
            image(PNG, "image/png"),
            embedded_text("test://mixed-content-resource", json.dumps({"kind": "mixed", "n": 3}), "application/json"),
        ]

    @server.tool(annotations=READ_ONLY)
    async def test_tool_with_logging(ctx: Context) -> str:
        """Log three info messages about 50 ms apart."""
        for i, what in enumerate(("starting", "working", "done")):
            if i:
                await trio.sleep(0.05)
            await ctx.log("info", f"test_tool_with_logging: {what}")
        return "logged three messages"

    @server.tool(annotations=READ_ONLY)
    async def test_tool_with_progress(ctx: Context) -> str:
        """Report progress 0, 50 and 100 of 100, about 50 ms apart."""
        for i, value in enumerate((0, 50, 100)):
            if i:
                await trio.sleep(0.05)
            await ctx.report_progress(value, 100)
        return "progress reported"

    @server.tool(annotations=READ_ONLY)
    async def test_error_handling(ctx: Context) -> str:
        """Always fail; the failure is reported with isError."""
        raise RuntimeError("test_error_handling fails on purpose")

    @server.tool(annotations=READ_ONLY)
    async def test_sampling(ctx: Context, prompt: str) -> str:
        """Send `prompt` to the client's model and return its answer."""
        result = await ctx.sample(prompt, 100)
        return f"Model answer: {_sampled_text(result)}"

    @server.tool(annotations=READ_ONLY)
    async def test_elicitation(ctx: Context, message: str) -> str:
        """Ask the user for a username and an email address."""
        answer = await ctx.elicit(
            message,
            {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "Your user name"},
                    "email": {"type": "string", "description": "Your email address"},
                },
                "required": ["username", "email"],
            },
        )
        return f"Elicitation result: {json.dumps(answer, sort_keys=True)}"

    @server.tool(annotations=READ_ONLY)
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Ask for five fields, each with a default value (SEP-1034)."""
        answer = await ctx.elicit(
            "Please review these values; each has a default.",
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {
                        "type": "string",
                        "description": "User status",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active",
                    },
                    "verified": {"type": "boolean", "description": "Verified?", "default": True},
                },
            },
        )
        return _elicitation_summary(answer)

    @server.tool(annotations=READ_ONLY)
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Ask for one value of each enum flavour: untitled, titled, legacy, multi-select (SEP-1330)."""
        answer = await ctx.elicit(
            "Pick one value of each kind.",
            {
                "type": "object",
                "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {
                        "type": "string",
                        "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"},
                        ],
                    },
                    "legacyEnum": {
                        "type": "string",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"],
                    },
                    "untitledMulti": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    },
                    "titledMulti": {
                        "type": "array",
                        "items": {
                            "anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"},
                            ]
                        },
                    },
                },
            },
        )
        return _elicitation_summary(answer)

    @server.tool(
        description="Tool with JSON Schema 2020-12 features",
        input_schema=JSON_SCHEMA_2020_12_INPUT,
        annotations=READ_ONLY,
    )
    async def json_schema_2020_12_tool(ctx: Context, **arguments: Any) -> str:
        return f"received {json.dumps(arguments, sort_keys=True)}"

    @server.tool(
        description="Echo a region; the region travels in the Mcp-Param-Region header too (2026-07-28).",
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "note": {"type": "string"},
            },
            "required": ["region"],
        },
        annotations=READ_ONLY,
    )
    async def test_custom_header(ctx: Context, region: str, note: str = "") -> str:
        return f"region: {region}"

    @server.tool(annotations=READ_ONLY)
    async def test_reconnection(ctx: Context) -> str:
        """Hang up this request's SSE stream, then answer on the resumed stream (SSE polling)."""
        from ..server.transports.http.app import close_sse_stream  # only HTTP sessions have a stream to hang up

        await ctx.log("info", "test_reconnection: closing the stream")
        close_sse_stream(ctx.session, ctx.request_id)
        await trio.sleep(0.2)
        return "Reconnection test completed"


# ------------------------------------------------------------------------ resources


def _register_resources(server: Server) -> None:
    @server.resource(
        "test://static-text", name="static-text", mime_type="text/plain", description="A fixed text resource."
    )
    async def static_text(ctx: Context) -> str:
        return "Static text served by the trimcp reference server."

    @server.resource(
        "test://static-binary",
        name="static-binary",
        mime_type="image/png",
        description="A fixed binary resource (a 1x1 PNG).",
    )
    async def static_binary(ctx: Context) -> bytes:
        return PNG

    @server.resource_template(
        "test://template/{id}/data",
        name="template-data",
        mime_type="application/json",
        description="JSON data for any id.",
    )
    async def template_data(ctx: Context, id: str) -> str:
        return json.dumps({"id": id, "fromTemplate": True, "data": f"data of item {id}"})

    @server.completion("ref/resource", "test://template/{id}/data", "id")
    async def complete_id(ctx: Context, value: str, context: dict[str, str]) -> list[str]:
        return [str(n) for n in range(1, 201) if str(n).startswith(value)]


# ------------------------------------------------------------------------ prompts


def _register_prompts(server: Server) -> None:
    @server.prompt()
    async def test_simple_prompt(ctx: Context) -> str:
        """A prompt without arguments."""
        return "A simple prompt from the trimcp reference server."

    @server.prompt(
        arguments=[
            {"name": "arg1", "description": "The first value", "required": True},
            {"name": "arg2", "description": "The second value", "required": True},
        ]
    )
    async def test_prompt_with_arguments(ctx: Context, arg1: str, arg2: str) -> str:
        """A prompt with two required arguments."""
        return f"First argument: {arg1}; second argument: {arg2}"

    @server.prompt(arguments=[{"name": "resourceUri", "description": "URI to embed", "required": True}])
    async def test_prompt_with_embedded_resource(ctx: Context, resourceUri: str) -> list[Any]:
        """A prompt embedding a resource."""
        return [
            {"role": "user", "content": embedded_text(resourceUri, "Resource text embedded in a prompt.")},
            "Summarise the resource above.",
        ]

    @server.prompt()
    async def test_prompt_with_image(ctx: Context) -> list[Any]:
        """A prompt carrying an image."""
        return [{"role": "user", "content": image(PNG, "image/png")}, "Describe this image."]

    @server.prompt(
        title="Greeting",
        arguments=[
            {"name": "name", "description": "Who to greet", "required": True},
            {"name": "language", "description": "Language of the greeting", "required": False},
        ],
    )
    async def greeting(ctx: Context, name: str, language: str = "English") -> list[Any]:
        """Greet someone in a language of your choice (the language completes)."""
        return [f"Greet {name} in {language}.", {"role": "assistant", "content": text("Certainly.")}]

    @server.completion("ref/prompt", "greeting", "language")
    async def complete_language(ctx: Context, value: str, context: dict[str, str]) -> list[str]:
        return [lang for lang in LANGUAGES if lang.lower().startswith(value.lower())]


def main(argv: list[str] | None = None) -> None:
    """Run the reference server on stdio (``python -m trimcp.reference``)."""
    parser = argparse.ArgumentParser(
        prog="python -m trimcp.reference", description="The trimcp reference MCP server (stdio)."
    )
    parser.add_argument("--page-size", type=int, default=5, help="items per */list page (0: no pagination)")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(serve_stdio, build_server(page_size=args.page_size or None))


if __name__ == "__main__":
    main()
