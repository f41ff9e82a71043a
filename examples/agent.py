"""An agent holding two MCP servers, for any of the model APIs trimcp shapes tools for.

The servers: trimcp's reference server (``python -m trimcp serve``) and the notes server
beside this file, both over stdio.  The model: Anthropic, OpenAI (default or strict mode)
or Gemini through its own SDK, or, with ``--scripted``, a ``ScriptedModel`` that plays a
two-turn conversation without a network (what the tests run)::

    python examples/agent.py --provider anthropic "Note that I need milk, then echo hi"
    python examples/agent.py --provider gemini --scripted

The SDKs are not dependencies of trimcp: install the one you use (``pip install anthropic``,
``openai`` or ``google-genai``) and set its API key (``ANTHROPIC_API_KEY``,
``OPENAI_API_KEY``, ``GEMINI_API_KEY``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import trio

from trimcp.config import StdioServerConfig
from trimcp.host import Turn, agent_turn, open_pool
from trimcp.testing import ScriptedModel, call

HERE = Path(__file__).resolve().parent
SERVERS = [
    StdioServerConfig(name="reference", command=sys.executable, args=("-m", "trimcp", "serve")),
    StdioServerConfig(name="notes", command=sys.executable, args=(str(HERE / "notes_server.py"),)),
]
PROVIDERS = ("anthropic", "openai", "openai-strict", "gemini")
MAX_TURNS = 8


async def claude(messages: list[Any], tools: list[Any]) -> Any:
    import anthropic

    client = anthropic.Anthropic()
    return await trio.to_thread.run_sync(
        lambda: client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, messages=messages, tools=tools)
    )


async def gpt(messages: list[Any], tools: list[Any]) -> Any:
    import openai

    client = openai.OpenAI()
    return await trio.to_thread.run_sync(
        lambda: client.chat.completions.create(model="gpt-4.1", messages=messages, tools=tools)
    )


async def gemini(contents: list[Any], tools: list[Any]) -> Any:
    from google import genai
    from google.genai import types

    client = genai.Client()
    config = types.GenerateContentConfig(tools=tools)
    return await trio.to_thread.run_sync(
        lambda: client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
    )


def scripted(provider: str) -> ScriptedModel:
    """Turn 1: a read on each server and a write; turn 2: the answer."""
    return ScriptedModel(
        provider,
        [
            [
                call("mcp__reference__echo", message="hi"),
                call("mcp__notes__add_note", text="milk"),
                call("mcp__notes__list_notes"),
            ],
            "Noted milk; the reference server echoed hi.",
        ],
    )


def first_message(provider: str, text: str) -> dict[str, Any]:
    """The user's message in the provider's shape."""
    if provider == "gemini":
        return {"role": "user", "parts": [{"text": text}]}
    return {"role": "user", "content": text}


async def converse(provider: str, model: Any, prompt: str) -> list[Turn]:
    """Run the conversation to the model's answer (at most ``MAX_TURNS`` turns)."""
    turns: list[Turn] = []
    async with open_pool(SERVERS) as pool:
        await pool.connect_all()
        messages: list[Any] = [first_message(provider, prompt)]
        while len(turns) < MAX_TURNS:
            turn = await agent_turn(pool, provider, model, messages)
            turns.append(turn)
            messages += turn.messages
            if turn.done:
                break
    return turns


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--provider", choices=PROVIDERS, default="anthropic")
    parser.add_argument("--scripted", action="store_true", help="play a scripted model (no network)")
    parser.add_argument("prompt", nargs="?", default="Note that I need milk, then say hi through the echo tool.")
    args = parser.parse_args(argv)
    real = {"anthropic": claude, "openai": gpt, "openai-strict": gpt, "gemini": gemini}
    model = scripted(args.provider) if args.scripted else real[args.provider]
    turns = trio.run(converse, args.provider, model, args.prompt)
    for turn in turns:
        for outcome in turn.outcomes:
            state = "failed" if outcome.failed else "ok"
            print(f"  {outcome.call.name}: {state}")
    print(turns[-1].text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
