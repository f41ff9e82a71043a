"""Record real conversations into the spec/ corpus.

For every handshake revision, connect with ``trimcp.open_client(..., revision=REV)``
through a recording wrapper to (a) the trimcp reference server and (b)
@modelcontextprotocol/server-everything (skipped if it is not installed), list
everything, read the resources, get the argument-less prompts, call a couple of
small tools, and write ``spec/<revision>/<server>.jsonl``: one line per message,
``{"dir": "send"|"recv", "message": <JSON-RPC object>}``, in the order they
crossed the transport.

Usage: python spec/record.py [--only reference|everything]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import trio

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import trimcp
from trimcp._sansio import jsonrpc as rpc
from trimcp.conformance.recorder import RecordingStream

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

#: Small tools worth calling, with their arguments (whichever exist on a server).
SIMPLE_TOOLS: dict[str, dict[str, Any]] = {
    "echo": {"message": "hello from the spec corpus"},
    "add": {"a": 2, "b": 3},
    "get-sum": {"a": 2, "b": 3},
    "test_simple_text": {},
}


class TranscriptStream(RecordingStream):
    """A RecordingStream that also keeps one ordered transcript of both directions."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.transcript: list[dict[str, Any]] = []

    async def send(self, message: rpc.Message) -> None:
        self.transcript.append({"dir": "send", "message": rpc.message_to_obj(message)})
        await super().send(message)

    async def receive(self) -> bytes:
        data = await super().receive()
        self.transcript.append({"dir": "recv", "message": json.loads(data)})
        return data


def servers() -> dict[str, list[str]]:
    import peers

    out = {"reference": [sys.executable, "-m", "trimcp.server.reference"]}
    argv = peers.everything_stdio_argv()
    if argv is not None:
        out["everything"] = argv
    else:
        print("server-everything is not installed: skipping it", file=sys.stderr)
    return out


async def converse(argv: list[str], revision: str) -> list[dict[str, Any]]:
    import peers

    async with trimcp.open_stdio_process(argv, env=peers.peer_env(), cwd=str(REPO)) as proc:
        rec = TranscriptStream(proc)
        async with trimcp.open_client(rec, revision=revision, request_timeout=30) as client:
            caps = client.server_capabilities
            if "tools" in caps:
                tools = await client.list_tools()
                names = {t.name for t in tools}
                for name, args in SIMPLE_TOOLS.items():
                    if name in names:
                        await client.call_tool(name, args)
            if "resources" in caps:
                resources = await client.list_resources()
                await client.list_resource_templates()
                for r in resources[:3]:
                    await client.read_resource(r.uri)
            if "prompts" in caps:
                prompts = await client.list_prompts()
                done = 0
                for p in prompts:
                    if not any(a.required for a in (p.arguments or [])) and done < 2:
                        await client.get_prompt(p.name)
                        done += 1
            await client.ping()
        return rec.transcript


async def main(only: str | None) -> None:
    for name, argv in servers().items():
        if only and name != only:
            continue
        for revision in REVISIONS:
            transcript = await converse(argv, revision)
            out = HERE / revision / f"{name}.jsonl"
            out.parent.mkdir(parents=True, exist_ok=True)
            with out.open("w", encoding="utf-8") as f:
                for entry in transcript:
                    f.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
            print(f"{out.relative_to(REPO)}: {len(transcript)} messages, {out.stat().st_size} bytes")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("reference", "everything"))
    trio.run(main, ap.parse_args().only)
