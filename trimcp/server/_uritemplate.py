"""Matching URIs against RFC 6570 level-1 templates (MCP resource templates).

Theory of operation
-------------------
A resource template such as ``test://template/{id}/data`` names a family of
resources; ``resources/read`` gets a concrete URI and the server must find the
template that produced it and recover the variables.  Level 1 of RFC 6570 has
only simple string expansion, ``{var}``: the value is percent-encoded except
for unreserved characters, so an expanded value never contains ``/``, ``?``
or ``#``.  We compile each template into an anchored regular expression with
one group per variable matching ``[^/?#]+`` (a little more lenient than the
RFC: a client that forgot to encode ``:`` still matches) and percent-decode
what it captured.  Operators of higher levels (``{+var}``, ``{?q}``, ...) are
refused at registration time rather than silently mismatched.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import quote, unquote

_EXPRESSION: Final = re.compile(r"\{([^{}]*)\}")
_VARNAME: Final = re.compile(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*")


def _literal(template: str, text: str) -> str:
    # A brace outside an expression is no literal RFC 6570 allows (section 2.1):
    # "a}{x}" or "{{x}" is a typo, not a template.
    if "{" in text or "}" in text:
        raise ValueError(f"URI template {template!r} has an unbalanced brace")
    return re.escape(text)


class UriTemplate:
    """A compiled level-1 URI template."""

    def __init__(self, template: str) -> None:
        self.template = template
        pattern: list[str] = []
        names: list[str] = []
        pos = 0
        for m in _EXPRESSION.finditer(template):
            name = m.group(1)
            if not _VARNAME.fullmatch(name):
                raise ValueError(
                    f"URI template {template!r}: only level-1 expressions like {{name}} are "
                    f"supported, not {{{name}}}"
                )
            if name in names:
                raise ValueError(f"URI template {template!r}: variable {name!r} appears twice")
            names.append(name)
            pattern.append(_literal(template, template[pos:m.start()]))
            pattern.append(f"(?P<v{len(names) - 1}>[^/?#]+?)")
            pos = m.end()
        pattern.append(_literal(template, template[pos:]))
        self.variables: tuple[str, ...] = tuple(names)
        self._regex = re.compile("".join(pattern))

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables if ``uri`` is an expansion of this template, else ``None``."""
        m = self._regex.fullmatch(uri)
        if m is None:
            return None
        return {name: unquote(m.group(f"v{i}")) for i, name in enumerate(self.variables)}

    def expand(self, **values: str) -> str:
        """The URI for ``values`` (level-1 expansion: reserved characters percent-encoded)."""
        return _EXPRESSION.sub(lambda m: quote(values[m.group(1)], safe="-._~"), self.template)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"
