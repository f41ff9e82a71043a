"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension, SEP-1865, stable 2026-01-26).

Theory of operation
-------------------
A server offers interactive views as resources with ``ui://`` URIs whose content
is an HTML document of MIME type ``text/html;profile=mcp-app``.  A tool links one
through ``_meta.ui.resourceUri`` (the flat ``_meta["ui/resourceUri"]`` is the
deprecated spelling, still read), and ``_meta.ui.visibility`` says who may call
the tool: ``"model"`` (the agent), ``"app"`` (the view, on the same server), both
by default.  Like every extension it is opt-in: the client declares
``extensions["io.modelcontextprotocol/ui"] = {"mimeTypes": [...]}`` among its
capabilities (the handshake's, or the 2026-07-28 envelope's), and a server SHOULD
link views only for clients that did.

The host fetches the view with ``resources/read`` (the resource MUST exist); the
content comes as ``text`` or base64 ``blob``, with ``_meta.ui`` holding the CSP
domains, permissions, a dedicated ``domain`` and ``prefersBorder``.  The host
MUST build the view's Content-Security-Policy from those domains and nothing
else (``content_security_policy``), the restrictive default when none are given.

Everything here is pure: reading the links of a tool (``tool_link``), checking
a read result (``view_problems``) and building what a host needs (``View``).
Rendering, sandboxing and the view's postMessage channel are the host's.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, Final

from .extensions import UI
from .shared_methods import frozen

__all__ = [
    "DEFAULT_CSP",
    "EXTENSION",
    "MIME_TYPE",
    "SCHEME",
    "ToolLink",
    "View",
    "client_extension",
    "content_security_policy",
    "declared",
    "model_visible",
    "tool_link",
    "view_from_contents",
    "view_problems",
]

EXTENSION: Final = UI.id
MIME_TYPE: Final = "text/html;profile=mcp-app"
SCHEME: Final = "ui://"
VISIBILITY: Final = frozenset({"model", "app"})
CSP_KEYS: Final = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
#: The policy a host MUST use for a view that declares no ``csp``.
DEFAULT_CSP: Final = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; media-src 'self' data:; connect-src 'none'"
)


def client_extension(mime_types: Sequence[str] = (MIME_TYPE,)) -> dict[str, Any]:
    """The client's ``extensions`` entry declaring MCP Apps (``mimeTypes`` is required)."""
    return {EXTENSION: {"mimeTypes": list(mime_types)}}


def declared(capabilities: Mapping[str, Any] | None, mime_type: str = MIME_TYPE) -> bool:
    """Whether client ``capabilities`` declare MCP Apps for ``mime_type``."""
    extensions = (capabilities or {}).get("extensions")
    entry = extensions.get(EXTENSION) if isinstance(extensions, Mapping) else None
    types = entry.get("mimeTypes") if isinstance(entry, Mapping) else None
    return isinstance(types, list) and mime_type in types


@frozen
class ToolLink:
    """A tool's link to its view: the ``ui://`` URI, who may call the tool, and
    what is wrong with the link as written (empty when well formed)."""

    resource_uri: str | None
    visibility: tuple[str, ...] = ("model", "app")
    deprecated_key: bool = False
    problems: tuple[str, ...] = ()


def tool_link(tool: Mapping[str, Any]) -> ToolLink | None:
    """The MCP Apps link of a tool in wire form, or None when it has none."""
    meta = tool.get("_meta")
    if not isinstance(meta, Mapping):
        return None
    ui, flat = meta.get("ui"), meta.get("ui/resourceUri")
    if ui is None and flat is None:
        return None
    problems: list[str] = []
    uri: Any = None
    visibility: tuple[str, ...] = ("model", "app")
    if ui is not None and not isinstance(ui, Mapping):
        problems.append("_meta.ui must be an object")
    elif isinstance(ui, Mapping):
        uri = ui.get("resourceUri")
        seen = ui.get("visibility")
        if seen is not None:
            if not isinstance(seen, list) or not all(isinstance(v, str) for v in seen):
                problems.append("_meta.ui.visibility must be an array of strings")
            else:
                unknown = sorted(set(seen) - VISIBILITY)
                if unknown:
                    problems.append(f"_meta.ui.visibility has unknown values {unknown} (known: app, model)")
                visibility = tuple(v for v in seen if v in VISIBILITY)
    if uri is None and flat is not None:
        uri = flat
    if uri is not None and not isinstance(uri, str):
        problems.append("the view's resourceUri must be a string")
        uri = None
    elif isinstance(uri, str) and not uri.startswith(SCHEME):
        problems.append(f"the view's URI {uri!r} must use the ui:// scheme")
    return ToolLink(uri, visibility, ui is None and flat is not None, tuple(problems))


def model_visible(tool: Mapping[str, Any]) -> bool:
    """False for a tool whose visibility leaves out ``"model"``: a host MUST NOT put
    it in the agent's tool list (the view may still call it)."""
    link = tool_link(tool)
    return link is None or "model" in link.visibility


@frozen
class View:
    """A view read with ``resources/read``: its HTML and its ``_meta.ui`` settings."""

    uri: str
    html: str
    csp: Mapping[str, tuple[str, ...]] | None = None
    permissions: frozenset[str] = frozenset()
    domain: str | None = None
    prefers_border: bool | None = None

    @property
    def content_security_policy(self) -> str:
        return content_security_policy(self.csp)


def content_security_policy(csp: Mapping[str, Sequence[str]] | None) -> str:
    """The Content-Security-Policy a host serves a view under: the declared origins
    and nothing else (no loosening), the restrictive default when none are declared."""
    if csp is None:
        return DEFAULT_CSP
    resources = " ".join(csp.get("resourceDomains", ()))
    connect = " ".join(csp.get("connectDomains", ()))
    frames = " ".join(csp.get("frameDomains", ())) or "'none'"
    bases = " ".join(csp.get("baseUriDomains", ())) or "'self'"
    extra = f" {resources}" if resources else ""
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src 'self' 'unsafe-inline'{extra}",
            f"style-src 'self' 'unsafe-inline'{extra}",
            f"connect-src 'self'{' ' + connect if connect else ''}",
            f"img-src 'self' data:{extra}",
            f"font-src 'self'{extra}",
            f"media-src 'self' data:{extra}",
            f"frame-src {frames}",
            "object-src 'none'",
            f"base-uri {bases}",
        ]
    )


def view_problems(uri: str, result: Mapping[str, Any]) -> list[str]:
    """What breaks the extension's rules in the ``resources/read`` result of view ``uri``."""
    problems: list[str] = []
    contents = result.get("contents")
    if not isinstance(contents, list) or not contents:
        return [f"resources/read of {uri} returned no contents"]
    entry = next((c for c in contents if isinstance(c, Mapping) and c.get("uri") == uri), None)
    if entry is None:
        return [f"no content of resources/read has the view's URI {uri}"]
    if entry.get("mimeType") != MIME_TYPE:
        problems.append(f"the view's mimeType is {entry.get('mimeType')!r}, not {MIME_TYPE!r}")
    html = _html(entry)
    if html is None:
        problems.append("the view's content must be text, or base64 in blob, of UTF-8 HTML")
    elif not html.strip():
        problems.append("the view's HTML document is empty")
    meta = entry.get("_meta")
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    if ui is not None:
        problems += _ui_meta_problems(ui)
    return problems


def view_from_contents(uri: str, result: Mapping[str, Any]) -> View:
    """The ``View`` of a read result; ``ValueError`` naming every problem when it breaks the rules."""
    problems = view_problems(uri, result)
    if problems:
        raise ValueError("; ".join(problems))
    entry = next(c for c in result["contents"] if isinstance(c, Mapping) and c.get("uri") == uri)
    html = _html(entry)
    assert html is not None
    ui = (entry.get("_meta") or {}).get("ui") or {}
    csp = ui.get("csp")
    return View(
        uri,
        html,
        csp=None if csp is None else {k: tuple(csp[k]) for k in CSP_KEYS if k in csp},
        permissions=frozenset(ui.get("permissions") or ()),
        domain=ui.get("domain"),
        prefers_border=ui.get("prefersBorder"),
    )


def _html(entry: Mapping[str, Any]) -> str | None:
    text, blob = entry.get("text"), entry.get("blob")
    if isinstance(text, str):
        return text
    if isinstance(blob, str):
        try:
            return base64.b64decode(blob, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return None
    return None


def _ui_meta_problems(ui: Any) -> list[str]:
    if not isinstance(ui, Mapping):
        return ["the view's _meta.ui must be an object"]
    problems: list[str] = []
    csp = ui.get("csp")
    if csp is not None:
        if not isinstance(csp, Mapping):
            problems.append("_meta.ui.csp must be an object")
        else:
            for key in CSP_KEYS:
                value = csp.get(key)
                # An origin with a space or a ';' would smuggle sources or directives into
                # the policy the host builds from it.
                if value is not None and (
                    not isinstance(value, list)
                    or not all(isinstance(v, str) and v and not any(c in v for c in " ;,'\"\r\n\t") for v in value)
                ):
                    problems.append(f"_meta.ui.csp.{key} must be an array of origins")
    # (a permission this revision of the extension does not name is left to the host)
    permissions = ui.get("permissions")
    if permissions is not None and (
        not isinstance(permissions, Mapping) or not all(isinstance(v, Mapping) for v in permissions.values())
    ):
        problems.append("_meta.ui.permissions must map each permission to an object")
    if "domain" in ui and not isinstance(ui["domain"], str):
        problems.append("_meta.ui.domain must be a string")
    if "prefersBorder" in ui and not isinstance(ui["prefersBorder"], bool):
        problems.append("_meta.ui.prefersBorder must be a boolean")
    return problems
