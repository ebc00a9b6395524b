"""The pool and its grades as Argilla records, a Hugging Face dataset laid out as Argilla 2's
`Dataset.to_hub` writes it, so `rg.Dataset.from_hub` (after `datasets.Dataset.push_to_hub`) or
`datasets.load_dataset("parquet", ...)` read it as they are.

One record per pool item, in pool order: `id` (the pool's id), `status` (`completed` once graded, else
`pending`), the fields `prompt`, `response` (and `reference` where the pool has one and the project shows it to
its graders: core.exports.label_studio.shown_fields), the question `grade`'s
responses as Argilla's columns `grade.responses` (the labels), `grade.responses.users` (the graders' names:
Argilla writes user ids there) and `grade.responses.status` (`submitted`), and the metadata `stratum` and
`position`. Written as one Parquet file with `datasets` (Dataset.from_dict with explicit features, then
to_parquet).
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pandas as pd

QUESTION = "grade"


def records(items: pd.DataFrame, grades: pd.DataFrame, fields: Sequence[str]) -> dict[str, list]:
    """The records' columns (see the module docstring) of ``items`` (Store.load_items) with the texts ``fields``,
    and their active ``grades`` (Store.grades, in grading order)."""
    by_item = grades.groupby("position", sort=False)
    labels = by_item["label"].agg(list)
    users = by_item["grader"].agg(list)
    positions = range(len(items))
    columns: dict[str, list] = {
        "id": items["id"].astype(str).tolist(),
        "status": ["completed" if p in labels.index else "pending" for p in positions],
    }
    for field in fields:
        columns[field] = [None if pd.isna(v) else str(v) for v in items[field]]
    columns[f"{QUESTION}.responses"] = [labels.get(p, []) for p in positions]
    columns[f"{QUESTION}.responses.users"] = [users.get(p, []) for p in positions]
    columns[f"{QUESTION}.responses.status"] = [["submitted"] * len(labels.get(p, [])) for p in positions]
    columns["stratum"] = items["stratum"].astype(int).tolist()
    columns["position"] = list(positions)
    return columns


def records_parquet(items: pd.DataFrame, grades: pd.DataFrame, fields: Sequence[str]) -> bytes:
    """The records as a Parquet file written by `datasets` (see the module docstring)."""
    import datasets

    datasets.disable_progress_bars()  # a file's bytes, for a command or a request: no bar on anyone's stderr (-q)
    columns = records(items, grades, fields)
    features = datasets.Features({name: _feature(datasets, name) for name in columns})
    buffer = io.BytesIO()
    datasets.Dataset.from_dict(columns, features=features).to_parquet(buffer)
    return buffer.getvalue()


def _feature(datasets, column: str):
    """A record column's type: the responses are lists of strings, stratum and position integers, fields strings."""
    if column.startswith(f"{QUESTION}.responses"):
        return datasets.Sequence(datasets.Value("string"))
    return datasets.Value("int64" if column in ("stratum", "position") else "string")
