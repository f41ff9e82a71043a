"""The bundled reference server: an application built on trimcp.server."""
