"""The human grades back into the Inspect AI log the pool came from, as one more score per sample.

Each graded item's sample (epoch 1: the response the experts graded) gets
`scores[scorer] = {"value": grade, "answer": null, "explanation": comment,
"metadata": {"label": ..., "grader": ...}}`, the shape of Inspect's Score,
so `inspect view` and `inspect_ai.log.read_eval_log` show it beside the
automatic scorers. An item graded by several graders gets their mean grade,
its comments joined. Everything else in the log is copied unchanged; a .eval
archive is rewritten with standard deflate compression (Inspect reads it).
"""

from __future__ import annotations

import json
import zipfile
from io import BytesIO

import pandas as pd

from core.errors import InputError
from core.inputs.readers.inspect_log import FIX, member_bytes, sample_file

DEFAULT_SCORER = "human"


def human_scores(table: pd.DataFrame) -> dict[str, dict]:
    """Per item id, the Score of its grades (core.exports.report.grades_table's columns item, grade, label, grader,
    comment): the mean grade, the labels and graders in grading order, the non-empty comments."""
    scores = {}
    for item, rows in table.groupby("item", sort=False):
        comments = [c for c in rows["comment"].fillna("").astype(str) if c]
        scores[str(item)] = {
            "value": float(rows["grade"].mean()),
            "answer": None,
            "explanation": "\n".join(comments) or None,
            "metadata": {"label": rows["label"].astype(str).tolist(), "grader": rows["grader"].astype(str).tolist()},
        }
    return scores


def with_human_scores(log: tuple[str, bytes], table: pd.DataFrame, scorer: str = DEFAULT_SCORER) -> bytes:
    """The log (an upload pair, .eval or .json) with the human grades of `table` added as the score `scorer`."""
    name, data = log
    scores = human_scores(table)
    if data[:2] != b"PK":
        try:
            content = json.loads(data)
        except ValueError as error:
            raise InputError(f"the log is neither a .eval archive nor JSON ({error})", file=name, fix=FIX) from None
        for sample in content.get("samples") or []:
            _add(sample, scores, scorer)
        return json.dumps(content, ensure_ascii=False).encode()
    out = BytesIO()
    with zipfile.ZipFile(BytesIO(data)) as old, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
        for member in old.namelist():
            content = member_bytes(name, old, member)
            if sample_file(member):
                sample = json.loads(content)
                if _add(sample, scores, scorer):
                    content = json.dumps(sample, ensure_ascii=False).encode()
            new.writestr(member, content)
    return out.getvalue()


def _add(sample: dict, scores: dict[str, dict], scorer: str) -> bool:
    """Add the item's score to an epoch-1 sample; True when it was graded."""
    item = str(sample.get("id"))
    if int(sample.get("epoch", 1)) != 1 or item not in scores:
        return False
    sample["scores"] = {**(sample.get("scores") or {}), scorer: scores[item]}
    return True
