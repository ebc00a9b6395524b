"""Inspect AI task over the local arith.jsonl (input = question, target = answer, scored by numeric match)."""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, json_dataset
from inspect_ai.scorer import match
from inspect_ai.solver import generate

HERE = Path(__file__).resolve().parent


@task
def arith(epochs: int = 1) -> Task:
    dataset = json_dataset(str(HERE / "arith.jsonl"), FieldSpec(input="question", target="answer", id="id"))
    return Task(dataset=dataset, solver=generate(), scorer=match(numeric=True), epochs=epochs)
