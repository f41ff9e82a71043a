"""A stdio MCP server whose tools return the shapes the CLI prints specially (tests/cli/test_cli_helps.py).

* ``summary``: a text block and ``structuredContent`` that says more than the text;
* ``photo``: a 3 900-byte PNG image and a 1 500-byte blob resource;
* ``steps``: reports progress three times (no total the last time) before answering.
"""

import trio

from trimcp.server import Context, Server, serve_stdio
from trimcp.server.content import embedded_blob, image, text

server = Server("cli-result-server", "1")

#: 3 900 bytes that a PNG viewer would reject, but a PNG by its media type: what the CLI sees.
PHOTO = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 15 + b"\x00" * 52
BLOB = bytes(range(250)) * 6


@server.tool
async def summary(ctx: Context) -> dict[str, object]:
    return {
        "content": [text("2 files changed")],
        "structuredContent": {"files": ["a.py", "b.py"], "insertions": 10, "deletions": 3},
    }


@server.tool
async def photo(ctx: Context) -> list[dict[str, object]]:
    return [
        text("a photo and its thumbnail data"),
        image(PHOTO, "image/png"),
        embedded_blob("file:///thumbs/photo.bin", BLOB, "application/octet-stream"),
    ]


@server.tool
async def steps(ctx: Context) -> str:
    for value, total, message in ((1, 3, "fetching"), (2, 3, "parsing"), (3, None, "done")):
        await ctx.report_progress(value, total, message)
        await trio.sleep(0.05)
    return "all steps done"


if __name__ == "__main__":
    trio.run(serve_stdio, server)
