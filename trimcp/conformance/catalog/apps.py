"""Checks of the MCP Apps extension (``io.modelcontextprotocol/ui``, ext-apps
specification 2026-01-26): tools' view links and the views they name."""

from __future__ import annotations

from typing import Final

from ..model import CheckSpec, Level
from .core import FROM_2025_06_18

M, B = Level.MUST, Level.BEST
PAGE: Final = "extensions/apps"

# Tools carry _meta (where the link lives) from 2025-06-18 on.
SPECS: Final[tuple[CheckSpec, ...]] = (
    CheckSpec(
        "apps.tool-link",
        M,
        PAGE,
        "a tool's view link names a ui:// resource; visibility holds only model and app",
        FROM_2025_06_18,
    ),
    # The flat key is deprecated ("will be removed before GA"): a habit, no MUST.
    CheckSpec(
        "apps.current-key",
        B,
        PAGE,
        "views are linked with _meta.ui.resourceUri, not the deprecated _meta['ui/resourceUri']",
        FROM_2025_06_18,
    ),
    CheckSpec("apps.view-exists", M, PAGE, "every linked view exists and reads with resources/read", FROM_2025_06_18),
    CheckSpec(
        "apps.view-content",
        M,
        PAGE,
        "a view is text/html;profile=mcp-app, HTML as text or base64 blob, with well-formed _meta.ui "
        "(CSP origins, permissions, domain, prefersBorder)",
        FROM_2025_06_18,
    ),
)
