"""On-disk caches of the semantic backends, keyed by content: clustering results (by backend, model and
threshold) and sentence embeddings (by model, precision and string).

One SQLite file, `semantic.sqlite`, in the cache directory: the `--cache-dir`
option, else $ACTIVEGRADE_CACHE_DIR, else ~/.cache/activegrade. SQLite keeps
concurrent runs (CLI, app, several workers on one machine) from corrupting each other.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from core import config
from core.errors import InputError

_CHUNK = 500  # keys per SELECT, below SQLite's limit on bound parameters


def default_cache_dir() -> Path:
    """$ACTIVEGRADE_CACHE_DIR if set (core.config), else ~/.cache/activegrade."""
    return config.config().cache_dir or Path.home() / ".cache" / "activegrade"


def content_key(*parts: object) -> str:
    """SHA-256 of the JSON encoding of `parts`: equal content, equal key."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()


class CacheNotWritten(UserWarning):
    """The clustering cache could not be written; the work goes on without it."""


class ResultCache:
    """Maps a content key to an int array (the classes of one item's strings)."""

    TABLE, COLUMN, DTYPE = "results", "classes", np.dtype(np.int32)

    def __init__(self, directory: str | Path | None = None) -> None:
        directory = Path(directory) if directory is not None else default_cache_dir()
        self._path = directory / "semantic.sqlite"
        self._writable = True
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(directory / "semantic.sqlite", timeout=60)
            self._db.execute(
                f"CREATE TABLE IF NOT EXISTS {self.TABLE} (key TEXT PRIMARY KEY, {self.COLUMN} BLOB NOT NULL)"
            )
            self._db.commit()
        except (OSError, sqlite3.Error) as error:
            raise InputError(
                f"cannot use the cache directory ({error})",
                file=str(directory),
                fix=f"pass a writable --cache-dir or set {config.CACHE_DIR}",
            ) from None

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached arrays of those keys that are present."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key, {self.COLUMN} FROM {self.TABLE} WHERE key IN ({marks})", chunk)
            found.update((key, self._value(np.frombuffer(blob, dtype=self.DTYPE))) for key, blob in rows)
        return found

    def _value(self, stored: np.ndarray) -> np.ndarray:
        return stored.astype(int)

    def put_many(self, results: Mapping[str, np.ndarray]) -> None:
        """Store arrays under their keys (replacing any previous value).

        The cache only saves time: when it cannot be written (a read-only file or folder, a full disk)
        this warns once (CacheNotWritten) and the results are simply not cached.
        """
        if not self._writable:
            return
        rows = [(key, np.asarray(value, dtype=self.DTYPE).tobytes()) for key, value in results.items()]
        try:
            with self._db:
                self._db.executemany(f"INSERT OR REPLACE INTO {self.TABLE} (key, {self.COLUMN}) VALUES (?, ?)", rows)
        except sqlite3.Error as error:
            self._writable = False
            warnings.warn(
                f"cannot write the cache {self._path} ({error}); going on without caching the results. "
                f"Fix: make it writable, or pass another --cache-dir or {config.CACHE_DIR}",
                CacheNotWritten,
                stacklevel=2,
            )

    def close(self) -> None:
        self._db.close()


class EmbeddingCache(ResultCache):
    """The float32 embeddings of one model at one precision, by string (content keys of ``identity``, the
    model's, and the normalised string), so a string is embedded once per cache directory: by whichever
    run or worker met it first, not again when the threshold changes or a worker that took over a chunk
    starts with an empty memo."""

    TABLE, COLUMN, DTYPE = "embeddings", "vector", np.dtype(np.float32)

    def __init__(self, directory: str | Path | None, identity: tuple) -> None:
        super().__init__(directory)
        self._identity = identity

    def _value(self, stored: np.ndarray) -> np.ndarray:
        return stored

    def vectors(self, strings: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored embeddings of those ``strings`` that have one."""
        keys = {content_key(self._identity, s): s for s in strings}
        return {keys[key]: vector for key, vector in self.get_many(keys).items()}

    def store(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Store embeddings by their strings (see `put_many`: a cache that cannot be written warns once)."""
        self.put_many({content_key(self._identity, s): vector for s, vector in vectors.items()})
