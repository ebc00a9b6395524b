"""Make the real eval logs under tests/data/eval_logs/ with the real tools against a real local server.

    python scripts/make_eval_logs.py [--tools /work/wt/proxy-venv/bin] [--model-dir /tmp/smollm2-served]

Serves SmolLM2-135M-Instruct with `transformers serve` (core/testing/local_server.py),
then runs, on the small arithmetic task of tests/data/evaltasks/ (8 questions,
arith.jsonl):
- lm-evaluation-harness, model local-chat-completions: task `arith` (one greedy
  answer: the target's file) and `arith_repeats` (3 answers at temperature 1:
  a surrogate's file, and a pool with its own repeats), with --log_samples;
- Inspect AI, provider openai-api (OpenAI-compatible): task
  inspect_arith.py@arith with 1 epoch at temperature 0 (.eval and .json logs)
  and 3 epochs at temperature 1 (.eval).
The logs are copied to fixed names in tests/data/eval_logs/. Beside them,
hf_arith/ is the task's data with the answers of the lm-eval run, written by
`datasets.Dataset.save_to_disk` (a DatasetDict of it in hf_arith_dict/).
lm-eval, inspect-ai and datasets come from --tools, a separate virtual
environment: installing them beside the app would change packages it pins
(docs/dependencies.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from core.testing.local_server import model_folder, served

ROOT = Path(__file__).resolve().parents[1]

TASKS = ROOT / "tests" / "data" / "evaltasks"
OUT = ROOT / "tests" / "data" / "eval_logs"


def lm_eval(tools: Path, url: str, model: str, task: str, work: Path) -> Path:
    """Run lm_eval on one task of TASKS; returns its samples_<task>_*.jsonl."""
    output = work / f"lm_eval_{task}"
    subprocess.run(
        [
            str(tools / "lm_eval"),
            "--model",
            "local-chat-completions",
            "--model_args",
            f"model={model},base_url={url}/chat/completions,num_concurrent=1,max_retries=3,tokenized_requests=False",
            "--tasks",
            task,
            "--include_path",
            str(TASKS),
            "--apply_chat_template",
            "--log_samples",
            "--output_path",
            str(output),
            "--seed",
            "0",
        ],
        cwd=TASKS,  # the task's data_files path is relative
        check=True,
        env={**os.environ, "OPENAI_API_KEY": "none"},
    )
    return next(output.rglob(f"samples_{task}_*.jsonl"))


def inspect_eval(tools: Path, url: str, model: str, work: Path, *options: str) -> Path:
    """Run `inspect eval` on inspect_arith.py; returns the log file it wrote."""
    logs = work / f"inspect_{len(list(work.glob('inspect_*')))}"
    subprocess.run(
        [
            str(tools / "inspect"),
            "eval",
            str(TASKS / "inspect_arith.py@arith"),
            "--model",
            f"openai-api/local/{model}",
            "--log-dir",
            str(logs),
            "--max-connections",
            "1",
            "--max-tokens",
            "16",
            "--seed",
            "0",
            *options,
        ],
        check=True,
        env={**os.environ, "LOCAL_BASE_URL": url, "LOCAL_API_KEY": "none", "INSPECT_DISPLAY": "plain"},
    )
    return next(p for p in logs.iterdir() if p.suffix in (".eval", ".json"))


HF_SCRIPT = """
import json, sys
from datasets import Dataset, DatasetDict
rows = [json.loads(line) for line in open(sys.argv[1])]
answers = {str(r["doc_id"]): r["resps"][0][0] for r in map(json.loads, open(sys.argv[2]))}
data = Dataset.from_list(
    [{"idx": r["id"], "instruction": r["question"], "output": answers[str(i)], "gold": r["answer"],
      "judge_score": float(answers[str(i)].strip() == r["answer"])} for i, r in enumerate(rows)]
)
data.save_to_disk(sys.argv[3])
DatasetDict({"test": data}).save_to_disk(sys.argv[4])
"""


def hf_dataset(tools: Path) -> None:
    """The task's data with the lm-eval answers, saved by datasets' save_to_disk (as a Dataset and a DatasetDict)."""
    for name in ("hf_arith", "hf_arith_dict"):
        shutil.rmtree(OUT / name, ignore_errors=True)
    subprocess.run(
        [
            str(tools / "python"),
            "-c",
            HF_SCRIPT,
            str(TASKS / "arith.jsonl"),
            str(OUT / "samples_arith.jsonl"),
            str(OUT / "hf_arith"),
            str(OUT / "hf_arith_dict"),
        ],
        check=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default="/work/wt/proxy-venv/bin", help="bin folder with lm_eval and inspect")
    parser.add_argument("--model-dir", default=str(Path(tempfile.gettempdir()) / "smollm2-served"))
    parser.add_argument("--hf-only", action="store_true", help="only remake the HF dataset folders from the logs")
    args = parser.parse_args()
    tools = Path(args.tools)
    if args.hf_only:
        hf_dataset(tools)
        return
    folder = model_folder(Path(args.model_dir))
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, served(folder, Path(tmp) / "serve.log") as url:
        work = Path(tmp)
        model = str(folder)
        shutil.copy(lm_eval(tools, url, model, "arith", work), OUT / "samples_arith.jsonl")
        shutil.copy(lm_eval(tools, url, model, "arith_repeats", work), OUT / "samples_arith_repeats.jsonl")
        shutil.copy(inspect_eval(tools, url, model, work, "--temperature", "0"), OUT / "arith.eval")
        shutil.copy(
            inspect_eval(tools, url, model, work, "--temperature", "0", "--log-format", "json"), OUT / "arith.json"
        )
        shutil.copy(
            inspect_eval(tools, url, model, work, "--temperature", "1", "-T", "epochs=3"), OUT / "arith_epochs3.eval"
        )
    hf_dataset(tools)
    for path in sorted(OUT.iterdir()):
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
