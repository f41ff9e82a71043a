"""Sphinx configuration of the trimcp documentation site.

Build it as CI does (warnings are errors):

    pip install -e '.[docs]'
    sphinx-build -W --keep-going -b html docs docs/_build/html

Sphinx rather than MkDocs: the docstrings are reStructuredText (``double backticks``, ``::``
literal blocks, bullet lists), which autodoc renders as written; the pages are Markdown (MyST),
like the README.  The API reference (``reference/``) is generated from each public module's
``__all__`` by ``_ext/trimcp_api.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]

from trimcp._version import __version__  # noqa: E402  (the checkout's, however it is installed)

project = "trimcp"
author = "the trimcp authors"
copyright = "2026, the trimcp authors"
version = release = __version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "trimcp_api"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext"]

# Markdown: the README's anchors (#exit-status) work the same here.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

html_theme = "furo"
html_title = f"trimcp {release}"
html_static_path: list[str] = []
