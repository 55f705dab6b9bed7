"""``python -m toolpacks``: the command line."""

import sys

from toolpacks.cli import main

sys.exit(main())
