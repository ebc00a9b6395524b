"""The `embedding` backend with its embeddings from a serving engine: any OpenAI-compatible `/v1/embeddings`
endpoint (vLLM, Text Embeddings Inference, Infinity, Ollama, hosted APIs), for teams that already run one.

Everything but the embedding is the local backend's (core.surrogate.semantic.embedding): the same
normalised strings, each distinct string embedded at most once and stored in the same cache
(core.surrogate.semantic.cache.EmbeddingCache), keyed by the server's URL and the model's name instead of
a local model's files, the same threshold and clustering. The server's vectors are made unit length here
(cosine similarity is then their dot product), whatever the server returns.

Requests: `POST {api_base}/embeddings` with `{"model", "input": [strings], "encoding_format": "float"}`
through the `openai` client, `batch_size` strings each (default 64: within every engine's default limit),
at most `concurrency` requests at once (threads); the client retries connection errors, timeouts, 408,
409, 429 and 5xx with exponential back-off (`max_retries`); a request that still fails stops with an
InputError that names the server, the HTTP status or the kind of connection failure (never the server's
reply text, as core.surrogate.sample_api) and says what to change. Redirects are not followed: the key goes
only to `api_base` (on the Projects page, one of the servers the operator allows, core.config). The answer's
rows are put back in input order by their `index`. The API key, when the server needs one, is read from the
environment variable `api_key_env` (never stored).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from core.errors import InputError
from core.surrogate.semantic.base import short_error
from core.surrogate.semantic.embedding import DEFAULT_THRESHOLD, EmbeddingBackend

DEFAULT_BATCH = 64
DEFAULT_CONCURRENCY = 4
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_RETRIES = 5


class ServedEmbeddingBackend(EmbeddingBackend):
    """Embeddings from an OpenAI-compatible server (see the module docstring)."""

    def __init__(
        self,
        *,
        api_base: str,
        model: str | None = None,
        api_key_env: str | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        cache_dir: str | Path | None = None,
        batch_size: int = DEFAULT_BATCH,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_RETRIES,
    ) -> None:
        if not model:
            raise InputError(
                "an embedding server needs the name of the model it serves",
                fix="give --model NAME, as the server lists it at /v1/models",
            )
        self._setup(model, threshold, batch_size, cache_dir)
        self.api_base = api_base.rstrip("/")
        self.api_key_env = api_key_env
        self.device = "cpu"  # nothing runs here; the vectors come as float32
        self.concurrency, self.timeout, self.max_retries = concurrency, timeout, max_retries
        self._client = None

    def fingerprint(self) -> str:
        return f"served {self.api_base} {self.model_name}"

    def precision(self) -> str:
        return "float32"

    def load(self) -> None:
        if self._client is None:
            import openai

            from core.surrogate.sample_api import api_key

            self._client = openai.OpenAI(
                base_url=self.api_base,
                api_key=api_key(self.api_key_env),
                timeout=self.timeout,
                max_retries=self.max_retries,
                http_client=openai.DefaultHttpxClient(follow_redirects=False),
            )

    def encode(self, strings: list[str]) -> np.ndarray:
        self.load()
        batches = [strings[i : i + self.batch_size] for i in range(0, len(strings), self.batch_size)]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(batches))) as pool:
            parts = list(pool.map(self._request, batches))
        vectors = np.concatenate(parts).astype(np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)

    def _request(self, batch: list[str]) -> np.ndarray:
        """One request's embeddings, in the batch's order."""
        import openai

        try:
            reply = self._client.embeddings.create(model=self.model_name, input=batch, encoding_format="float")
        except openai.RateLimitError:
            raise self._error(
                f"the server still limits the request rate after {self.max_retries} retries (HTTP 429)",
                "send fewer requests at once or smaller ones (`prepare --batch-size`, or the worker's), or wait "
                "and try again: the strings embedded so far are kept in the cache",
            ) from None
        except openai.APIStatusError as error:
            raise self._error(
                f"the server answered HTTP {error.status_code}",
                "check the model's name (the server lists them at /v1/models), the server's URL and its key",
            ) from None
        except openai.APIConnectionError as error:
            raise self._error(
                f"no answer from the server after {self.max_retries} retries ({type(error).__name__})",
                "check that the server runs and that its URL is the OpenAI-compatible one (ending in /v1)",
            ) from None
        except (ValueError, openai.APIResponseValidationError) as error:
            raise self._error(
                f"the server's answer is not the JSON of OpenAI embeddings ({short_error(error)})", self._url_fix
            ) from None
        rows = sorted(reply.data, key=lambda row: row.index)
        if len(rows) != len(batch) or any(not row.embedding for row in rows):
            raise self._error(f"the server returned {len(rows)} embeddings for {len(batch)} texts", self._url_fix)
        return np.asarray([row.embedding for row in rows], dtype=np.float32)

    _url_fix = "check that the URL is the server's OpenAI-compatible API (ending in /v1) and that it serves embeddings"

    def _error(self, problem: str, fix: str) -> InputError:
        return InputError(problem, file=f"{self.api_base}/embeddings", fix=fix)
