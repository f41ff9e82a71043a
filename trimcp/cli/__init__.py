"""The ``trimcp`` command line."""

from .commands import main as main

__all__ = ["main"]
