"""``python -m trimcp.reference``: run the reference server on stdio."""

from .server import main

main()
