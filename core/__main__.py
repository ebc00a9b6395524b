"""`python -m core <command>`: see core/cli/__init__.py."""

import sys

from core.cli import main

sys.exit(main(prog="python -m core"))
