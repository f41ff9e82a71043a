"""An OAuth-protected MCP server on loopback with one chosen authorization defect.

``AuthFake`` is the ``ProtectedMcp`` of ``test_oauth_flow`` (a resource
server in front of that file's ``AuthServer``) made a correct protected
server in every respect the ``auth.*`` checks look at - every method refused
without a valid token, 401 with ``Bearer error="invalid_token"``,
``resource_metadata`` and ``scope`` in the challenge, tokens only from the
``Authorization`` header - unless ``mode`` names one defect:

``accepts-bad-token``        any Bearer token is let through
``no-invalid-token-error``   the challenge for a bad token names no ``error``
``open-list-without-token``  ``tools/list`` is answered without a token
``open-notification``        a notification without a token gets 202
``open-get``                 GET without a token opens an event stream
``token-in-query``           ``?access_token=<valid>`` is accepted
``prm-wrong-resource``       the metadata names another server's ``resource``
``prm-origin-resource``      the path-aware metadata names the server's origin as ``resource``
``no-scope``                 the challenge names no ``scope``
``offline-access``           ``scopes_supported`` holds ``offline_access``
``http-endpoints``           the authorization server's token endpoint is plain http on a public host
``no-bearer-on-list``        the 401 for ``tools/list`` carries no challenge
``no-resource-metadata``     the challenge names no ``resource_metadata`` (the well-known URL still works)
``no-registration``          the authorization server metadata names no ``registration_endpoint``
``no-cimd``                  ... nor ``client_id_metadata_document_supported``
``loose-redirect``           the authorization server redirects to any ``redirect_uri``
``prefix-redirect``          ... to any ``redirect_uri`` that starts with a registered one
``iss-unadvertised``         ``iss`` in the authorization response, the metadata flag absent
``iss-errors-unadvertised``  ``iss`` only in error responses (a success carries none), the flag absent
``legacy-defaults``          (2025-03-26) no metadata at the server's origin; ``/authorize`` and ``/token`` answer
``legacy-none``              (2025-03-26) neither metadata at the origin nor the default endpoints

Without a ``legacy-*`` mode the MCP server's origin also serves the authorization server's
metadata at ``/.well-known/oauth-authorization-server`` (where 2025-03-26 looks for it).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from helpers.h11_fake import McpFake, Reply, Req
from helpers.oauth_fakes import AuthServer, ProtectedMcp

MODES = (
    "accepts-bad-token",
    "no-invalid-token-error",
    "open-list-without-token",
    "open-notification",
    "open-get",
    "token-in-query",
    "prm-wrong-resource",
    "prm-origin-resource",
    "no-scope",
    "offline-access",
    "http-endpoints",
    "no-bearer-on-list",
    "no-resource-metadata",
    "no-registration",
    "no-cimd",
    "loose-redirect",
    "prefix-redirect",
    "iss-unadvertised",
    "iss-errors-unadvertised",
    "legacy-defaults",
    "legacy-none",
)
PRM_PATH = "/.well-known/oauth-protected-resource/mcp"


class BadAuthServer(AuthServer):
    """``AuthServer`` advertising Client ID Metadata Document support and redirecting only to a
    client's registered redirect URIs, exactly, unless ``mode`` says otherwise."""

    def __init__(self, mode: str = "") -> None:
        super().__init__()
        self.mode = mode
        self.redirects: dict[str, list[str]] = {}

    def metadata(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.base}/authorize",
            "token_endpoint": f"{self.base}/token",
            "registration_endpoint": f"{self.base}/register",
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post"],
            "authorization_response_iss_parameter_supported": True,
            "client_id_metadata_document_supported": True,
        }
        if self.mode == "http-endpoints":
            doc["token_endpoint"] = "http://as.example.com/token"
        if self.mode == "no-registration":
            del doc["registration_endpoint"]
        if self.mode == "no-cimd":
            del doc["client_id_metadata_document_supported"]
        if self.mode in ("iss-unadvertised", "iss-errors-unadvertised"):
            del doc["authorization_response_iss_parameter_supported"]
        return doc

    def _allowed(self, client_id: str, redirect_uri: str) -> bool:
        registered = self.redirects.get(client_id, [])
        if self.mode == "loose-redirect":
            return True
        if self.mode == "prefix-redirect":
            return any(redirect_uri.startswith(r) for r in registered)
        return redirect_uri in registered

    async def __call__(self, req: Req, reply: Reply) -> None:
        path = urlsplit(req.target).path
        if path == "/.well-known/openid-configuration/tenant":
            await reply.json(self.metadata())
            return
        if path == "/register":
            body = req.json
            cid = f"client-{next(self._n)}"
            self.clients[cid] = f"secret-{cid}"
            self.redirects[cid] = list(body["redirect_uris"])
            await reply.json(
                {
                    "client_id": cid,
                    "client_secret": self.clients[cid],
                    "token_endpoint_auth_method": body["token_endpoint_auth_method"],
                },
                201,
            )
            return
        if path == "/authorize":
            q = {k: v[0] for k, v in parse_qs(urlsplit(req.target).query).items()}
            if not self._allowed(q.get("client_id", ""), q.get("redirect_uri", "")):
                await reply.text(400, "unregistered redirect_uri")
                return
            if q.get("response_type") != "code":
                # RFC 6749 4.1.2.1: the error goes to the (valid) redirect_uri, with RFC 9207's iss
                error = {"error": "unsupported_response_type", "state": q.get("state", ""), "iss": self.issuer}
                await reply.empty(302, headers=[("Location", q["redirect_uri"] + "?" + urlencode(error))])
                return
            if self.mode == "iss-errors-unadvertised":
                code = f"code-{next(self._n)}"
                self.auth_requests.append(q)
                self.codes[code] = q
                ok = {"code": code, "state": q.get("state", "")}
                await reply.empty(302, headers=[("Location", q["redirect_uri"] + "?" + urlencode(ok))])
                return
        await super().__call__(req, reply)


class AuthFake(ProtectedMcp):
    def __init__(self, auth: AuthServer, mode: str = "") -> None:
        super().__init__(auth)
        assert mode in ("", *MODES), mode
        self.mode = mode

    def _challenge(self, bad_token: bool) -> str:
        parts = ["Bearer"]
        params = []
        if bad_token and self.mode != "no-invalid-token-error":
            params.append('error="invalid_token"')
        if self.mode != "no-resource-metadata":
            params.append(f'resource_metadata="{self.base}{PRM_PATH}"')
        if self.mode != "no-scope":
            params.append('scope="read"')
        return " ".join(parts) + (" " + ", ".join(params) if params else "")

    async def __call__(self, req: Req, reply: Reply) -> None:
        parts = urlsplit(req.target)
        if parts.path == PRM_PATH:
            scopes = ["read", "offline_access"] if self.mode == "offline-access" else ["read"]
            resource = {"prm-wrong-resource": "http://127.0.0.1:1/other", "prm-origin-resource": self.base}.get(
                self.mode, f"{self.base}/mcp"
            )
            await reply.json(
                {"resource": resource, "authorization_servers": [self.auth.issuer], "scopes_supported": scopes}
            )
            return
        if parts.path == "/.well-known/oauth-authorization-server" and not self.mode.startswith("legacy-"):
            await reply.json(self.auth.metadata() if isinstance(self.auth, BadAuthServer) else {})
            return
        if parts.path in ("/authorize", "/token") and self.mode == "legacy-defaults":
            await reply.json({"error": "invalid_request"}, 400)
            return
        if parts.path != "/mcp":
            await reply.text(404, "not found")
            return
        header = req.header("authorization") or ""
        token = header[7:] if header.startswith("Bearer ") else ""
        query = parse_qs(parts.query).get("access_token", [""])[0]
        if self._lets_through(req, token, query):
            await self._serve(req, reply, token or query)
            return
        if self.mode == "no-bearer-on-list" and self._method(req) == "tools/list":
            await reply.json({"error": "unauthorized"}, 401)
            return
        await reply.json(
            {"error": "unauthorized"}, 401, headers=[("WWW-Authenticate", self._challenge(bad_token=bool(token)))]
        )

    @staticmethod
    def _method(req: Req) -> str | None:
        msg: Any = req.json if req.method == "POST" else None
        return msg.get("method") if isinstance(msg, dict) else None

    def _lets_through(self, req: Req, token: str, query: str) -> bool:
        if token in self.auth.access:
            return True
        if self.mode == "accepts-bad-token" and token:
            return True
        if self.mode == "token-in-query" and query in self.auth.access:
            return True
        method = self._method(req)
        if self.mode == "open-list-without-token" and method == "tools/list":
            return True
        if self.mode == "open-notification" and method is not None and method.startswith("notifications/"):
            return True
        return self.mode == "open-get" and req.method == "GET"

    async def _serve(self, req: Req, reply: Reply, token: str) -> None:
        if not token:  # a defect's opening: answer as if the request had been authorized
            msg: Any = req.json if req.method == "POST" else None
            if req.method == "GET":
                await reply.head(200, [("Content-Type", "text/event-stream")])
                await reply.end()
            elif isinstance(msg, dict) and "id" not in msg:
                await reply.empty(202)
            else:
                await reply.json({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": self.tools}})
            return
        await McpFake.__call__(self, req, reply)
