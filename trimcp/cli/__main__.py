"""``python -m trimcp.cli``: the ``trimcp`` command."""

import sys

from .app import main

sys.exit(main())
