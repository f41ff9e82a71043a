"""``trimcp.config``: the mcpServers files of Claude Desktop, Claude Code and VS Code.

Files are written to ``tmp_path`` and read with ``load_config``, as a user's would be;
``parse_config`` is used where the file's text is beside the point.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from source_imports import PACKAGE_DIR, imports_of

from trimcp import TrimcpError
from trimcp.config import (
    ConfigError,
    HeartbeatPolicy,
    McpConfig,
    OAuthConfig,
    RemoteServerConfig,
    StdioServerConfig,
    _blank_comments,
    load_config,
    parse_config,
)

CLAUDE_DESKTOP = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
        },
        "time": {
            "command": "uvx",
            "args": ["mcp-server-time", "--local-timezone=${TZ:-UTC}"],
            "env": {"LOG_LEVEL": "debug", "HOME_DIR": "${HOME}"},
            "cwd": "${HOME}/work",
        },
    },
    "globalShortcut": "Ctrl+Space",  # the app's own settings sit beside the servers
}

CLAUDE_CODE = {
    "mcpServers": {
        "api": {
            "type": "http",
            "url": "https://${API_HOST:-api.example.com}/mcp",
            "headers": {"Authorization": "Bearer ${API_TOKEN}", "X-Team": "core"},
            "headersHelper": "/opt/bin/get-headers --for ${USER:-nobody}",
        },
        "events": {"type": "sse", "url": "http://127.0.0.1:9000/sse"},
        "local": {"type": "stdio", "command": "python", "args": ["-m", "server"], "env": {}},
        "authed": {
            "type": "http",
            "url": "https://mcp.example.com/mcp",
            "oauth": {
                "clientId": "${CLIENT_ID}",
                "callbackPort": 8765,
                "authServerMetadataUrl": "https://auth.example.com/.well-known/oauth-authorization-server",
            },
        },
    }
}

# VS Code: "servers", an "inputs" list (prompts; ignored), comments and trailing commas.
VSCODE = """\
{
  // prompted by VS Code; not ours to ask
  "inputs": [
    {"type": "promptString", "id": "api-key", "description": "API key", "password": true},
  ],
  "servers": {
    /* a local one */
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]},
    "remote": {"url": "https://example.com/mcp", "headers": {"Key": "${input:api-key}"},},
    "sock": {"url": "wss://example.com/ws"},
    "s": {"type": "streamable-http", "url": "http://localhost:1/mcp // not a comment"},
  },
}
"""

ENV = {"HOME": "/home/me", "API_TOKEN": "t0ken", "CLIENT_ID": "cid-1"}


def write(tmp_path: Path, content: Any, name: str = ".mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def error_of(obj: Any, environ: dict[str, str] | None = None) -> ConfigError:
    """The file's own error, or else that of its one bad entry (raised when it is asked for)."""
    with pytest.raises(ConfigError) as info:
        config = parse_config(obj, source=".mcp.json", environ=ENV if environ is None else environ)
        assert len(config.errors) == 1, config.errors
        (name,) = config.errors
        config.server(name)
    return info.value


# ---------------------------------------------------------------- every entry shape


def test_claude_desktop_file(tmp_path: Path) -> None:
    path = write(tmp_path, CLAUDE_DESKTOP, "claude_desktop_config.json")
    config = load_config(path, environ=ENV)
    assert isinstance(config, McpConfig)
    assert config.path == path and config.source == str(path)
    assert list(config.servers) == ["filesystem", "time"]
    assert config.servers["filesystem"] == StdioServerConfig(
        name="filesystem",
        command="npx",
        args=("-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"),
    )
    time = config.server("time")
    assert time == StdioServerConfig(
        name="time",
        command="uvx",
        args=("mcp-server-time", "--local-timezone=UTC"),
        env={"LOG_LEVEL": "debug", "HOME_DIR": "/home/me"},
        cwd="/home/me/work",
    )
    assert time.transport == "stdio"
    assert config.warnings == []  # the app's own top-level keys are not ours to warn about


def test_claude_code_file_with_http_headers_sse_and_oauth(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, CLAUDE_CODE), environ=ENV)
    assert config.servers["api"] == RemoteServerConfig(
        name="api",
        transport="http",
        url="https://api.example.com/mcp",
        headers={"Authorization": "Bearer t0ken", "X-Team": "core"},
        headers_helper="/opt/bin/get-headers --for nobody",
    )
    assert config.servers["events"] == RemoteServerConfig(
        name="events", transport="sse", url="http://127.0.0.1:9000/sse"
    )
    assert config.servers["local"] == StdioServerConfig(name="local", command="python", args=("-m", "server"))
    authed = config.servers["authed"]
    assert isinstance(authed, RemoteServerConfig)
    assert authed.oauth == OAuthConfig(
        client_id="cid-1",
        callback_port=8765,
        auth_server_metadata_url="https://auth.example.com/.well-known/oauth-authorization-server",
    )
    assert config.warnings == []


def test_vscode_file_with_inputs_comments_and_trailing_commas(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, VSCODE, "mcp.json"), environ={})
    assert config.servers == {
        "fetch": StdioServerConfig(name="fetch", command="uvx", args=("mcp-server-fetch",)),
        # ${input:...} is VS Code's to prompt for: left as written, with a warning
        "remote": RemoteServerConfig(
            name="remote", transport="http", url="https://example.com/mcp", headers={"Key": "${input:api-key}"}
        ),
        "sock": RemoteServerConfig(name="sock", transport="ws", url="wss://example.com/ws"),
        "s": RemoteServerConfig(name="s", transport="http", url="http://localhost:1/mcp // not a comment"),
    }
    assert config.warnings == [
        (
            f'{tmp_path / "mcp.json"}: server "remote": "headers.Key": ${{input:api-key}} is not expanded '
            "(only ${VAR} and ${VAR:-default} are)"
        ),
    ]


@pytest.mark.parametrize(
    ("url", "transport"),
    [
        ("http://127.0.0.1:8000/mcp", "http"),
        ("HTTPS://example.com/mcp", "http"),
        ("ws://127.0.0.1:8000/ws", "ws"),
        ("wss://example.com/ws", "ws"),
    ],
)
def test_a_url_without_type_is_http_or_by_scheme_ws(url: str, transport: str) -> None:
    server = parse_config({"mcpServers": {"x": {"url": url}}}).server("x")
    assert isinstance(server, RemoteServerConfig) and server.transport == transport and server.url == url


def test_an_empty_servers_object_is_a_file_with_no_servers() -> None:
    config = parse_config({"mcpServers": {}}, source="a.json")
    assert config.servers == {} and config.path is None
    with pytest.raises(ConfigError, match=r'^a.json: no server "x" \(it defines no servers\)$'):
        config.server("x")


def test_mcpservers_wins_over_servers_with_a_warning() -> None:
    config = parse_config({"mcpServers": {"a": {"command": "a"}}, "servers": {"b": {"command": "b"}}}, source="f.json")
    assert list(config.servers) == ["a"]
    assert config.warnings == ['f.json: both "mcpServers" and "servers"; "servers" is ignored']


# ---------------------------------------------------------------- ${VAR} expansion


def test_expansion_in_every_string_field() -> None:
    environ = {"V": "v"}
    config = parse_config(
        {
            "mcpServers": {
                "s": {
                    "command": "${V}/bin",
                    "args": ["-a", "${V}", "x${V}y${V}"],
                    "env": {"K": "${V}"},
                    "cwd": "/${V}",
                },
                "r": {
                    "url": "https://${V}.example/mcp",
                    "headers": {"H": "${V}"},
                    "headersHelper": "${V}.sh",
                    "oauth": {
                        "clientId": "${V}",
                        "authServerMetadataUrl": "https://${V}/meta",
                        "callbackPort": "${PORT:-9000}",
                    },
                },
            }
        },
        environ=environ,
    )
    assert config.servers["s"] == StdioServerConfig(
        name="s", command="v/bin", args=("-a", "v", "xvyv"), env={"K": "v"}, cwd="/v"
    )
    assert config.servers["r"] == RemoteServerConfig(
        name="r",
        transport="http",
        url="https://v.example/mcp",
        headers={"H": "v"},
        headers_helper="v.sh",
        oauth=OAuthConfig(client_id="v", callback_port=9000, auth_server_metadata_url="https://v/meta"),
    )


def test_defaults_apply_only_when_unset() -> None:
    entry = {"command": "x", "args": ["${A:-one}", "${B:-two}", "${C:-}", "${D:-a b:c}"]}
    server = parse_config({"mcpServers": {"x": entry}}, environ={"A": "set", "C": "c"}).server("x")
    assert isinstance(server, StdioServerConfig)
    # a set variable wins even when empty-looking defaults are given; the default is literal
    assert server.args == ("set", "two", "c", "a b:c")
    empty = parse_config({"mcpServers": {"x": entry}}, environ={"A": ""}).server("x")
    assert isinstance(empty, StdioServerConfig) and empty.args[0] == ""


def test_vscode_env_spelling_means_the_same() -> None:
    server = parse_config(
        {"servers": {"x": {"command": "${env:A}", "args": ["${env:B:-b}"]}}}, environ={"A": "a"}
    ).server("x")
    assert isinstance(server, StdioServerConfig) and (server.command, server.args) == ("a", ("b",))
    err = error_of({"servers": {"x": {"command": "${env:NOPE}"}}})
    assert '"command": ${NOPE} is not set' in str(err)


def test_expansion_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIMCP_TEST_CONFIG_VAR", "from-os")
    server = parse_config({"mcpServers": {"x": {"command": "${TRIMCP_TEST_CONFIG_VAR}"}}}).server("x")
    assert isinstance(server, StdioServerConfig) and server.command == "from-os"


def test_an_unset_variable_names_the_variable_file_server_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path, {"mcpServers": {"api": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}}}}
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={}).server("api")
    assert str(info.value) == (
        f'{path}: server "api": "headers.Authorization": ${{API_TOKEN}} is not set and has no default '
        "(write ${API_TOKEN:-default} to give one)"
    )
    assert (info.value.source, info.value.server, info.value.field) == (str(path), "api", "headers.Authorization")
    assert isinstance(info.value, TrimcpError)


def test_an_unset_variable_in_args_names_the_index() -> None:
    err = error_of({"mcpServers": {"t": {"command": "x", "args": ["ok", "${NOPE}"]}}})
    assert str(err).startswith('.mcp.json: server "t": "args[1]": ${NOPE} is not set')


# ---------------------------------------------------------------- bad files


def test_an_unreadable_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ConfigError, match=r"nope.json: cannot read the file: No such file or directory$"):
        load_config(missing)
    with pytest.raises(ConfigError, match=r"cannot read the file: Is a directory$"):
        load_config(tmp_path)


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"mcpServers": {"\xff": {}}}')  # byte 17, counted from 0
    with pytest.raises(ConfigError, match=r"bad.json: not UTF-8 text \(byte 17, counted from 0\)$"):
        load_config(path)


def test_a_json_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, '{\n  "mcpServers": {\n    "a": {"command": "x"}\n    "b": {}\n  }\n}\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: not valid JSON: Expecting ',' delimiter (line 4, column 5)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"mcpServers": {"a": {"command": "x", "n": ' + "9" * 5000 + "}}}", "not usable JSON: Exceeds the limit"),
        ("[" * 100_000 + "]" * 100_000, "not usable JSON: maximum recursion depth exceeded"),
    ],
)
def test_json_python_cannot_hold_is_a_config_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


def test_comments_do_not_shift_the_reported_position(tmp_path: Path) -> None:
    path = write(tmp_path, '{ /* one\n two */ "servers": { // three\n "a": nope }}')
    with pytest.raises(ConfigError, match=r"Expecting value \(line 3, column 7\)$"):
        load_config(path)


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"mcpServers": {"a": {"command": "x"}}}).encode())
    assert list(load_config(path).servers) == ["a"]


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([], ".mcp.json: the top level must be a JSON object, not a list"),
        ({"other": 1}, '.mcp.json: no "mcpServers" object (Claude) or "servers" object (VS Code)'),
        ({"mcpServers": []}, '.mcp.json: "mcpServers" must be an object, not a list'),
        ({"servers": "x"}, '.mcp.json: "servers" must be an object, not a string'),
    ],
)
def test_a_file_without_a_servers_object(obj: Any, message: str) -> None:
    err = error_of(obj)
    assert str(err) == message and err.server is None


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        ("uvx time", None, "the entry must be an object, not a string"),
        ({}, "command", 'needs a "command" (a program to run) or a "url"'),
        ({"command": "x", "url": "http://h/"}, None, 'has both "command" and "url"; say which with "type"'),
        ({"type": 3, "command": "x"}, "type", '"type" must be a string'),
        ({"type": "quic", "url": "x"}, "type", '"type" must be one of "stdio", "http", "sse", "ws", not "quic"'),
        ({"command": ["uvx"]}, "command", '"command" must be a string, not a list'),
        ({"command": ""}, "command", '"command" must not be empty'),
        ({"type": "stdio"}, "command", '"command" is missing'),
        ({"command": "x", "args": "mcp-server-time"}, "args", '"args" must be a list of strings'),
        ({"command": "x", "args": ["a", 1]}, "args", '"args" must be a list of strings'),
        ({"command": "x", "env": ["A=1"]}, "env", '"env" must be an object of strings, not a list'),
        ({"command": "x", "env": {"PORT": 8080}}, "env.PORT", '"env.PORT" must be a string, not a number'),
        ({"command": "x", "cwd": None}, "cwd", '"cwd" must be a string, not null'),
        ({"type": "http"}, "url", '"url" is missing'),
        ({"url": 5}, "url", '"url" must be a string, not a number'),
        (
            {"type": "http", "url": "ws://h/"},
            "url",
            '"url" must start with http:// or https:// for "type": "http", not "ws://h/"',
        ),
        (
            {"type": "ws", "url": "http://h/"},
            "url",
            '"url" must start with ws:// or wss:// for "type": "ws", not "http://h/"',
        ),
        (
            {"type": "sse", "url": "localhost:8000"},
            "url",
            '"url" must start with http:// or https:// for "type": "sse", not "localhost:8000"',
        ),
        ({"url": "http://h/", "headers": {"A": True}}, "headers.A", '"headers.A" must be a string, not a boolean'),
        ({"url": "http://h/", "headersHelper": ["x"]}, "headersHelper", '"headersHelper" must be a string, not a list'),
        ({"url": "http://h/", "oauth": "id"}, "oauth", '"oauth" must be an object, not a string'),
        (
            {"url": "http://h/", "oauth": {"clientId": 1}},
            "oauth.clientId",
            '"oauth.clientId" must be a string, not a number',
        ),
        (
            {"url": "http://h/", "oauth": {"callbackPort": 70000}},
            "oauth.callbackPort",
            '"oauth.callbackPort" must be a port number (1-65535)',
        ),
        (
            {"url": "http://h/", "oauth": {"callbackPort": True}},
            "oauth.callbackPort",
            '"oauth.callbackPort" must be a port number (1-65535)',
        ),
        (
            {"url": "http://h/", "oauth": {"callbackPort": "eighty"}},
            "oauth.callbackPort",
            '"oauth.callbackPort" must be a port number (1-65535)',
        ),
        (
            {"url": "http://h/", "oauth": {"authServerMetadataUrl": {}}},
            "oauth.authServerMetadataUrl",
            '"oauth.authServerMetadataUrl" must be a string, not an object',
        ),
    ],
)
def test_a_bad_entry_names_file_server_and_field(entry: Any, field: str | None, message: str) -> None:
    err = error_of({"mcpServers": {"good": {"command": "x"}, "time": entry}})
    assert str(err) == f'.mcp.json: server "time": {message}'
    assert (err.source, err.server, err.field) == (".mcp.json", "time", field)


def test_the_file_is_named_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"mcpServers": {"time": {"command": "x", "args": "y"}}})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_config(".mcp.json").server("time")
    assert str(info.value) == '.mcp.json: server "time": "args" must be a list of strings'


def test_a_bad_entry_does_not_hide_the_good_ones() -> None:
    config = parse_config({"mcpServers": {"good": {"command": "x"}, "bad": {"command": 3}}}, source="f.json")
    assert config.server("good") == StdioServerConfig(name="good", command="x")
    assert list(config.servers) == ["good"] and list(config.errors) == ["bad"]
    with pytest.raises(ConfigError, match='server "bad": "command" must be a string'):
        config.server("bad")
    with pytest.raises(ConfigError, match='no server "other" \\(known: "bad", "good"\\)'):
        config.server("other")


def test_an_unknown_server_name_lists_the_known_ones(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, CLAUDE_DESKTOP), environ=ENV)
    with pytest.raises(ConfigError) as info:
        config.server("tiem")
    assert str(info.value) == f'{tmp_path / ".mcp.json"}: no server "tiem" (known: "filesystem", "time")'
    assert info.value.server == "tiem"


# ---------------------------------------------------------------- comments, duplicates


def test_comment_markers_inside_strings_are_text() -> None:
    text = '{"a": "x // y", "b": "/* z */", "c": "q\\"//", "d": [1, "]",],}'
    assert json.loads(_blank_comments(text)) == {"a": "x // y", "b": "/* z */", "c": 'q"//', "d": [1, "]"]}
    # an unterminated block comment runs to the end, and the parser then says what is missing
    assert _blank_comments('{"a": 1 /* never closed\n') == '{"a": 1                \n'


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='/*,]}"\\ \nab'),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(alphabet='/*,"ab', max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(JSON_VALUES, st.sampled_from([None, 2]))
def test_plain_json_passes_the_comment_blanker_unchanged(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    assert _blank_comments(text) == text


def test_a_server_written_twice_is_warned_about(tmp_path: Path) -> None:
    path = write(tmp_path, '{"mcpServers": {"t": {"command": "old"}, "t": {"command": "new"}}}')
    config = load_config(path)
    server = config.server("t")
    assert isinstance(server, StdioServerConfig) and server.command == "new"
    assert config.warnings == [f'{path}: "t" is written twice in one object; the last one is used']


# ---------------------------------------------------------------- unknown fields


def test_unknown_fields_are_kept_and_warned_about() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "s": {"command": "x", "disabled": True, "alwaysAllow": ["t"], "envFile": "${NOT_EXPANDED}"},
                "r": {
                    "type": "http",
                    "url": "http://h/",
                    "timeout": 5,
                    "command": "ignored",
                    "oauth": {"clientId": "c", "scopes": ["a"]},
                },
            }
        },
        source="c.json",
        environ={},
    )
    s, r = config.servers["s"], config.servers["r"]
    # "disabled" is understood now (a pool skips the entry); the rest is kept and warned about.
    assert s.extra == {"alwaysAllow": ["t"], "envFile": "${NOT_EXPANDED}"} and s.disabled is True
    assert isinstance(r, RemoteServerConfig) and r.extra == {"timeout": 5, "command": "ignored"}
    assert r.oauth is not None and r.oauth.extra == {"scopes": ["a"]} and r.oauth.client_id == "c"
    assert config.warnings == [
        'c.json: server "s": unknown field "alwaysAllow" (kept, not used)',
        'c.json: server "s": unknown field "envFile" (kept, not used)',
        'c.json: server "r": unknown field "timeout" (kept, not used)',
        'c.json: server "r": unknown field "command" (kept, not used)',
        'c.json: server "r": unknown field "oauth.scopes" (kept, not used)',
    ]


# ---------------------------------------------------------------- values and purity


def test_values_are_frozen() -> None:
    server = parse_config({"mcpServers": {"x": {"command": "x"}}}).server("x")
    with pytest.raises(AttributeError):
        server.command = "y"  # type: ignore[misc]


def test_the_module_starts_nothing() -> None:
    """Pure apart from reading the file: no concurrency, network, process or clock module."""
    io = {
        "trio",
        "trio_websocket",
        "httpx",
        "h11",
        "socket",
        "ssl",
        "subprocess",
        "asyncio",
        "threading",
        "time",
        "keyring",
        "shutil",
        "signal",
    }
    imported = {name for _, name in imports_of(PACKAGE_DIR / "config.py")}
    assert not {name.split(".")[0] for name in imported} & io
    ours = {name for name in imported if name.startswith("trimcp")}
    assert ours == {"trimcp._errors", "trimcp._redaction", "trimcp._shutdown"}
    # The redactor and the shutdown policy it hands out are pure too, and stand on
    # nothing of ours.
    for module in ("_redaction.py", "_shutdown.py"):
        leaf = {name for _, name in imports_of(PACKAGE_DIR / module)}
        assert not {name.split(".")[0] for name in leaf} & io, module
        assert not {name for name in leaf if name.startswith("trimcp")}, module


def test_heartbeat_and_disabled_on_either_kind_of_entry() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "local": {"command": "srv", "heartbeat": {"intervalMs": 30000}, "disabled": True},
                "web": {"url": "https://example.com/mcp", "heartbeat": {"intervalMs": 15000, "timeoutMs": 2500}},
            }
        }
    )
    local, web = config.server("local"), config.server("web")
    assert local.heartbeat == HeartbeatPolicy(interval=30.0) and local.heartbeat.timeout == 10.0
    assert local.disabled is True and "disabled" not in local.extra
    assert web.heartbeat == HeartbeatPolicy(interval=15.0, timeout=2.5) and web.disabled is False
    assert config.warnings == []


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"heartbeat": {"timeoutMs": 100}}, '"heartbeat" needs "intervalMs"'),
        ({"heartbeat": {"intervalMs": 0}}, '"heartbeat.intervalMs" must be a number of milliseconds (1-600000), not 0'),
        ({"heartbeat": 30}, '"heartbeat" must be an object, not a number'),
        ({"disabled": "yes"}, '"disabled" must be true or false, not a string'),
    ],
)
def test_bad_heartbeat_or_disabled_names_the_field(entry: dict[str, Any], message: str) -> None:
    config = parse_config({"mcpServers": {"s": {"command": "srv", **entry}}})
    with pytest.raises(ConfigError) as caught:
        config.server("s")
    assert message in str(caught.value)
