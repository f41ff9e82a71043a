"""The API reference, one page per public module, generated from the module's ``__all__``.

``trimcp._api_listing.PUBLIC_MODULES`` names the public modules and each one's ``__all__`` its
names, the same source as ``docs/api.md``.  A page holds one directive::

    ```{trimcp-module} trimcp.host
    ```

which expands into the module's docstring and one autodoc entry per name in ``__all__``
(``autoclass`` with its public members for a class or an exception, ``autofunction``, and
``py:data`` with the type and the short values of a constant or a type alias).  A name that an earlier public module already
exports (``trimcp.SchemaError`` is ``trimcp.schema.SchemaError``'s object) gets a link to that
entry instead of a second one.  At the end of the build every name of every public module must
have its entry: a name with none is a warning, and so an error under ``-W``.

``trimcp-requirements`` puts the requirements coverage table (``trimcp check --requirements``)
in a page, computed from the catalogue as the site is built.
"""

from __future__ import annotations

import importlib
import inspect
import io
import re
from typing import Any

import attrs
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

from trimcp import _api_listing

log = logging.getLogger(__name__)


def _owners() -> dict[int, str]:
    """The first public module (in listing order) whose ``__all__`` holds each object."""
    owners: dict[int, str] = {}
    for module_name in _api_listing.PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                owners.setdefault(id(value), f"{module_name}.{name}")
    return owners


def _directive(module_name: str, name: str, value: Any) -> list[str]:
    full = f"{module_name}.{name}"
    kind = _api_listing.kind(value)
    if kind == "module":
        return [f"``{full}``: the module :doc:`{value.__name__}`.", ""]
    if kind in ("class", "exception", "enum"):
        bases = ["   :show-inheritance:"] if value.__bases__ != (object,) else []  # "Bases: object" says nothing
        return [f".. autoclass:: {full}", "   :members:", *bases, ""]
    if kind == "function" and (inspect.isfunction(value) or inspect.isbuiltin(value)):
        return [f".. autofunction:: {full}", ""]
    # A constant, a type alias or a callable instance: its type and, when short enough to read,
    # its value.  Not autodata: an instance's docstring is its type's (dict's, for a table).
    text = repr(value)
    lines = [f".. py:data:: {name}", f"   :module: {module_name}"]
    if kind != "type alias":
        lines.append(f"   :type: {type(value).__qualname__}")
    if len(text) <= 100 and "\n" not in text:
        lines.append(f"   :value: {text}")
    return lines + [""]


class ModuleDirective(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        module_name = self.arguments[0]
        if module_name not in _api_listing.PUBLIC_MODULES:
            raise self.error(f"{module_name} is not a public module (trimcp._api_listing.PUBLIC_MODULES)")
        module = importlib.import_module(module_name)
        owners = _owners()
        lines = [f".. automodule:: {module_name}", "   :no-members:", ""]
        for name in sorted(module.__all__, key=lambda n: (n.lower(), n)):
            value = getattr(module, name)
            owner = owners.get(id(value)) if inspect.isclass(value) or inspect.isfunction(value) else None
            full = f"{module_name}.{name}"
            if owner is not None and owner != full:
                lines += [f"``{full}``: the same object as :py:obj:`{owner}`.", ""]
                self.env.metadata[self.env.docname].setdefault("trimcp_aliases", []).append(full)
            else:
                lines += _directive(module_name, name, value)
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source=f"<trimcp-module {module_name}>"), container)
        return container.children


class RequirementsDirective(SphinxDirective):
    """``trimcp check --requirements`` as of this build: the catalogue's coverage, one source."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from trimcp import ALL_VERSIONS
        from trimcp.conformance import write_requirements_coverage

        out = io.StringIO()
        write_requirements_coverage(ALL_VERSIONS, out, as_json=False, listing=False)
        return [nodes.literal_block(out.getvalue(), out.getvalue())]


_ATTRS_DEFAULT = re.compile(r"attr_dict\['(\w+)'\]\.default")


def _attrs_defaults(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, signature: str | None, annotation: str | None
) -> tuple[str, str | None] | None:
    """attrs writes a class's ``__init__`` with ``attr_dict['x'].default`` for each default; show
    the default itself (``<factory>`` for one made per instance)."""
    if not signature or "attr_dict[" not in signature or not attrs.has(obj):
        return None
    fields = attrs.fields_dict(obj)

    def default(match: re.Match[str]) -> str:
        value = fields[match.group(1)].default
        return "<factory>" if isinstance(value, attrs.Factory) else repr(value)  # type: ignore[arg-type]

    return _ATTRS_DEFAULT.sub(default, signature), annotation


def _check_every_name(app: Sphinx, env: Any) -> None:
    objects = env.get_domain("py").objects
    aliases = {a for meta in env.metadata.values() for a in meta.get("trimcp_aliases", [])}
    for module_name in _api_listing.PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            full = f"{module_name}.{name}"
            if full not in objects and full not in aliases and _api_listing.kind(getattr(module, name)) != "module":
                log.warning("the API reference has no entry for %s", full, type="trimcp", subtype="api")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("trimcp-module", ModuleDirective)
    app.add_directive("trimcp-requirements", RequirementsDirective)
    app.connect("env-check-consistency", _check_every_name)
    app.connect("autodoc-process-signature", _attrs_defaults)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
