"""Replacing a project's stored input files after creation.

`Store.create_project` stores the uploads; the job that samples surrogate
answers (core.jobs.sampling_job) later adds the samples it made, and a partial file
while it works.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import delete

from core.store.models import InputFile
from core.store.store import Store


def set_input_files(store: Store, project_id: int, files: Mapping[str, tuple[str, bytes] | None]) -> None:
    """In one transaction, store each role's `(file name, bytes)` in place of any earlier file of
    that role; `None` deletes the role's file."""
    with store.session() as s, s.begin():
        for role, file in files.items():
            s.execute(delete(InputFile).where(InputFile.project_id == project_id, InputFile.role == role))
            if file is not None:
                name, content = file
                s.add(InputFile(project_id=project_id, role=role, name=name, content=content))
