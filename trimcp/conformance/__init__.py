"""``trimcp check``: test an MCP server against the specification, check by check."""

from .catalog import CATALOG as CATALOG
from .model import CheckResult as CheckResult, Level as Level, Report as Report, Status as Status
from .runner import Connector as Connector, run_checks as run_checks

__all__ = ["CATALOG", "CheckResult", "Connector", "Level", "Report", "Status", "run_checks"]
