"""``trimcp check``: test an MCP server against the specification, check by check.

``run_checks(connect, ...)`` runs the catalogue (``CATALOG``) against a server
reached by a ``Connector``; ``connector_for(target)`` makes one for a URL or a
command line (``is_url`` tells which).  ``print_report``, ``write_json``,
``write_junit``, ``write_markdown`` and ``write_html`` report the resulting ``Report`` (the formats
of ``trimcp check``; ``print_table`` / ``print_json`` are their deprecated old names); ``Selection`` chooses checks,
``judge`` decides a run (``--fail-on``, ``--expected-failures``);
``write_requirements_coverage`` prints the requirements catalogue's coverage.
``write_transcript`` / ``read_transcripts`` / ``replay`` keep a run's
conversation and judge it again offline; ``surface_from_*`` and
``diff_surfaces`` compare what two servers offer.
``probe_unauthenticated(url, timeout)`` sends one bare ``initialize`` POST to see
whether an HTTP server wants authorization first (``ProbeError``: it could not be reached).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._deprecate import deprecated_aliases as _deprecated_aliases
from .catalog import CATALOG as CATALOG
from .checks.auth import probe_unauthenticated as probe_unauthenticated
from .checks.auth_binding import AuthTokens as AuthTokens
from .connectors import connector_for as connector_for
from .connectors import is_url as is_url
from .expected import judge as judge
from .expected import read_expected as read_expected
from .model import CheckResult as CheckResult
from .model import Level as Level
from .model import Report as Report
from .model import Status as Status
from .rawhttp import ProbeError as ProbeError
from .report_console import Progress as Progress
from .report_console import print_report as print_report
from .report_console import summary_line as summary_line
from .report_console import use_color as use_color
from .report_evidence import jsonable as jsonable
from .report_html import write_html as write_html
from .report_json import write_json as write_json
from .report_junit import write_junit as write_junit
from .report_markdown import write_markdown as write_markdown
from .report_requirements import write_requirements_coverage as write_requirements_coverage
from .report_rows import shown_status as shown_status
from .runner import Connector as Connector
from .runner import run_checks as run_checks
from .selection import Selection as Selection
from .surface import Change as Change
from .surface import diff_surfaces as diff_surfaces
from .surface import surface_from_client as surface_from_client
from .surface import surface_from_transcript as surface_from_transcript
from .transcript import Transcript as Transcript
from .transcript import TranscriptError as TranscriptError
from .transcript import read_transcripts as read_transcripts
from .transcript import replay as replay
from .transcript import write_transcript as write_transcript

__all__ = [
    "CATALOG",
    "Change",
    "CheckResult",
    "Connector",
    "Level",
    "ProbeError",
    "Progress",
    "Report",
    "Selection",
    "Status",
    "Transcript",
    "TranscriptError",
    "connector_for",
    "diff_surfaces",
    "is_url",
    "jsonable",
    "judge",
    "print_report",
    "probe_unauthenticated",
    "read_expected",
    "read_transcripts",
    "replay",
    "run_checks",
    "shown_status",
    "summary_line",
    "surface_from_client",
    "surface_from_transcript",
    "use_color",
    "write_html",
    "write_json",
    "write_junit",
    "write_markdown",
    "write_requirements_coverage",
    "write_transcript",
]

if not _TYPE_CHECKING:  # (a type checker is to reject the old names, not type them Any)
    #: Old names: each use warns and names the one to use (``_deprecate.py``).
    _DEPRECATED = _deprecated_aliases(
        __name__,
        {
            "print_table": ("trimcp.conformance.print_report", lambda: print_report),
            "print_json": ("trimcp.conformance.write_json", lambda: write_json),
        },
    )

    def __getattr__(name: str) -> object:
        return _DEPRECATED(name)
