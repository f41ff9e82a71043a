"""``trimcp check``: test an MCP server against the specification, check by check."""

from .catalog import CATALOG as CATALOG
from .model import CheckResult as CheckResult
from .model import Level as Level
from .model import Report as Report
from .model import Status as Status
from .runner import Connector as Connector
from .runner import run_checks as run_checks

__all__ = ["CATALOG", "CheckResult", "Connector", "Level", "Report", "Status", "run_checks"]
