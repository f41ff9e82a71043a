"""Building blocks shared by every MCP message: ids, params and result bases, icons, annotations.

Theory of operation
-------------------
Spec revisions 2024-11-05 through 2025-11-25 ("Basic" and "Schema reference").
Every request's ``params`` may carry ``_meta`` (with ``progressToken``), every
notification's ``params`` and every result may carry ``_meta``; paginated
requests carry ``cursor`` and paginated results ``nextCursor``.  These appear
here as base classes (``RequestParams``, ``NotificationParams``, ``Result``,
``PaginatedRequestParams``, ``PaginatedResult``) that the per-feature modules
extend.

Every class in this package follows the same pattern: ``@frozen(kw_only=True)``,
snake_case attributes whose wire names are their camelCase, optional members
defaulting to ``None`` (meaning "absent on the wire"), ``meta`` for ``_meta``
and ``extra`` for members we do not know, so that nothing a peer sends is lost.

The 2026-07-28 stateless era adds two things every module relies on:

* ``Result.result_type`` is the ``resultType`` member (``ResultType``, the one
  list of its values, defined in ``_sansio/result_type.py``): ``"complete"`` for a final result, ``"input_required"``
  for an ``InputRequiredResult`` (see ``mrtr``), ``"task"`` for an ext-tasks
  ``CreateTaskResult``.  Handshake-era peers leave it out (``None``).  It is optional in
  the classes, which serve every revision; the per-revision tables in
  ``methods`` require it for 2026-07-28.
* ``CacheableResult`` carries the cache hints ``ttlMs`` (milliseconds the
  result stays fresh) and ``cacheScope`` (``"public"``: shareable across users;
  ``"private"``: only within one authorization context).  ``PaginatedResult``
  derives from it, since every 2026-07-28 list result is cacheable; again the
  hints are required only by the 2026-07-28 tables.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from ..result_type import ResultType as ResultType

# The one definition (a leaf module the revision table reads too); public as trimcp.schema.ResultType.
from ..shared_methods import frozen

__all__ = [
    "Annotations",
    "CacheScope",
    "CacheableResult",
    "Cursor",
    "EmptyResult",
    "Icon",
    "NotificationParams",
    "PaginatedRequestParams",
    "PaginatedResult",
    "ProgressToken",
    "RequestId",
    "RequestParams",
    "Result",
    "ResultType",
    "Role",
]

#: A JSON-RPC request id: a string or an integer, never null in MCP.
RequestId: TypeAlias = int | str
#: A progress token (``_meta.progressToken``): a string or an integer.
ProgressToken: TypeAlias = int | str
#: An opaque pagination cursor.
Cursor: TypeAlias = str
#: The sender or recipient of a message or data (``Annotations.audience``).
Role: TypeAlias = Literal["user", "assistant"]
#: Who may cache a result (2026-07-28): anyone, or only the same authorization context.
CacheScope: TypeAlias = Literal["public", "private"]


@frozen(kw_only=True)
class Icon:
    """An icon a client may show for a server, tool, resource or prompt (2025-11-25)."""

    src: str
    mime_type: str | None = None
    #: ``"48x48"``-style sizes, or ``"any"`` for scalable formats.
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class Annotations:
    """Hints to the client about how to use or display an object.

    2024-11-05 calls it ``Annotated.annotations`` (``audience``, ``priority``);
    2025-06-18 adds ``lastModified`` (ISO 8601).  ``priority`` is in [0, 1].
    """

    audience: list[Role] | None = None
    priority: float | None = None
    last_modified: str | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class RequestParams:
    """The ``params`` of a request with no members of its own (``ping``, ``roots/list``)."""

    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    @property
    def progress_token(self) -> ProgressToken | None:
        """``_meta.progressToken``, when the requester asked for progress notifications."""
        if self.meta is None:
            return None
        token = self.meta.get("progressToken")
        if isinstance(token, (int, str)) and not isinstance(token, bool):
            return token
        return None


@frozen(kw_only=True)
class PaginatedRequestParams(RequestParams):
    """The ``params`` of a ``*/list`` request."""

    cursor: Cursor | None = None


@frozen(kw_only=True)
class NotificationParams:
    """The ``params`` of a notification with no members of its own (``*/list_changed``)."""

    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class Result:
    """The base of every result.

    ``result_type`` is the 2026-07-28 ``resultType`` member (``"complete"``,
    ``"input_required"``; extensions may add more); handshake-era peers leave
    it out, and a client must then read it as ``"complete"``.
    """

    meta: dict[str, Any] | None = None
    result_type: str | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class EmptyResult(Result):
    """A result that only acknowledges (``ping``, ``logging/setLevel``, subscribe …)."""


@frozen(kw_only=True)
class CacheableResult(Result):
    """A result with cache hints (2026-07-28): ``server/discover``, the ``*/list``
    results and ``resources/read``.

    A negative ``ttlMs`` is invalid from a server, but a lenient client reads it
    (and an absent one) as 0: see ``cache_ttl_ms``.
    """

    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None

    @property
    def cache_ttl_ms(self) -> int:
        """How long (ms) the result may be served from a cache: ``ttlMs``, 0 if absent or negative."""
        return max(self.ttl_ms or 0, 0)


@frozen(kw_only=True)
class PaginatedResult(CacheableResult):
    """The base of ``*/list`` results: ``nextCursor`` is absent on the last page."""

    next_cursor: Cursor | None = None
