"""The database's JSON codec: orjson where it can, the standard json where it cannot, the same values back."""

from __future__ import annotations

import json
import math

import pandas as pd

from core.store import Store, json_codec


def test_values_read_back_exactly_and_what_orjson_refuses_still_works():
    value = {"x": [0.1 + 0.2, 1 / 3, 5e-324, 1.7976931348623157e308, None], "text": 'ünï\n\t"\\', "big": 2**70}
    text = json_codec.dumps(value)  # 2**70 is past orjson's 64 bits: json writes it
    assert json_codec.loads(text) == value == json.loads(text)
    assert json_codec.dumps({"a": 1, "b": "é"}) == '{"a":1,"b":"é"}'
    assert math.isnan(json_codec.loads('{"x": NaN}')["x"])  # what json.dumps once wrote reads back


def test_prepared_items_and_settings_survive_the_database(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'db.sqlite'}")
    nested = {"n": 4, "temperature": 0.7, "stop": ["\n\n", "ü"]}  # a setting holding JSON of its own
    pid = store.create_project("p", {"columns": "prompt=q", "sampling": nested}, {"pool": ("pool.jsonl", b"")})
    items = pd.DataFrame(
        {
            "id": ["a", "b"],
            "stratum": [0, 1],
            "prompt": ["ünï\n", "x"],
            "semantic_entropy": [0.1 + 0.2, float("nan")],
            "count": [2**62, 3],
        }
    )
    store.save_items(pid, items)
    back = store.load_items(pid)
    assert back["prompt"].tolist() == ["ünï\n", "x"] and back["count"].tolist() == [2**62, 3]
    assert back["semantic_entropy"].iloc[0] == 0.1 + 0.2 and math.isnan(back["semantic_entropy"].iloc[1])
    settings = store.project(pid).settings
    assert settings.columns == "prompt=q" and settings.sampling == nested
