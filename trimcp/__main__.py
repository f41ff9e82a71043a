"""``python -m trimcp``: the ``trimcp`` command (``trimcp.cli``)."""

import sys

from .cli import main

sys.exit(main())
