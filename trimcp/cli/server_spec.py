"""What the CLI connects to: a target with its environment, headers and transport.

Theory of operation
-------------------
``command_line.py`` reads the target off the command line (a URL, or a command after
``--``).  ``--config FILE --server NAME`` names one instead: an entry of an
``mcpServers`` file (Claude Desktop, Claude Code's ``.mcp.json``) or of VS Code's
``servers``, read by ``trimcp.config`` with its ``${VAR}`` expansion.  Either way
the result is one ``ServerSpec``: what ``open_client`` (and ``trimcp check``'s
connector) needs - the target, the child's extra environment and working
directory (stdio), the request headers and the transport kind (remote; ``sse``
is forced for an ``"type": "sse"`` entry).  ``-e KEY=VAL`` adds to the
environment and ``--header 'K: V'`` to the headers of either form; each is a
usage error where it cannot apply (a header for a stdio server, an environment
for a URL), so a typo never silently does nothing.

A spec from a file carries the file's ``Redactor`` (``trimcp.config``): whatever the
command shows about the server - its errors, a ``check`` report, a recording - shows a
value a ``${VAR}`` took as ``${VAR}``.  A target typed on the command line has nothing
to hide from the one who typed it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import attrs

from .. import config as mcp_config
from .command_line import UsageError, is_url


@attrs.frozen
class ServerSpec:
    #: One URL, or a command line.
    target: list[str]
    env: dict[str, str] | None = None
    cwd: str | None = None
    headers: dict[str, str] | None = None
    #: A transport kind to force (``open_client(transport=...)``), else resolved from the target.
    transport: str | None = None
    #: Hides what the file's ``${VAR}``s expanded to in what the command shows.
    redact: mcp_config.Redactor = attrs.field(factory=mcp_config.Redactor)

    @property
    def is_url(self) -> bool:
        return len(self.target) == 1 and is_url(self.target[0])

    @property
    def open_target(self) -> str | list[str]:
        return self.target[0] if self.is_url else list(self.target)


def parse_env(pairs: Sequence[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"-e {pair!r}: expected KEY=VALUE")
        env[key] = value
    return env


def parse_headers(lines: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or any(c.isspace() for c in name.strip()):
            raise UsageError(f"--header {line!r}: expected 'Name: value'")
        headers[name.strip()] = value.strip()
    return headers


def from_config(path: str, name: str) -> ServerSpec:
    """The entry ``name`` of the config file ``path`` (``ConfigError`` -> ``UsageError``)."""
    try:
        config = mcp_config.load_config(path)
        entry = config.server(name)
    except mcp_config.ConfigError as exc:
        raise UsageError(str(exc)) from None
    redact = config.redactor()
    if isinstance(entry, mcp_config.StdioServerConfig):
        return ServerSpec([entry.command, *entry.args], env=dict(entry.env) or None, cwd=entry.cwd, redact=redact)
    if entry.headers_helper is not None or entry.oauth is not None:
        # Named, not ignored: the CLI does not run them yet (the library's open_client takes
        # headers_helper= and auth=).
        what = "headersHelper" if entry.headers_helper is not None else "oauth"
        raise UsageError(f"{path}: server {name!r}: {what} is not supported by the CLI yet")
    transport = "sse" if entry.transport == "sse" else None
    return ServerSpec([entry.url], headers=dict(entry.headers) or None, transport=transport, redact=redact)


def file_redactor(path: str) -> mcp_config.Redactor:
    """The redactor of the config file ``path``; an empty one when it cannot be read (the
    command then reports the file's own error, which quotes nothing expanded)."""
    try:
        return mcp_config.load_config(path).redactor()
    except mcp_config.ConfigError:
        return mcp_config.Redactor()


def server_spec(ns: argparse.Namespace, target: list[str] | None) -> ServerSpec | None:
    """The spec for the command line (``None``: no server given, the caller says so)."""
    config, server = getattr(ns, "config", None), getattr(ns, "server", None)
    if (config is None) != (server is None):
        raise UsageError("--config FILE and --server NAME go together")
    if config is not None and server is not None:
        if target is not None:
            raise UsageError("give either --config/--server or a server URL/command, not both")
        spec = from_config(config, server)
    elif target is None:
        spec = None
    else:
        spec = ServerSpec(list(target))
    env = parse_env(getattr(ns, "env", None) or [])
    headers = parse_headers(getattr(ns, "header", None) or [])
    if spec is None:
        if headers:
            raise UsageError("--header needs a server URL")
        return None if not env else ServerSpec([], env=env)  # the reference server, with env
    if env:
        if spec.is_url:
            raise UsageError("-e sets a stdio server's environment; this server is a URL")
        spec = attrs.evolve(spec, env={**(spec.env or {}), **env})
    if headers:
        if not spec.is_url:
            raise UsageError("--header applies to a server URL; this server is a command")
        spec = attrs.evolve(spec, headers={**(spec.headers or {}), **headers})
    return spec


__all__ = [
    "ServerSpec",
    "file_redactor",
    "from_config",
    "parse_env",
    "parse_headers",
    "server_spec",
]
