"""``python -m toolpacks``: the command line."""

import sys

from toolpacks._cli import main

sys.exit(main())
