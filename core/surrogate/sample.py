"""Sample surrogate answers from a local causal language model.

For every pool item the model answers the item's prompt K times; each answer
is written as one line of the surrogate long format
`{id, sample, logprob, n_tokens, surrogate}` (see docs/architecture.md).

- Prompting: the model's chat template when it has one (instruct models),
  with a short-answer system instruction and two worked examples as earlier
  turns; a plain "Question: ... Answer:" text otherwise. The answer is the
  first line of the generated text, stripped; generation stops at the first
  newline or end-of-sequence token.
- `logprob` is the sum of log p(token | prefix) over the answer's tokens under
  the model's own distribution (softmax of the raw logits, temperature 1),
  whatever the sampling temperature. It is the sequence log-likelihood used by
  likelihood-weighted semantic entropy (Kuhn et al. 2023), which
  length-normalises it with `n_tokens`, the number of those tokens.
- Batching: `batch_size` prompts per `generate` call, left-padded; each
  prompt's forward pass runs once and its key/value cache is copied to its K
  sequences (prompts are longer than short answers: about 90 tokens against
  at most 24 in the demo). On CUDA the model runs in float16.
- Determinism: before each batch the random generator is seeded from the seed
  and the batch's item ids, so the same pool, seed and batch size give the
  same file on the same hardware.
- Resuming: each finished item's K lines are appended (and flushed) at once;
  a rerun keeps the items already complete in the output file and samples
  only the others. Lines of an unfinished item are dropped first.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from core.errors import InputError
from core.surrogate.sampler_base import FEW_SHOT, SYSTEM_PROMPT, Answer, Progress, check_settings, samples_file
from core.surrogate.semantic.base import resolve_device


@dataclass
class LocalModel:
    """A causal language model, its tokenizer and the device it runs on."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    device: torch.device
    name: str


def load_model(name_or_path: str, *, gguf_file: str | None = None, device: str = "auto") -> LocalModel:
    """Load a Hugging Face causal LM (hub name or local folder; a GGUF file inside it with `gguf_file`).

    Raises InputError when the model cannot be found or loaded.
    """
    target = torch.device(resolve_device(device))
    options: dict = {"gguf_file": gguf_file} if gguf_file else {}
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, **options)
        model = AutoModelForCausalLM.from_pretrained(
            name_or_path, dtype=torch.float16 if target.type == "cuda" else torch.float32, **options
        )
    except (OSError, ValueError) as error:
        raise InputError(
            f"cannot load model '{name_or_path}'"
            + (f" with GGUF file '{gguf_file}'" if gguf_file else "")
            + f": {str(error).splitlines()[0]}",
            fix="give a local model folder or a model name already in the Hugging Face cache "
            "(the hub is offline unless the operator sets ACTIVEGRADE_HUB_DOWNLOADS=1); for a GGUF model give the "
            "folder and --gguf-file",
        ) from error
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(target).eval()
    label = Path(gguf_file).name if gguf_file else Path(name_or_path.rstrip("/")).name
    return LocalModel(model=model, tokenizer=tokenizer, device=target, name=label)


def build_prompt(
    tokenizer: PreTrainedTokenizerBase,
    question: str,
    *,
    system_prompt: str = SYSTEM_PROMPT,
    few_shot: Sequence[tuple[str, str]] = FEW_SHOT,
) -> str:
    """The text fed to the model: its chat template when it has one, else Question/Answer lines."""
    if tokenizer.chat_template:
        messages = [{"role": "system", "content": system_prompt}]
        for shot_question, shot_answer in few_shot:
            messages += [{"role": "user", "content": shot_question}, {"role": "assistant", "content": shot_answer}]
        messages.append({"role": "user", "content": question})
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    turns = "".join(f"Question: {q}\nAnswer: {a}\n\n" for q, a in few_shot)
    return f"{system_prompt}\n\n{turns}Question: {question}\nAnswer:"


def answer_length(pieces: Sequence[str], token_ids: Sequence[int], stop_ids: set[int]) -> int:
    """Number of leading tokens that make up the first line of a generation.

    Counting stops before an end-of-sequence (or padding) token, and at the
    first token containing a newline: that token counts only if text precedes
    the newline in it.
    """
    for position, (piece, token_id) in enumerate(zip(pieces, token_ids)):
        if token_id in stop_ids:
            return position
        if "\n" in piece:
            return position + bool(piece.split("\n", 1)[0])
    return len(pieces)


def batch_seed(seed: int, ids: Sequence[str]) -> int:
    """A 63-bit seed derived from the user's seed and the batch's item ids (SHA-256)."""
    digest = hashlib.sha256(json.dumps([seed, list(ids)]).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@torch.inference_mode()
def generate_answers(
    local: LocalModel,
    prompts: Sequence[str],
    *,
    k: int,
    temperature: float,
    max_new_tokens: int,
    seed: int,
) -> list[list[Answer]]:
    """K answers per prompt (already templated); temperature 0 means greedy decoding (then K must be 1)."""
    tokenizer = local.tokenizer
    torch.manual_seed(seed)
    encoded = tokenizer(list(prompts), return_tensors="pt", padding=True, add_special_tokens=False).to(local.device)
    sampling = (
        {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
        if temperature > 0
        else {"do_sample": False, "temperature": None, "top_k": None, "top_p": None}
    )
    # The prompt's forward pass is shared by its K answers: run it once (all
    # but the last token, which generate needs), then copy its cache K times.
    ids, mask = encoded["input_ids"], encoded["attention_mask"]
    positions = (mask.cumsum(-1) - 1).clamp(min=0)  # left padding: count real tokens only
    cache = local.model(
        input_ids=ids[:, :-1], attention_mask=mask[:, :-1], position_ids=positions[:, :-1], use_cache=True
    ).cache
    cache.batch_repeat_interleave(k)
    output = local.model.generate(
        input_ids=ids.repeat_interleave(k, dim=0),
        attention_mask=mask.repeat_interleave(k, dim=0),
        cache=cache,
        **sampling,
        max_new_tokens=max_new_tokens,
        stop_strings=["\n"],
        tokenizer=tokenizer,
        pad_token_id=tokenizer.pad_token_id,
        output_logits=True,
        return_dict_in_generate=True,
    )
    generated = output.sequences[:, ids.shape[1] :]
    # log p(token) under the model's own distribution: log-softmax of the raw logits.
    token_logprobs = torch.stack(
        [
            torch.log_softmax(step.float(), dim=-1).gather(-1, generated[:, position, None]).squeeze(-1)
            for position, step in enumerate(output.logits)
        ],
        dim=1,
    ).cpu()
    eos = local.model.generation_config.eos_token_id
    stop_ids = {tokenizer.pad_token_id, *(eos if isinstance(eos, list) else [eos])} - {None}
    answers = []
    for row, token_ids in enumerate(generated.cpu().tolist()):
        pieces = [tokenizer.decode([token_id]) for token_id in token_ids]
        length = answer_length(pieces, token_ids, stop_ids)
        text = tokenizer.decode(token_ids[:length], skip_special_tokens=True).split("\n", 1)[0].strip()
        answers.append(Answer(text, float(token_logprobs[row, :length].sum()), length))
    return [answers[start : start + k] for start in range(0, len(answers), k)]


def sample_pool(
    pool: pd.DataFrame,
    local: LocalModel,
    out: str | os.PathLike,
    *,
    k: int = 10,
    temperature: float = 1.0,
    max_new_tokens: int = 32,
    batch_size: int = 8,
    seed: int = 0,
    surrogate: str | None = None,
    progress: Progress | None = None,
) -> int:
    """Sample K answers for every pool item not yet complete in `out`; return how many items were sampled.

    `pool` needs `id` and `prompt` columns. `surrogate` names the model in the
    output (default: the model's folder or GGUF file name).
    """
    check_settings(k=k, temperature=temperature, max_new_tokens=max_new_tokens, batch_size=batch_size)
    with samples_file(pool, out, k, surrogate or local.name, progress) as (todo, write):
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            batch_ids = [item for item, _ in batch]
            prompts = [build_prompt(local.tokenizer, prompt) for _, prompt in batch]
            answers = generate_answers(
                local,
                prompts,
                k=k,
                temperature=temperature,
                max_new_tokens=max_new_tokens,
                seed=batch_seed(seed, batch_ids),
            )
            for item, item_answers in zip(batch_ids, answers):
                write(item, item_answers)
    return len(todo)
