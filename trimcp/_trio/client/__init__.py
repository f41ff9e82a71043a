"""The Trio MCP client: ``open_client`` (``connect.py``), ``ClientSession`` and their helpers."""

from .client_session import ClientSession as ClientSession
from .connect import open_client as open_client
from .task_follower import ToolTask as ToolTask

__all__ = ["ClientSession", "ToolTask", "open_client"]
