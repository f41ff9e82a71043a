"""The values of ``resultType`` (2026-07-28), defined once.

A leaf module (no imports of ours): the revision table (``revisions.py``), the
stateless-era result rules (``connection/stateless.py``) and the schema
(``schema/base.py``, public as ``trimcp.schema.ResultType``) all read it.
"""

from __future__ import annotations

import enum

__all__ = ["ResultType"]


class ResultType(enum.StrEnum):
    """The values of ``resultType`` (2026-07-28).  A ``StrEnum``: a member is the string
    itself on the wire and compares equal to it (``result["resultType"] == ResultType.TASK``)."""

    #: A final result.
    COMPLETE = "complete"
    #: An ``InputRequiredResult``: the server needs elicitation, sampling or roots first.
    INPUT_REQUIRED = "input_required"
    #: An ext-tasks ``CreateTaskResult``: the work goes on as a task.
    TASK = "task"
