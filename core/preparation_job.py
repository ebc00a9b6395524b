"""One project's preparation in a process of its own: ``python -m core.preparation_job PROJECT_ID``.

core.project.start_preparation starts it (the database URL in $ACTIVEGRADE_DB_URL) after claiming
the project; everything it does is in core.project.run_preparation.
"""

from __future__ import annotations

import sys

from core.project import run_preparation
from core.store import Store


def main(argv: list[str]) -> None:
    run_preparation(Store.open(), int(argv[0]))


if __name__ == "__main__":
    main(sys.argv[1:])
