"""The interface every semantic-equivalence backend implements, and the work they share.

A backend turns, for each item, its surrogate samples plus the target's answer
into meaning-class ids. The shared part (this module) normalises every string
(core.surrogate.normalize), deduplicates it within the item, looks the item up in the
on-disk cache, hands only the uncached items' unique strings to the backend's
`_classes` (in parts of `items_per_save` items, each cached as soon as it is
done, so an interrupted run resumes where it stopped), stores what comes back,
and maps the classes back onto the original strings. Classes are numbered in order of first appearance, samples
first, the target's answer last, so the target never founds a class before a
sample does.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core import config
from core.errors import InputError
from core.surrogate.normalize import normalize
from core.surrogate.semantic.cache import ResultCache, content_key

Progress = Callable[[int, int], None]
Stage = Callable[[str, int, int], None]
"""``stage(what, done, total)``: a named step of a backend's work, reported as it goes:
LOADING_MODEL (0 of 0) and EMBEDDING (texts embedded of the texts to embed)."""
LOADING_MODEL = "loading the model"
EMBEDDING = "embedding"
DEVICES = ("auto", "cpu", "cuda")
CACHE_VERSION = 1  # bump when a backend's results change for the same inputs


@dataclass(frozen=True)
class ItemTexts:
    """One item's texts: the question, the surrogate samples, the target's answer."""

    question: str
    samples: Sequence[str]
    target: str


@dataclass(frozen=True)
class UniqueTexts:
    """One item's distinct normalised strings, in order of first appearance."""

    question: str
    strings: list[str]


def resolve_device(device: str) -> str:
    """Where a model runs: 'auto' -> 'cuda' when a CUDA device is present, else 'cpu'; any other torch device
    string ('cpu', 'cuda', 'cuda:1', 'mps') as it is, checked. Every model (embedding, NLI, sampling:
    core.surrogate.sample.load_model) is placed through here, so here torch also takes the CPU threads
    $ACTIVEGRADE_TORCH_THREADS gives (core.config), before the model loads. DEVICES are the usual choices."""
    import torch

    threads = config.config().torch_threads
    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise InputError(f"unknown device '{device}'", fix="use auto, cpu, cuda or cuda:N") from error
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"device '{device}' requested but no CUDA device is available", fix="use --device auto or cpu")
    return device


MODEL_MARKERS = ("config.json", "modules.json", "config_sentence_transformers.json")
"""Files at the top of a Hugging Face / sentence-transformers model folder (a GGUF file is one too)."""
MAX_MODEL_FILES = 10_000
"""More files than this under a model folder: it is not one (a home folder, /), and walking it would take long."""


def model_fingerprint(model: str) -> str:
    """What identifies a model in cache keys: its name, or for a local folder its
    absolute path with the name, size and modification time of every file in it.

    A folder that is not a model (no MODEL_MARKERS or .gguf file at its top, or more than
    MAX_MODEL_FILES files) is an InputError at once, before anything walks it.
    """
    path = Path(model)
    if not path.exists():
        return model
    if path.is_dir():
        top = {p.name for p in path.iterdir()}
        if not any(m in top for m in MODEL_MARKERS) and not any(n.endswith(".gguf") for n in top):
            raise InputError(
                f"the folder {model} is not a model: it has none of {', '.join(MODEL_MARKERS)} or a .gguf file",
                fix="give the folder a model was saved into (save_pretrained), a .gguf file, or a model name",
            )
    files = sorted(_model_files(path)) if path.is_dir() else [path]
    stats = [
        (str(p.relative_to(path) if path.is_dir() else p.name), p.stat().st_size, p.stat().st_mtime_ns) for p in files
    ]
    return content_key(str(path.resolve()), stats)


def _model_files(folder: Path) -> list[Path]:
    """Every file under ``folder``; InputError past MAX_MODEL_FILES."""
    files: list[Path] = []
    for root, _dirs, names in os.walk(folder):
        files.extend(p for p in (Path(root) / name for name in names) if p.is_file())
        if len(files) > MAX_MODEL_FILES:
            raise InputError(
                f"the folder {folder} holds more than {MAX_MODEL_FILES:,} files, so it is not a model folder",
                fix="give the folder a model was saved into",
            )
    return files


def short_error(error: Exception, limit: int = 200) -> str:
    """An exception's message on one line, cut to `limit` characters (library errors can run long)."""
    text = " ".join(str(error).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


NORMAL_FORM_CHARS = 20_000_000
"""Characters of texts (and their normalised forms) whose normalised form a backend keeps across its calls,
cleared past this (20-80 MB). core.surrogate.normalize's own cache holds 2^16 texts, fewer than a large pool's
distinct answers (10^5 in benchmarks/scale.md's pools): past its size an LRU cache under random access misses on
about one text of three, and each miss normalises the text again for another item that holds it (2x10^5 items x
10 samples: 250,244 normalisations of under 10^5 texts). Kept by the backend, each text is normalised once."""


def dedupe(texts: Sequence[str], normal_forms: dict[str, str] | None = None) -> tuple[list[str], np.ndarray]:
    """Distinct normalised strings in order of first appearance, and each text's index among them
    (``normal_forms``: text -> normalised text, looked up first and filled in)."""
    if normal_forms is None:
        normalised = [normalize(text) for text in texts]
    else:
        normalised = [
            normal_forms[text] if text in normal_forms else normal_forms.setdefault(text, normalize(text))
            for text in texts
        ]
    position: dict[str, int] = {}
    inverse = np.array([position.setdefault(s, len(position)) for s in normalised], dtype=int)
    return list(position), inverse


class Backend(ABC):
    """Clusters items' strings by meaning. Subclasses implement `_classes`."""

    name: str = ""
    uses_question = False  # whether the question is part of the comparison (and so of the cache key)
    items_per_save: int | None = None  # cache results after every so many items (None: once, at the end)

    def __init__(self, *, cache_dir: str | Path | None = None, use_cache: bool = True) -> None:
        self._cache_dir = cache_dir
        self._use_cache = use_cache
        self.model_calls = 0  # texts (embedding) or text pairs (NLI) sent to the model so far
        self._normal_forms: dict[str, str] = {}  # see NORMAL_FORM_CHARS
        self.on_stage: Stage | None = None  # told of each step of the work (core.services.project shows them)

    def _stage(self, what: str, done: int = 0, total: int = 0) -> None:
        if self.on_stage is not None:
            self.on_stage(what, done, total)

    def identity(self) -> tuple:
        """Everything besides the strings that determines the result: part of every cache key."""
        return (CACHE_VERSION, self.name)

    @abstractmethod
    def _classes(self, items: list[UniqueTexts], progress: Progress | None) -> list[np.ndarray]:
        """For each item, the class id (0, 1, ... by first appearance) of each of its strings."""

    def cluster(self, groups: Sequence[ItemTexts], progress: Progress | None = None) -> list[np.ndarray]:
        """For each item, the class ids of its samples followed by that of the target's answer.

        `progress(done, total)` counts the distinct uncached items, `done` moving
        in proportion to the strings placed in their classes; the steps before
        (loading a model, embedding) go to `on_stage`.
        """
        unique, inverses, keys = [], [], []
        identity = self.identity()
        if sum(len(text) + len(form) for text, form in self._normal_forms.items()) > NORMAL_FORM_CHARS:
            self._normal_forms.clear()
        for group in groups:
            strings, inverse = dedupe([*group.samples, group.target], self._normal_forms)
            question = group.question if self.uses_question else ""
            unique.append(UniqueTexts(question, strings))
            inverses.append(inverse)
            keys.append(content_key(identity, question, strings))
        cache = ResultCache(self._cache_dir) if self._use_cache else None
        try:
            found = cache.get_many(keys) if cache else {}
            missing: dict[str, int] = {}  # each distinct uncached key once, at its first item
            for i, key in enumerate(keys):
                if key not in found:
                    missing.setdefault(key, i)
            todo = list(missing.values())
            step = self.items_per_save or max(len(todo), 1)
            for start in range(0, len(todo), step):
                part = todo[start : start + step]
                computed = self._classes([unique[i] for i in part], _scaled(progress, start, len(part), len(todo)))
                fresh = {keys[i]: classes for i, classes in zip(part, computed)}
                if cache:
                    cache.put_many(fresh)
                found.update(fresh)
        finally:
            if cache:
                cache.close()
        if progress and not todo:
            progress(len(groups), len(groups))
        return [found[key][inverse] for key, inverse in zip(keys, inverses)]


def _scaled(progress: Progress | None, start: int, size: int, total: int) -> Progress | None:
    """A backend's progress on items start..start+size, in its own units, as items out of `total`."""
    if progress is None:
        return None
    return lambda done, of: progress(start + (size * done) // max(of, 1), total)


@dataclass(frozen=True)
class Query:
    """Does string `string` of item `item` mean the same as one of `representatives` (string indices)?"""

    item: int
    string: int
    representatives: list[int]


Decide = Callable[[list[Query]], list[int | None]]
ITEMS_PER_STEP = 512  # items whose next string is placed in one call of `decide` (one progress step)


def cluster_by_representatives(
    sizes: Sequence[int], decide: Decide, progress: Progress | None = None
) -> list[np.ndarray]:
    """Greedy clustering of every item's strings, batched across items.

    Each string is compared only with one representative (the first member) of
    every class that exists when its turn comes, and joins the class whose
    representative `decide` returns, or founds a new class when it returns None
    (Kuhn et al. 2023, Algorithm 1). Work proceeds in rounds: round j places
    string j of every item that has one, so each call of `decide` carries
    queries from up to ITEMS_PER_STEP items and the model sees large batches.
    The first string of an item needs no comparison. `progress(done, total)`
    counts strings placed.
    """
    classes = [np.empty(n, dtype=int) for n in sizes]
    representatives: list[list[int]] = [[] for _ in sizes]
    total, done = int(sum(sizes)), 0
    for j in range(max(sizes, default=0)):
        active = [i for i, n in enumerate(sizes) if n > j]
        for start in range(0, len(active), ITEMS_PER_STEP):
            step = active[start : start + ITEMS_PER_STEP]
            queries = [Query(i, j, list(representatives[i])) for i in step if representatives[i]]
            chosen = dict(zip((q.item for q in queries), decide(queries))) if queries else {}
            for i in step:
                rep = chosen.get(i)
                if rep is None:
                    classes[i][j] = len(representatives[i])
                    representatives[i].append(j)
                else:
                    classes[i][j] = classes[i][rep]
            done += len(step)
            if progress:
                progress(done, total)
    return classes
