"""Checks of MCP Apps views (the ``io.modelcontextprotocol/ui`` extension, SEP-1865).

The harness declares the extension (``open_client(extensions=...)``), so a server
that links views only for clients that declared it links them here.  For every
tool with a link: the link itself (a ``ui://`` URI; visibility only ``model`` and
``app``; the current ``_meta.ui`` spelling rather than the deprecated flat key),
then each distinct view, read once with ``resources/read``: it exists ("Resource
MUST exist on the server"), and its content is what the extension requires (the
``text/html;profile=mcp-app`` type, HTML as text or base64 blob, well-formed
``_meta.ui``).  A server whose tools link no view gets every check skipped with
that reason: no pass is given for what was not seen.
"""

from __future__ import annotations

from typing import Final

import trio

from ..._errors import McpError, TrimcpError
from ..._sansio import apps
from ..._sansio import schema as s
from ..results import Tour

__all__ = ["APPS_CHECKS", "check_apps"]

APPS_CHECKS: Final = ("apps.tool-link", "apps.current-key", "apps.view-exists", "apps.view-content")
#: Views read at most (a server may link one per tool; a few show the rules are kept).
MAX_VIEWS: Final = 8


async def check_apps(tour: Tour) -> None:
    rec = tour.rec
    if not rec.wants(*APPS_CHECKS):
        return
    if "tools" not in tour.client.server_capabilities:
        for check_id in APPS_CHECKS:
            rec.skip(check_id, "the server does not advertise tools")
        return
    linked = [(tool, link) for tool in tour.tools if (link := apps.tool_link(s.to_wire(tool))) is not None]
    if not linked:
        for check_id in APPS_CHECKS:
            rec.skip(check_id, f"no tool links an MCP Apps view (the harness declared {apps.EXTENSION})")
        return
    bad = [f"{tool.name}: {problem}" for tool, link in linked for problem in link.problems]
    if bad:
        rec.fail("apps.tool-link", "; ".join(bad[:5]))
    else:
        rec.ok(
            "apps.tool-link",
            f"{len(linked)} tool(s) link a ui:// view: " + ", ".join(sorted({t.name for t, _ in linked})[:5]),
        )
    flat = [tool.name for tool, link in linked if link.deprecated_key]
    if flat:
        rec.fail("apps.current-key", f"linked with the deprecated _meta['ui/resourceUri']: {', '.join(flat[:5])}")
    else:
        rec.ok("apps.current-key", "every link is _meta.ui.resourceUri")
    uris = sorted(
        {
            link.resource_uri
            for _, link in linked
            if link.resource_uri is not None and link.resource_uri.startswith(apps.SCHEME)
        }
    )
    if not uris:
        rec.skip("apps.view-exists", "no link names a ui:// resource to read")
        rec.skip("apps.view-content", "no link names a ui:// resource to read")
        return
    missing: list[str] = []
    problems: list[str] = []
    read = 0
    for uri in uris[:MAX_VIEWS]:
        try:
            with trio.fail_after(tour.request_timeout):
                result = await tour.client.request("resources/read", {"uri": uri})
        except McpError as exc:
            missing.append(f"{uri}: [{exc.code}] {exc}")
            continue
        except (TrimcpError, trio.TooSlowError) as exc:
            missing.append(f"{uri}: {type(exc).__name__}: {exc}")
            continue
        read += 1
        problems += [f"{uri}: {p}" for p in apps.view_problems(uri, result)]
    if missing:
        rec.fail("apps.view-exists", "; ".join(missing[:5]))
    else:
        rec.ok("apps.view-exists", f"{read} linked view(s) read")
    if not read:
        rec.skip("apps.view-content", "no linked view could be read")
    elif problems:
        rec.fail("apps.view-content", "; ".join(problems[:5]))
    else:
        rec.ok("apps.view-content", f"{read} view(s): {apps.MIME_TYPE}, HTML content, well-formed _meta.ui")
