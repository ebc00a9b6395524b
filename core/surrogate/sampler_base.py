"""What both samplers share (core.surrogate.sample: a local model; core.surrogate.sample_api: a server): the prompt's system
instruction and worked examples, the answer, and the surrogate samples file they write.

One JSON line per answer, `{id, sample, logprob, n_tokens, surrogate}` (the
surrogate long format, docs/architecture.md); `logprob` and `n_tokens` only
when the sampler knows them. Each finished item's K lines are appended and
flushed at once, so a rerun keeps the items already complete
(`completed_items`) and samples only the others.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import pandas as pd

from core.errors import InputError

Progress = Callable[[int, int], None]
"""progress(items finished, items in the pool)."""

SYSTEM_PROMPT = (
    "You answer quiz questions. Reply with the answer only: a number, a name "
    "or a few words, on one line, no explanation."
)
# Worked examples given as earlier conversation turns, so that even a small
# instruct model answers in a few words.
FEW_SHOT: tuple[tuple[str, str], ...] = (
    ("What colour is the sky on a clear day?", "Blue"),
    ("What is 3 plus 4?", "7"),
)


@dataclass(frozen=True)
class Answer:
    """One generated answer: its text, log-likelihood and token count (None when unknown)."""

    text: str
    logprob: float | None
    n_tokens: int | None


def write_answers(handle: TextIO, item: str, answers: Sequence[Answer], surrogate: str) -> None:
    """Append one item's answers as JSON lines and flush them together."""
    lines = []
    for answer in answers:
        row: dict = {"id": item, "sample": answer.text}
        if answer.logprob is not None:
            row["logprob"] = round(answer.logprob, 4)
        if answer.n_tokens is not None:
            row["n_tokens"] = answer.n_tokens
        row["surrogate"] = surrogate
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    handle.write("".join(lines))
    handle.flush()


def completed_items(out: Path, k: int, surrogate: str) -> set[str]:
    """Ids of items with at least K answers of ``surrogate`` in an earlier output file; InputError, the file left
    as it is, for a file this run must not append to.

    A run appends each item's K lines in one write, so an interruption can cut only the last item's lines
    short, and leaves its mark, a last line cut: only then are that item's lines dropped, the rest written to a
    temporary file that replaces the file. Any other shortfall means the file was made otherwise, and deleting
    lines would destroy answers that cost hours of sampling or a paid API (a new user's review: a larger --k, or
    a surrogate's file given as the pool, left the file empty; a second look: so did a short last item of whole
    lines): a file made with a smaller --k, another surrogate's answers, or lines that are no samples are
    refused, naming the fix. Lines of items outside this run's pool are kept.
    """
    if not out.exists():
        return set()
    fix = "give another --out (the file is left as it is)"
    lines = out.read_text(encoding="utf-8").splitlines()
    rows = []
    for number, line in enumerate(lines, start=1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            if number < len(lines):  # only the last line may be cut short by an interruption
                raise InputError(
                    f"existing output is not valid JSON ({error.msg})", file=str(out), row=number, fix=fix
                ) from error
    if any(not isinstance(row, dict) or "id" not in row or "sample" not in row for row in rows):
        raise InputError(
            "existing output is not a samples file: it has lines without 'id' or 'sample'", file=str(out), fix=fix
        )
    others = sorted({str(row.get("surrogate")) for row in rows} - {surrogate})
    if others:
        raise InputError(
            f"existing output holds answers of another surrogate ({', '.join(others)}), not {surrogate!r}",
            file=str(out),
            fix=fix,
        )
    counts = Counter(str(row["id"]) for row in rows)
    last = str(rows[-1]["id"]) if rows else None
    cut = len(rows) < len(lines)  # the last line cut: an interrupted run, whose last item is cut short
    short = sorted(item for item, count in counts.items() if count < k and not (cut and item == last))
    if short:
        made = min(counts.values())
        raise InputError(
            f"existing output holds {made} answers for item {short[0]!r} (and {len(short) - 1} more items) where "
            f"--k asks {k}",
            file=str(out),
            fix=f"give --k {made}, the k it was made with, or another --out (the file is left as it is)",
        )
    if cut:
        kept = [row for row in rows if str(row["id"]) != last] if counts[last] < k else rows
        spare = out.with_name(out.name + ".partial")
        spare.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in kept), encoding="utf-8")
        os.replace(spare, out)
        counts = Counter(str(row["id"]) for row in kept)
    return {item for item, count in counts.items() if count >= k}


def check_settings(*, k: int, temperature: float, max_new_tokens: int, batch_size: int) -> None:
    """Raise InputError for settings that cannot work, before any model is loaded."""
    for name, value in (("k", k), ("max_new_tokens", max_new_tokens), ("batch_size", batch_size)):
        if value < 1:
            raise InputError(f"{name} is {value}", fix=f"give a {name} of at least 1")
    if temperature < 0:
        raise InputError(f"temperature {temperature} is negative", fix="use 0 for greedy decoding or a positive value")
    if temperature == 0 and k != 1:
        raise InputError(
            "greedy decoding (temperature 0) gives K identical answers", fix="use --k 1 or a positive temperature"
        )


@contextmanager
def samples_file(
    pool: pd.DataFrame, out: str | os.PathLike, k: int, surrogate: str, progress: Progress | None
) -> Iterator[tuple[list[tuple[str, str]], Callable[[str, Sequence[Answer]], None]]]:
    """A sampling run's output: ``(todo, write)``, the (id, prompt) of the pool's items not yet complete in
    `out` (`completed_items`) and a function that appends one item's answers (`write_answers`) and reports
    progress. `pool` needs `id` and `prompt` columns; the folder of `out` is made, the file itself only once the
    first item's answers are written."""
    for column in ("id", "prompt"):
        if column not in pool.columns:
            raise InputError(
                f"the pool has no '{column}' column", column=column, fix="give a pool with 'id' and 'prompt' columns"
            )
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    done = completed_items(path, k, surrogate)
    todo = [
        (item, prompt) for item, prompt in zip(pool["id"].astype(str), pool["prompt"].astype(str)) if item not in done
    ]
    total = len(pool)
    finished = total - len(todo)
    if progress:
        progress(finished, total)
    with ExitStack() as stack:
        handle = None  # opened at the first answers: a run that fails before them leaves no empty file

        def write(item: str, answers: Sequence[Answer]) -> None:
            nonlocal finished, handle
            if handle is None:
                handle = stack.enter_context(path.open("a", encoding="utf-8"))
            write_answers(handle, item, answers, surrogate)
            finished += 1
            if progress:
                progress(finished, total)

        yield todo, write
