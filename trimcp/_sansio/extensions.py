"""MCP extensions as data: which exist, what they add, and who may use them.

Theory of operation
-------------------
An extension has an id ``{vendor}/{name}`` (spec 2026-07-28, basic/extensions)
and is always opt-in on both sides: the server lists the ids it supports
under ``capabilities.extensions`` (``server/discover``, or the ``initialize``
result of a revision that knows the member), and the client lists those it
supports under ``capabilities.extensions`` of the request's ``_meta``
``io.modelcontextprotocol/clientCapabilities`` envelope - per request, so a
declaration on one request says nothing about the next.

``EXTENSIONS`` is keyed by id.  Each ``Extension`` names the revisions it
applies to and the client-to-server methods it adds.  The connection admits
such a method only when we advertise the extension (else it is -32601, as any
unknown method), and the server refuses it with -32021 (Missing Required
Client Capability, ``data.requiredCapabilities.extensions``) when the request
did not declare the extension itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from . import jsonrpc as rpc
from .revisions import STATELESS_VERSIONS, revisions_where
from .shared_methods import frozen


@frozen
class Extension:
    """One extension: its id, the revisions it applies to, the methods it adds."""

    id: str
    revisions: frozenset[str]
    client_requests: frozenset[str] = frozenset()


#: ext-tasks (``io.modelcontextprotocol/tasks``, SEP-2663): the task surface that replaced
#: 2025-11-25's core tasks, in the stateless era.
TASKS: Final = Extension(
    "io.modelcontextprotocol/tasks",
    frozenset(STATELESS_VERSIONS),
    frozenset({"tasks/get", "tasks/update", "tasks/cancel"}),
)

#: MCP Apps (``io.modelcontextprotocol/ui``, SEP-1865; ``apps.py``): no methods of its own,
#: views linked from tools' ``_meta`` (which tools carry from 2025-06-18).
UI: Final = Extension("io.modelcontextprotocol/ui", frozenset(revisions_where(lambda r: r.has_member("tool", "_meta"))))

EXTENSIONS: Final[Mapping[str, Extension]] = {e.id: e for e in (TASKS, UI)}


def declaration(extensions: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The ``extensions`` capability a party declares: ids of the form ``{vendor}/{name}``,
    each with its settings object (always opt-in: only what is named); ``ValueError`` else."""
    out: dict[str, Any] = {}
    for ext_id, settings in extensions.items():
        vendor, slash, name = ext_id.partition("/") if isinstance(ext_id, str) else ("", "", "")
        if not (slash and vendor and name) or any(c.isspace() for c in ext_id):
            raise ValueError(f"an extension id is {{vendor}}/{{name}}, not {ext_id!r}")
        if not isinstance(settings, Mapping):
            raise ValueError(f"extension {ext_id!r}: its settings must be an object")
        out[ext_id] = dict(settings)
    return out


def _declared(capabilities: Mapping[str, Any] | None) -> Mapping[str, Any]:
    node = (capabilities or {}).get("extensions")
    return node if isinstance(node, Mapping) else {}


def declares(capabilities: Mapping[str, Any] | None, extension_id: str) -> bool:
    """Whether ``capabilities`` (a client's or a server's) list the extension (any object value)."""
    return isinstance(_declared(capabilities).get(extension_id), Mapping)


#: (method, revision) -> the extension adding that client request there: one lookup for
#: every request a server admits (``admission.refuse_in_revision``).
_BY_METHOD: Final[Mapping[tuple[str, str], Extension]] = {
    (method, revision): extension
    for extension in EXTENSIONS.values()
    for method in extension.client_requests
    for revision in extension.revisions
}


def method_extension(method: str, revision: str) -> Extension | None:
    """The extension that adds client request ``method`` in ``revision``, if any."""
    return _BY_METHOD.get((method, revision))


def admits(method: str, revision: str, own_capabilities: Mapping[str, Any] | None) -> bool:
    """Whether ``method`` is an extension method we serve in ``revision`` (we advertise it)."""
    extension = method_extension(method, revision)
    return extension is not None and declares(own_capabilities, extension.id)


def missing_extension(extension_id: str) -> rpc.ErrorObject:
    """-32021 naming the extension the client must declare on the request."""
    return rpc.ErrorObject(
        rpc.MISSING_CLIENT_CAPABILITY,
        f"Missing required client capability: extension {extension_id}",
        {"requiredCapabilities": {"extensions": {extension_id: {}}}},
    )


def refuse_method(method: str, revision: str, client_capabilities: Mapping[str, Any] | None) -> rpc.ErrorObject | None:
    """-32021 when ``method`` belongs to an extension the request did not declare, else None."""
    extension = method_extension(method, revision)
    if extension is None or declares(client_capabilities, extension.id):
        return None
    return missing_extension(extension.id)


def capabilities_for(capabilities: Mapping[str, Any], revision: str) -> dict[str, Any]:
    """Our capabilities as ``revision`` may carry them: extensions it doesn't know left out
    (and ``extensions`` itself when none remain)."""
    out = dict(capabilities)
    declared = _declared(capabilities)
    if "extensions" not in out:
        return out
    kept = {k: v for k, v in declared.items() if k not in EXTENSIONS or revision in EXTENSIONS[k].revisions}
    known_member = any(revision in e.revisions for e in EXTENSIONS.values())
    if kept and known_member:
        out["extensions"] = kept
    else:
        del out["extensions"]
    return out
