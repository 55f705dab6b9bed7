"""``python -m toolpacks``: the command line."""

import sys

from toolpacks.cli._main import main

sys.exit(main())
