"""lm-evaluation-harness `--log_samples` files (`samples_<task>_<date>.jsonl`) as a pool or as samples.

One JSON object per line and per (document, filter), as lm-eval 0.4 writes them:
`doc_id`, `doc` (the task's document), `target`, `arguments` (the request:
`{"gen_args_0": {"arg_0": prompt, "arg_1": generation kwargs}}`, the prompt a
one-element list of a JSON string of chat messages for chat models, or in
older versions a list of `[prompt, kwargs]`), `resps` (per request, the list of the
model's raw answers: several when the task `repeats`), `filtered_resps` (the
answers after the task's filter, e.g. the extracted number), `filter`,
`metrics` (names of the metric fields) and one field per metric.

As the pool (the target model's file), one item per document:
- id = doc_id; prompt = the request's prompt (a chat request's JSON messages
  are written out as "role: content" blocks); reference = target;
- response = the first raw answer, resps[0][0]; filtered_response = its
  filtered answer, filtered_resps[0] (only when the filter changed an answer);
- every numeric metric becomes a column of its name (exact_match, ...): a
  proxy (`--proxy exact_match`) or, with `--columns label=exact_match`, the
  label;
- surrogate samples, way 1: the target file's own repeats after the first
  answer, resps[0][1:] (a samples table beside the pool, when there are any;
  surrogate = "<file name> (repeats)");
- when a document has a line per filter, the first filter in the file is used.

As the samples file (way 2: a cheaper model's run of the same task, usually
with `repeats`): every raw answer resps[0][k] of every document is a sample of
item doc_id, surrogate = the file's name. A target file that has repeats and a
samples file cannot both give samples (core.inputs.io refuses samples twice).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from core.errors import InputError
from core.inputs.tables import Source, Table, read_table

REQUIRED = ("doc_id", "resps")
TEXT = pd.StringDtype("pyarrow", na_value=np.nan)
"""pandas' default text dtype (`str`), which the readers' other columns get too."""
FIX = "give the samples_<task>_*.jsonl file that lm-eval writes with --log_samples"


def looks_like(frame: pd.DataFrame) -> bool:
    """True for a table read from an lm-eval samples file (its records have doc_id and resps)."""
    return all(column in frame.columns for column in REQUIRED)


def read_pool(source: Source | Table) -> tuple[Table, Table | None]:
    """The target model's samples file (or its table as core.inputs.tables read it) as a pool table, and the samples
    table of its own repeats when it has any (see the module docstring)."""
    table = _records(source)
    frame, rows = table.frame, table.rows
    answers = _all_answers(table)
    arguments = frame["arguments"].tolist() if "arguments" in frame.columns else [None] * len(frame)
    docs = frame["doc"].tolist() if "doc" in frame.columns else [None] * len(frame)
    ids = _ids(frame["doc_id"])
    prompts = _chat_texts([_prompt(table, i, a, d) for i, (a, d) in enumerate(zip(arguments, docs))])
    responses = [a[0] for a in answers]
    pool = pd.DataFrame({"id": _texts(ids), "prompt": _texts(prompts), "response": _texts(responses)})
    if "target" in frame.columns:
        pool["reference"] = _texts([_text(t) for t in frame["target"].tolist()])
    if "filtered_resps" in frame.columns:
        filtered = [_first_text(f) for f in frame["filtered_resps"].tolist()]
        if filtered != responses:
            pool["filtered_response"] = filtered
    for metric in _metric_names(frame):
        values = pd.to_numeric(frame[metric].map(_number), errors="coerce")
        if values.notna().any():
            pool[metric] = values.to_numpy(dtype=float)
    pool_table = Table(table.name, pool, lambda: rows)
    if not any(len(a) > 1 for a in answers):
        return pool_table, None
    return pool_table, _long(table, ids, [a[1:] for a in answers], f"{Path(table.name).stem} (repeats)")


def read_samples(source: Source | Table) -> Table:
    """A surrogate model's samples file (or its table) as a long samples table: every raw answer of every
    document."""
    table = _records(source)
    return _long(table, _ids(table.frame["doc_id"]), _all_answers(table), Path(table.name).stem)


def _long(table: Table, ids: np.ndarray, answers: list[list[str]], surrogate: str) -> Table:
    """One row per answer: id (the record's doc_id), sample, surrogate; errors point at the record's line."""
    counts = np.fromiter(map(len, answers), dtype=np.int64, count=len(answers))
    texts = [text for texts in answers for text in texts]
    samples = pd.DataFrame({"id": _texts(np.repeat(ids, counts)), "sample": _texts(texts), "surrogate": surrogate})
    return Table(table.name, samples, lambda: np.repeat(table.rows, counts))


def _texts(values: list[str] | np.ndarray) -> pd.Series:
    """Strings as pandas' Arrow-backed text column, converted by pyarrow in one call (pandas' own conversion
    first checks every element in Python: twice as slow on 50,000 answers, benchmarks/import_logs.md)."""
    return pd.Series(pa.array(values, type=pa.large_string()), dtype=TEXT)


def _records(source: Source | Table) -> Table:
    """The file's lines, one record per document (the first filter's line when there are several)."""
    table = source if isinstance(source, Table) else read_table(source)
    frame = table.frame
    for field in REQUIRED:
        if field not in frame.columns:
            raise InputError(f"the records have no '{field}' field", file=table.name, row=int(table.rows[0]), fix=FIX)
        missing = frame[field].isna().to_numpy()
        table.fail(missing, None, f"the record has no '{field}' field", FIX)
    keep = np.ones(len(frame), dtype=bool)
    if "filter" in frame.columns and frame["filter"].nunique() > 1:
        keep = (frame["filter"] == frame["filter"].iat[0]).to_numpy()
    if keep.all():
        return table
    rows = table.rows[keep]
    return Table(table.name, frame.loc[keep].reset_index(drop=True), lambda: rows)


def _all_answers(table: Table) -> list[list[str]]:
    """The raw answers of every record's first request, resps[0]; `_answers` record by record only to name
    the first record without generated text."""
    resps = table.frame["resps"].tolist()
    firsts = [r[0] if type(r) is list and r else None for r in resps]
    answers = [f if type(f) is list else [f] for f in firsts]
    if all(answers) and set(map(type, (text for texts in answers for text in texts))) == {str}:
        return answers
    return [_answers(table, i, r) for i, r in enumerate(resps)]


def _answers(table: Table, i: int, resps: object) -> list[str]:
    """The raw answers of record i's first request, resps[0] (all repeats)."""
    first = resps[0] if isinstance(resps, list) and resps else None
    answers = first if isinstance(first, list) else [first]
    if not answers or not all(isinstance(a, str) for a in answers):
        raise InputError(
            "the record's 'resps' holds no generated text (a loglikelihood task has no answer to grade)",
            file=table.name,
            row=int(table.rows[i]),
            fix="use a generate_until task's samples file",
        )
    return answers


def _prompt(table: Table, i: int, arguments: object, doc: object) -> str:
    """Record i's prompt: arguments.gen_args_0.arg_0 (or arguments[0][0]); a chat request's messages
    written out; else the document as JSON."""
    if isinstance(arguments, dict) and arguments:
        first = next(iter(arguments.values()))
        prompt = first.get("arg_0") if isinstance(first, dict) else None
    elif isinstance(arguments, list) and arguments and isinstance(arguments[0], list) and arguments[0]:
        prompt = arguments[0][0]
    else:
        prompt = None
    if isinstance(prompt, list) and len(prompt) == 1:  # chat requests: [JSON messages]
        prompt = prompt[0]
    if isinstance(prompt, str):
        return prompt
    if doc is None or (isinstance(doc, float) and math.isnan(doc)):
        raise InputError(
            "the record has neither 'arguments' with a prompt nor a 'doc'",
            file=table.name,
            row=int(table.rows[i]),
            fix=FIX,
        )
    return doc if isinstance(doc, str) else json.dumps(doc, ensure_ascii=False)


def _chat_texts(prompts: list[str]) -> list[str]:
    """Chat requests' JSON lists of {"role", "content"} messages as text (`_chat_text`), other prompts as they are.
    The JSON of all of them is parsed in one call (one per prompt only when one of them is not JSON)."""
    chat = [i for i, p in enumerate(prompts) if p.startswith("[")]
    try:
        parsed = json.loads("[" + ",".join(prompts[i] for i in chat) + "]")
    except ValueError:
        parsed = [_json_or_none(prompts[i]) for i in chat]
    out = list(prompts)
    for i, messages in zip(chat, parsed):
        out[i] = _chat_text(messages, prompts[i])
    return out


def _json_or_none(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _chat_text(messages: object, prompt: str) -> str:
    """Messages as "role: content" blocks (one message: its content); `prompt` itself when they are not messages."""
    if not (isinstance(messages, list) and messages and all(isinstance(m, dict) and "content" in m for m in messages)):
        return prompt
    if len(messages) == 1:
        return str(messages[0]["content"])
    return "\n\n".join(f"{m.get('role', 'user')}: {m['content']}" for m in messages)


def _metric_names(frame: pd.DataFrame) -> list[str]:
    """The metric fields named in the records' 'metrics' lists, in first-seen order."""
    if "metrics" not in frame.columns:
        return []
    lists = {tuple(m) for m in frame["metrics"].tolist() if isinstance(m, list)}
    names = dict.fromkeys(name for names in sorted(lists) for name in names)
    reserved = ("id", "prompt", "response", "reference", "samples")
    return [name for name in names if name in frame.columns and name not in reserved]


def _ids(doc_ids: pd.Series) -> np.ndarray:
    """doc_id as text: whole numbers without a decimal point."""
    if pd.api.types.is_integer_dtype(doc_ids):
        return doc_ids.astype(str).to_numpy(dtype=object)
    return doc_ids.map(lambda v: str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)).to_numpy(
        dtype=object
    )


def _number(value: object) -> object:
    return float(value) if isinstance(value, bool) else value


def _text(value: object) -> str:
    """A target as text: strings as they are, lists joined with ' | ', anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " | ".join(_text(v) for v in value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return json.dumps(value, ensure_ascii=False)


def _first_text(value: object) -> str:
    return _text(value[0]) if isinstance(value, list) and value else _text(value)
