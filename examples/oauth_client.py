"""Connect to an MCP server behind OAuth 2.1, as a desktop client does.

The first request gets a 401; the client then finds the authorization server from the
server's protected-resource metadata, registers itself (or uses the client id you give it),
opens the authorization URL in your browser (``$BROWSER`` chooses which) and waits for the
redirect on a loopback callback (127.0.0.1, a free port), redeems the code with PKCE and
retries with the token.  Tokens live in memory for this run.

    python examples/oauth_client.py https://mcp.example.com/mcp
    python examples/oauth_client.py URL --client-id ID --client-secret SECRET --issuer https://auth.example.com
    python examples/oauth_client.py URL --call TOOL
"""

from __future__ import annotations

import argparse
import sys

import trio

import trimcp
from trimcp.oauth import OAuthProvider, interactive_authorizer, open_loopback_callback


async def main(
    url: str, client_id: str | None, client_secret: str | None, issuer: str | None, call: str | None
) -> None:
    # The redirect lands on a one-shot HTTP server on 127.0.0.1 for as long as the block runs.
    async with open_loopback_callback(timeout=120) as callback:
        provider = OAuthProvider(
            authorize=interactive_authorizer(callback),  # prints the URL, opens the browser, awaits the redirect
            redirect_uri=callback.redirect_uri,
            client_id=client_id,  # None: dynamic client registration at the authorization server
            client_secret=client_secret,
            client_issuer=issuer,  # the only authorization server the pre-registered credentials go to
            client_name="trimcp oauth example",
        )
        async with trimcp.open_client(url, auth=provider) as client:
            print(f"connected to {client.server_info.get('name')} ({client.protocol_version})")
            for tool in await client.list_tools():
                print("tool:", tool.name)
            if call:
                result = await client.call_tool(call, {})
                print(f"{call}:", "error" if result.is_error else "ok", result.text)


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the MCP server's URL (http:// only on the loopback interface)")
    parser.add_argument("--client-id", help="a client id registered with the authorization server beforehand")
    parser.add_argument("--client-secret", help="its secret, if it has one")
    parser.add_argument("--issuer", help="the authorization server (issuer URL) that client id belongs to")
    parser.add_argument("--call", metavar="TOOL", help="call this tool (with no arguments) once connected")
    args = parser.parse_args()
    if args.client_secret and not args.client_id:
        parser.error("--client-secret needs --client-id")
    try:
        trio.run(main, args.url, args.client_id, args.client_secret, args.issuer, args.call)
    except trimcp.TrimcpError as exc:  # AuthError, ConnectError, McpError...: one line, no traceback
        sys.exit(f"oauth_client: {exc}")


if __name__ == "__main__":
    cli()
