"""The ``mcpServers`` files MCP users already have, read into typed values (public API).

Theory of operation.  Three families of file name the servers a user works with:

- Claude Desktop's ``claude_desktop_config.json`` and Claude Code's ``.mcp.json`` keep them
  in a top-level ``"mcpServers"`` object;
- VS Code's ``mcp.json`` keeps them in ``"servers"`` (beside ``"inputs"``, which prompts the
  user and is ignored here); VS Code writes JSON with comments and trailing commas, so both
  are accepted (blanked out before parsing, so positions in error messages stay true).

Each entry is one server, keyed by its name.  An entry is *stdio* (``command``, ``args``,
``env``, ``cwd``; ``"type": "stdio"`` optional; trimcp's own ``"shutdown": {"graceMs",
"sigintMs", "sigtermMs"}`` sets how long closing waits before each signal) or *remote* (``"type"`` one of ``http``
- also spelt ``streamable-http`` - ``sse`` or ``ws``; ``url``, ``headers``,
``headersHelper``, ``oauth: {clientId, callbackPort, authServerMetadataUrl}``).  An entry
with a ``url`` and no ``type`` is Streamable HTTP, or WebSocket for a ``ws://`` /
``wss://`` URL; one with a ``command`` and no ``type`` is stdio.  Either kind may carry
``"disabled": true`` (written by several hosts: a pool never connects it) and trimcp's
``"heartbeat": {"intervalMs", "timeoutMs"}`` (ask a quiet server whether it is there).

Every string value (command, args, env values, cwd, url, header values, the helper, the
OAuth fields) goes through ``${VAR}`` / ``${VAR:-default}`` expansion, as Claude Code
does, from the ``environ`` mapping passed in (``os.environ`` by default); VS Code's
spelling ``${env:VAR}`` means the same.  A ``${VAR}`` that is unset and has no default is a
``ConfigError``.  Other ``${...}`` forms (VS Code's ``${input:id}``, which prompts) are
left as written, with a warning.

What an expansion took from the environment stays out of text meant for people.  Each
entry records the variables it took and their values (``expanded``; ``McpConfig.expanded``
has every entry's, the broken ones' too), and a ``Redactor`` built from them
(``McpConfig.redactor()``, ``Redactor(entry.expanded)``) replaces each value by its
reference ``${VAR}`` wherever it appears: in errors, status tables and JSON, logs,
``trimcp check`` reports and recordings.  The rule:

- every value taken from the environment is hidden, whatever the variable is called:
  a name tells nothing sure (``${GH}`` may hold a token), a path or a port shown as
  ``${HOME}`` or ``${PORT}`` still says where it came from, and a wrong guess the other
  way leaks;
- a value of fewer than 4 characters is shown (no secret worth the name, and hiding
  every ``1`` or ``on`` would garble the messages); a default (``${X:-text}``) is shown,
  being written in the file;
- a value is also found where it is spelled otherwise: JSON-, repr-, shell- or
  XML-escaped, percent-encoded (a URL query); a structure (a status, a report) is
  redacted before it is rendered, so its renderer's escaping hides nothing.  trimcp never
  base64-encodes a config value, and request headers are never shown (a recording keeps
  only the headers the transport rules speak of), so a value inside a ``Basic`` credential
  is found only as written in the file;
- a message about the file quotes what is written there (``${BASE}/mcp``), not what it
  expanded to.

The boundary where text reaches people applies it: the CLI to everything it prints or
writes, a ``trimcp.host`` pool to its statuses and its own log lines.  Library code that
never sees the config (the transports, the driver) logs the URL or command it was given;
an application shows those lines redacted by adding ``redactor.log_filter()`` to its
log handler, as the CLI does.  An exception raised to a program keeps the real values
(the program holds the config): redact its text before showing it to someone.

Parsing is strict about what it understands and lenient about what it does not: a wrong
shape or type is a ``ConfigError`` whose message names the file, the server and the field
(``.mcp.json: server "time": "args" must be a list of strings``).  A file-level problem
(unreadable, not JSON, no servers object) raises at once; an entry's problem is kept in
``McpConfig.errors`` and raised by ``server(name)``, so one bad entry never hides the
others.  An unknown field is
kept on the value's ``extra`` and reported in ``McpConfig.warnings``, because these files
are shared with other tools that add their own keys.  A key written twice in one object
(two servers pasted under one name) is warned about too: JSON keeps the last silently.

This module is pure apart from ``load_config`` reading the one file: it starts nothing and
connects to nothing; turning a ``ServerConfig`` into a connection is the caller's business.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias

import attrs

from ._errors import TrimcpError
from ._redaction import Redactor
from ._shutdown import ShutdownPolicy

__all__ = [
    "ConfigError",
    "HeartbeatPolicy",
    "McpConfig",
    "OAuthConfig",
    "Redactor",
    "RemoteServerConfig",
    "ServerConfig",
    "ShutdownPolicy",
    "StdioServerConfig",
    "load_config",
    "parse_config",
]

RemoteTransport: TypeAlias = Literal["http", "sse", "ws"]

#: ``type`` as written -> our transport name; ``streamable-http`` is what some tools write.
_REMOTE_TYPES: dict[str, RemoteTransport] = {
    "http": "http",
    "streamable-http": "http",
    "sse": "sse",
    "ws": "ws",
}
#: Fields every entry may have: trimcp's ``heartbeat`` and the ``disabled`` flag other hosts write.
_COMMON_FIELDS = frozenset({"heartbeat", "disabled"})
_STDIO_FIELDS = frozenset({"type", "command", "args", "env", "cwd", "shutdown"}) | _COMMON_FIELDS
#: ``shutdown`` key -> ``ShutdownPolicy`` field (milliseconds in the file, seconds in Python).
_SHUTDOWN_FIELDS = {"graceMs": "grace", "sigintMs": "sigint_wait", "sigtermMs": "sigterm_wait"}
#: ``heartbeat`` key -> ``HeartbeatPolicy`` field (milliseconds in the file).
_HEARTBEAT_FIELDS = {"intervalMs": "interval", "timeoutMs": "timeout"}
_REMOTE_FIELDS = frozenset({"type", "url", "headers", "headersHelper", "oauth"}) | _COMMON_FIELDS
_OAUTH_FIELDS = frozenset({"clientId", "callbackPort", "authServerMetadataUrl"})
_URL_SCHEMES: dict[RemoteTransport, tuple[str, ...]] = {
    "http": ("http://", "https://"),
    "sse": ("http://", "https://"),
    "ws": ("ws://", "wss://"),
}

# ${NAME} or ${NAME:-default} (VS Code: ${env:NAME}); the default is literal (no nesting),
# as in Claude Code.
_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
# Any other ${...} (VS Code's ${input:id}): left alone, but worth a warning.
_OTHER_VARIABLE = re.compile(r"\$\{(?!(?:env:)?[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\})[^}]*\}")


class ConfigError(TrimcpError):
    """A config file that cannot be used: unreadable, not JSON, or a wrong entry.

    ``source`` is the file (as named to ``load_config``) or ``parse_config``'s ``source``;
    ``server`` and ``field`` name the entry and field at fault when there is one.  The
    message already says all three: it is meant to be shown to a user as it is.
    """

    def __init__(self, message: str, *, source: str, server: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.source = source
        self.server = server
        self.field = field


@attrs.frozen
class OAuthConfig:
    """An entry's ``oauth`` object: a pre-registered client and where to find its server."""

    client_id: str | None = None
    callback_port: int | None = None
    auth_server_metadata_url: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


def _positive(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not 0 < value < float("inf"):
        raise ValueError(f"{attribute.name} must be a finite number of seconds > 0, not {value!r}")


@attrs.frozen(kw_only=True)
class HeartbeatPolicy:
    """Ask a quiet server whether it is there (``open_client(timeouts=Timeouts(heartbeat=...))``).

    After ``interval`` seconds without a message from the server a ``ping`` goes out
    (``server/discover`` in the stateless era); no answer within ``timeout`` counts as one
    terminal transport failure, and three in a row close the session.
    """

    interval: float = attrs.field(validator=_positive)
    timeout: float = attrs.field(default=10.0, validator=_positive)


@attrs.frozen
class StdioServerConfig:
    """A server run as a child process speaking MCP on its stdin/stdout."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    cwd: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)
    #: the entry's ``shutdown`` object; ``None``: the caller's (or the default) policy
    shutdown: ShutdownPolicy | None = None
    #: the entry's ``heartbeat`` object; ``None``: no heartbeat unless the caller asks
    heartbeat: HeartbeatPolicy | None = None
    #: ``"disabled": true`` (Cline, Roo and others write it): a host does not connect it
    disabled: bool = False
    #: The variables the entry's ``${VAR}``s took from the environment, with their values:
    #: what text shown to people hides (``Redactor``).  Not in the repr; not compared (two
    #: entries that run the same thing are equal however their text was spelt).
    expanded: Mapping[str, str] = attrs.field(factory=dict, repr=False, eq=False)

    transport: Literal["stdio"] = attrs.field(default="stdio", init=False)


@attrs.frozen
class RemoteServerConfig:
    """A server reached at a URL: Streamable HTTP, HTTP+SSE or WebSocket."""

    name: str
    transport: RemoteTransport
    url: str
    headers: Mapping[str, str] = attrs.field(factory=dict)
    #: a shell command whose output (a JSON object) gives more headers (Claude Code)
    headers_helper: str | None = None
    oauth: OAuthConfig | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)
    heartbeat: HeartbeatPolicy | None = None
    disabled: bool = False
    #: As ``StdioServerConfig.expanded``.
    expanded: Mapping[str, str] = attrs.field(factory=dict, repr=False, eq=False)


ServerConfig: TypeAlias = StdioServerConfig | RemoteServerConfig


@attrs.frozen
class McpConfig:
    """The servers of one file, by name, and what was found but not understood."""

    path: Path | None
    servers: dict[str, ServerConfig]
    warnings: list[str]
    #: how messages name the file: the path as given, or ``parse_config``'s ``source``
    source: str = "<config>"
    #: The entries that could not be read, by name: one bad entry does not hide the
    #: others (a host connects what it can); ``server(name)`` raises the entry's error.
    errors: dict[str, ConfigError] = attrs.field(factory=dict)
    #: Every variable an entry's ``${VAR}`` took from the environment (the broken entries'
    #: too), with its value; ``redactor()`` hides them.  Not in the repr.
    expanded: dict[str, str] = attrs.field(factory=dict, repr=False)

    def redactor(self) -> Redactor:
        """What hides the values of ``expanded`` in text shown to people (module docstring)."""
        return Redactor(self.expanded)

    def server(self, name: str) -> ServerConfig:
        """The entry called ``name``; its ``ConfigError`` if it is invalid, or one listing the
        known names if there is no such entry."""
        if name in self.errors:
            raise self.errors[name]
        try:
            return self.servers[name]
        except KeyError:
            known = ", ".join(f'"{n}"' for n in sorted([*self.servers, *self.errors]))
            hint = f"known: {known}" if known else "it defines no servers"
            raise ConfigError(f'{self.source}: no server "{name}" ({hint})', source=self.source, server=name) from None


def load_config(path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None) -> McpConfig:
    """Read and parse the config file at ``path`` (see the module docstring)."""
    source = os.fspath(path)
    try:
        # utf-8-sig: editors on Windows like to start the file with a byte-order mark
        text = Path(source).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the file: {exc.strerror or exc}", source=source) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not UTF-8 text (byte {exc.start}, counted from 0)", source=source) from None
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen and key not in repeated:
                repeated.append(key)
            seen[key] = value
        return seen

    try:
        obj = json.loads(_blank_comments(text), object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{source}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", source=source
        ) from None
    except (ValueError, RecursionError) as exc:  # a 5000-digit number; nesting past the stack
        raise ConfigError(f"{source}: not usable JSON: {exc}", source=source) from None
    config = parse_config(obj, source=source, environ=environ)
    config.warnings[:0] = [
        f'{source}: "{key}" is written twice in one object; the last one is used' for key in repeated
    ]
    return attrs.evolve(config, path=Path(source))


def parse_config(obj: object, *, source: str = "<config>", environ: Mapping[str, str] | None = None) -> McpConfig:
    """Parse an already-decoded config object; ``source`` names it in messages."""
    env = os.environ if environ is None else environ
    if not isinstance(obj, dict):
        raise ConfigError(f"{source}: the top level must be a JSON object, not {_kind(obj)}", source=source)
    warnings: list[str] = []
    if "mcpServers" in obj:
        key = "mcpServers"
        if "servers" in obj:
            warnings.append(f'{source}: both "mcpServers" and "servers"; "servers" is ignored')
    elif "servers" in obj:
        key = "servers"
    else:
        raise ConfigError(f'{source}: no "mcpServers" object (Claude) or "servers" object (VS Code)', source=source)
    entries = obj[key]
    if not isinstance(entries, dict):
        raise ConfigError(f'{source}: "{key}" must be an object, not {_kind(entries)}', source=source)
    servers: dict[str, ServerConfig] = {}
    errors: dict[str, ConfigError] = {}
    expanded: dict[str, str] = {}
    for name, entry in entries.items():
        reader = _Entry(source, name, env, warnings)
        try:
            servers[name] = reader.parse(entry)
        except ConfigError as exc:
            errors[name] = exc
        expanded.update(reader.expanded)
    return McpConfig(path=None, servers=servers, warnings=warnings, source=source, errors=errors, expanded=expanded)


class _Entry:
    """Parses one server entry; knows its file and name so every message can say them."""

    def __init__(self, source: str, name: str, environ: Mapping[str, str], warnings: list[str]) -> None:
        self.source = source
        self.name = name
        self.environ = environ
        self.warnings = warnings
        #: variable -> the value an expansion took from ``environ`` (defaults are not here)
        self.expanded: dict[str, str] = {}

    def error(self, message: str, field: str | None = None) -> ConfigError:
        where = f'{self.source}: server "{self.name}": '
        return ConfigError(where + message, source=self.source, server=self.name, field=field)

    def warn(self, message: str) -> None:
        self.warnings.append(f'{self.source}: server "{self.name}": {message}')

    def parse(self, entry: object) -> ServerConfig:
        if not isinstance(entry, dict):
            raise self.error(f"the entry must be an object, not {_kind(entry)}")
        kind = entry.get("type")
        if kind is not None and not isinstance(kind, str):
            raise self.error('"type" must be a string', "type")
        if kind is None:
            if "url" in entry and "command" in entry:
                raise self.error('has both "command" and "url"; say which with "type"')
            if "command" in entry:
                kind = "stdio"
            elif "url" in entry:
                url = self.string(entry, "url")
                kind = "ws" if url.lower().startswith(("ws://", "wss://")) else "http"
            else:
                raise self.error('needs a "command" (a program to run) or a "url"', "command")
        if kind == "stdio":
            return self.stdio(entry)
        if kind in _REMOTE_TYPES:
            return self.remote(entry, _REMOTE_TYPES[kind])
        raise self.error(f'"type" must be one of "stdio", "http", "sse", "ws", not "{kind}"', "type")

    def stdio(self, entry: dict[str, Any]) -> StdioServerConfig:
        command = self.string(entry, "command")
        if not command:
            raise self.error('"command" must not be empty', "command")
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise self.error('"args" must be a list of strings', "args")
        cwd = self.string(entry, "cwd") if "cwd" in entry else None
        extra = self.extra(entry, _STDIO_FIELDS)  # warned before the shutdown object's own
        return StdioServerConfig(
            name=self.name,
            command=command,
            args=tuple(self.expand(a, f"args[{i}]") for i, a in enumerate(args)),
            env=self.string_map(entry, "env"),
            cwd=cwd,
            extra=extra,
            shutdown=ShutdownPolicy(**self.millis(entry, "shutdown", _SHUTDOWN_FIELDS))
            if "shutdown" in entry
            else None,
            **self.common(entry),
            expanded=dict(self.expanded),
        )

    def common(self, entry: dict[str, Any]) -> dict[str, Any]:
        """The fields every kind of entry may have."""
        out: dict[str, Any] = {}
        if "heartbeat" in entry:
            waits = self.millis(entry, "heartbeat", _HEARTBEAT_FIELDS, low=1)
            if "interval" not in waits:
                raise self.error('"heartbeat" needs "intervalMs"', "heartbeat")
            out["heartbeat"] = HeartbeatPolicy(**waits)
        if "disabled" in entry:
            if not isinstance(entry["disabled"], bool):
                raise self.error(f'"disabled" must be true or false, not {_kind(entry["disabled"])}', "disabled")
            out["disabled"] = entry["disabled"]
        return out

    def millis(self, entry: dict[str, Any], name: str, fields: Mapping[str, str], *, low: int = 0) -> dict[str, float]:
        """An object of durations in milliseconds, as seconds by attribute name."""
        value = entry[name]
        if not isinstance(value, dict):
            raise self.error(f'"{name}" must be an object, not {_kind(value)}', name)
        self.extra(value, frozenset(fields), prefix=f"{name}.")
        waits: dict[str, float] = {}
        for key, attribute in fields.items():
            if key not in value:
                continue
            raw = value[key]
            field = f"{name}.{key}"
            number = isinstance(raw, (int, float)) and not isinstance(raw, bool)
            if not number or not low <= raw <= 600_000:  # also refuses NaN and infinity
                shown = repr(raw) if number else _kind(raw)
                raise self.error(f'"{field}" must be a number of milliseconds ({low}-600000), not {shown}', field)
            waits[attribute] = raw / 1000
        return waits

    def remote(self, entry: dict[str, Any], transport: RemoteTransport) -> RemoteServerConfig:
        url = self.string(entry, "url")
        if not url.lower().startswith(_URL_SCHEMES[transport]):
            schemes = " or ".join(_URL_SCHEMES[transport])
            # The URL as written: what it expanded to may hold a secret (module docstring).
            raise self.error(f'"url" must start with {schemes} for "type": "{transport}", not "{entry["url"]}"', "url")
        helper = self.string(entry, "headersHelper") if "headersHelper" in entry else None
        extra = self.extra(entry, _REMOTE_FIELDS)  # warned before the oauth object's own
        return RemoteServerConfig(
            name=self.name,
            transport=transport,
            url=url,
            headers=self.string_map(entry, "headers"),
            headers_helper=helper,
            oauth=self.oauth(entry["oauth"]) if "oauth" in entry else None,
            extra=extra,
            **self.common(entry),
            expanded=dict(self.expanded),
        )

    def oauth(self, value: object) -> OAuthConfig:
        if not isinstance(value, dict):
            raise self.error(f'"oauth" must be an object, not {_kind(value)}', "oauth")
        port: int | None = None
        if "callbackPort" in value:
            raw = value["callbackPort"]
            if isinstance(raw, str):  # "${PORT}" is allowed: expanded, then read as a number
                raw = self.expand(raw, "oauth.callbackPort")
                # ASCII digits only, and few: int() refuses "²" and 5000-digit strings.
                raw = int(raw) if re.fullmatch(r"[0-9]{1,10}", raw) else raw
            if not isinstance(raw, int) or isinstance(raw, bool) or not 1 <= raw <= 65535:
                raise self.error('"oauth.callbackPort" must be a port number (1-65535)', "oauth.callbackPort")
            port = raw
        return OAuthConfig(
            client_id=self.string(value, "clientId", prefix="oauth.") if "clientId" in value else None,
            callback_port=port,
            auth_server_metadata_url=(
                self.string(value, "authServerMetadataUrl", prefix="oauth.")
                if "authServerMetadataUrl" in value
                else None
            ),
            extra=self.extra(value, _OAUTH_FIELDS, prefix="oauth."),
        )

    # ------------------------------------------------------------------ fields

    def string(self, obj: dict[str, Any], key: str, *, prefix: str = "") -> str:
        """``obj[key]``, which must be there and be a string, expanded."""
        field = prefix + key
        if key not in obj:
            raise self.error(f'"{field}" is missing', field)
        value = obj[key]
        if not isinstance(value, str):
            raise self.error(f'"{field}" must be a string, not {_kind(value)}', field)
        return self.expand(value, field)

    def string_map(self, obj: dict[str, Any], key: str) -> dict[str, str]:
        value = obj.get(key, {})
        if not isinstance(value, dict):
            raise self.error(f'"{key}" must be an object of strings, not {_kind(value)}', key)
        result: dict[str, str] = {}
        for k, v in value.items():
            if not isinstance(v, str):
                raise self.error(f'"{key}.{k}" must be a string, not {_kind(v)}', f"{key}.{k}")
            result[k] = self.expand(v, f"{key}.{k}")
        return result

    def extra(self, obj: dict[str, Any], known: frozenset[str], *, prefix: str = "") -> dict[str, Any]:
        unknown = {k: v for k, v in obj.items() if k not in known}
        for key in unknown:
            self.warn(f'unknown field "{prefix}{key}" (kept, not used)')
        return unknown

    def expand(self, value: str, field: str) -> str:
        def replace(match: re.Match[str]) -> str:
            variable, default = match.group(1), match.group(2)
            if variable in self.environ:
                self.expanded[variable] = self.environ[variable]
                return self.environ[variable]
            if default is not None:
                return default
            raise self.error(
                f'"{field}": ${{{variable}}} is not set and has no default '
                f"(write ${{{variable}:-default}} to give one)",
                field,
            )

        for other in _OTHER_VARIABLE.findall(value):
            self.warn(f'"{field}": {other} is not expanded (only ${{VAR}} and ${{VAR:-default}} are)')
        return _VARIABLE.sub(replace, value)


def _kind(value: object) -> str:
    """A JSON reader's name for the type of ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _blank_comments(text: str) -> str:
    """``text`` with ``//`` and ``/* */`` comments and trailing commas turned into spaces.

    VS Code's JSON-with-comments; positions are kept (newlines survive, every removed
    character becomes a space) so a JSON error still points at the right line and column.
    Plain JSON comes back unchanged.
    """
    if "/" not in text and "," not in text:
        return text
    out = list(text)
    i, n = 0, len(text)
    last_comma: int | None = None  # a comma not yet followed by anything but blanks/comments
    while i < n:
        c = text[i]
        if c == '"':
            last_comma = None
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = [ch if ch == "\n" else " " for ch in text[i:end]]
            i = end
        else:
            if c in "}]" and last_comma is not None:
                out[last_comma] = " "
            if c == ",":
                last_comma = i
            elif not c.isspace():
                last_comma = None
            i += 1
    return "".join(out)
