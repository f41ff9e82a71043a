"""``python -m trimcp.cli``: the ``trimcp`` command."""

import sys

from .commands import main

sys.exit(main())
