"""The ``trimcp`` command line."""

from .app import main as main

__all__ = ["main"]
