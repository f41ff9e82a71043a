"""An OAuth authorization server and a protected MCP server, as h11 fakes on 127.0.0.1.

The authorization server's issuer has a path (so discovery must walk the path-aware
RFC 8414 / OIDC order); it registers clients (DCR), checks PKCE S256 and rotates refresh
tokens.  The MCP server answers 401 without a valid bearer token and 403
``insufficient_scope`` for a tool needing ``write``.  Used by the OAuth, CLI and harness
tests (``tests/auth``, ``tests/cli``, ``tests/check``) and the OAuth example's
(``tests/project/test_examples.py``).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from helpers.h11_fake import McpFake, Reply, Req

REDIRECT = "http://127.0.0.1:1/callback"


class AuthServer:
    """A tiny OAuth 2.1 authorization server (DCR, PKCE S256, refresh rotation)."""

    def __init__(self, redirect: str | None = REDIRECT) -> None:
        self.base = ""
        #: The one redirect URI a registration may name; None: any on 127.0.0.1 (a client with a
        #: loopback callback on a free port, as examples/oauth_client.py).
        self.redirect = redirect
        self.codes: dict[str, dict[str, Any]] = {}
        self.access: dict[str, set[str]] = {}
        self.refresh: dict[str, set[str]] = {}
        self.clients: dict[str, str] = {}
        self.auth_requests: list[dict[str, str]] = []
        self.token_requests: list[dict[str, str]] = []
        self.expires_in = 3600
        self.wrong_iss = False
        self._n = itertools.count(1)

    @property
    def issuer(self) -> str:
        return f"{self.base}/tenant"

    async def __call__(self, req: Req, reply: Reply) -> None:
        path = urlsplit(req.target).path
        if path == "/.well-known/openid-configuration/tenant":
            await reply.json(
                {
                    "issuer": self.issuer,
                    "authorization_endpoint": f"{self.base}/authorize",
                    "token_endpoint": f"{self.base}/token",
                    "registration_endpoint": f"{self.base}/register",
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["client_secret_post"],
                    "authorization_response_iss_parameter_supported": True,
                }
            )
        elif path == "/register":
            body = req.json
            uris = body["redirect_uris"]
            if self.redirect is not None:
                assert uris == [self.redirect]
            elif not all(urlsplit(u).hostname == "127.0.0.1" for u in uris):
                await reply.json({"error": "invalid_redirect_uri"}, 400)
                return
            cid = f"client-{next(self._n)}"
            self.clients[cid] = f"secret-{cid}"
            await reply.json(
                {
                    "client_id": cid,
                    "client_secret": self.clients[cid],
                    "token_endpoint_auth_method": body["token_endpoint_auth_method"],
                },
                201,
            )
        elif path == "/authorize":
            q = {k: v[0] for k, v in parse_qs(urlsplit(req.target).query).items()}
            self.auth_requests.append(q)
            code = f"code-{next(self._n)}"
            self.codes[code] = q
            iss = "http://evil.example" if self.wrong_iss else self.issuer
            loc = q["redirect_uri"] + "?" + urlencode({"code": code, "state": q["state"], "iss": iss})
            await reply.empty(302, headers=[("Location", loc)])
        elif path == "/token":
            form = {k: v[0] for k, v in parse_qs(req.body.decode()).items()}
            self.token_requests.append(form)
            if self.clients.get(form.get("client_id", "")) != form.get("client_secret"):
                await reply.json({"error": "invalid_client"}, 401)
                return
            if form["grant_type"] == "authorization_code":
                q = self.codes.pop(form["code"], None)
                digest = hashlib.sha256(form["code_verifier"].encode()).digest()
                challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
                if q is None or q["code_challenge"] != challenge or q["resource"] != form["resource"]:
                    await reply.json({"error": "invalid_grant"}, 400)
                    return
                scopes = set((q.get("scope") or "").split())
            else:
                old = self.refresh.pop(form["refresh_token"], None)
                if old is None:
                    await reply.json({"error": "invalid_refresh_token"}, 400)  # non-standard on purpose
                    return
                scopes = old
            n = next(self._n)
            access, refresh = f"AT-secret-{n}", f"RT-secret-{n}"
            self.access[access] = scopes
            self.refresh[refresh] = scopes
            await reply.json(
                {
                    "access_token": access,
                    "token_type": "Bearer",
                    "expires_in": self.expires_in,
                    "refresh_token": refresh,
                    "scope": " ".join(sorted(scopes)),
                }
            )
        else:
            await reply.text(404, "not found")


class ProtectedMcp(McpFake):
    def __init__(self, auth: AuthServer) -> None:
        super().__init__()
        self.auth = auth
        self.base = ""
        self.prm_header = True
        self.prm_resource: str | None = None
        self.tools = [
            {"name": "read_it", "inputSchema": {"type": "object"}},
            {"name": "write_it", "inputSchema": {"type": "object"}},
        ]
        self.seen: list[str] = []

    async def __call__(self, req: Req, reply: Reply) -> None:
        path = urlsplit(req.target).path
        self.seen.append(f"{req.method} {path}")
        if path == "/.well-known/oauth-protected-resource/mcp":
            await reply.json(
                {
                    "resource": self.prm_resource or f"{self.base}/mcp",
                    "authorization_servers": [self.auth.issuer],
                    "scopes_supported": ["read"],
                }
            )
            return
        if path != "/mcp":
            await reply.text(404, "not found")
            return
        header = req.header("authorization") or ""
        token = header[7:] if header.startswith("Bearer ") else ""
        if token not in self.auth.access:
            challenge = 'Bearer error="invalid_token"'
            if self.prm_header:
                challenge += f', resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
            await reply.json({"error": "unauthorized"}, 401, headers=[("WWW-Authenticate", challenge)])
            return
        msg = req.json if req.method == "POST" else None
        if (
            isinstance(msg, dict)
            and msg.get("method") == "tools/call"
            and (msg.get("params") or {}).get("name") == "write_it"
            and "write" not in self.auth.access[token]
        ):
            await reply.json(
                {"error": "forbidden"},
                403,
                headers=[("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="read write"')],
            )
            return
        await super().__call__(req, reply)
