"""The release number of trimcp, written once.

Everything that states the version reads it from here: the distribution metadata
(``pyproject.toml``: ``[tool.setuptools.dynamic]``), ``trimcp.__version__``, the
client's ``clientInfo``, the HTTP ``User-Agent`` and the reference server's
``serverInfo``.  No imports, so that any layer, the sans-IO core included, may read it.
"""

__version__ = "0.1.0"
