"""ui/charts.py: the estimate's path chart carries its text alternative (an accessibility review: a screen reader
read "Vega visualization" alone)."""

from __future__ import annotations

import math

import pandas as pd

from ui.charts import path_chart, path_words

COLUMNS = ["grades", "estimate", "ci_low", "ci_high", "uniform_low", "uniform_high", "anytime_low", "anytime_high"]


def test_the_chart_says_where_the_path_ends_in_words():
    path = pd.DataFrame(
        [
            [10, math.nan, math.nan, math.nan, 0.2, 0.9, math.nan, math.nan],
            [40, 0.6254, 0.51, 0.74, 0.45, 0.8, 0.4, 0.85],
        ],
        columns=COLUMNS,
    )
    words = path_words(path)
    assert words == (
        "Estimate against the number of grades, from 10 to 40. At 40 grades the estimate is 0.625, its interval "
        "0.510 to 0.740; uniform random sampling's interval at the same count: 0.450 to 0.800."
    )
    assert path_chart(path).to_dict()["description"] == words
    assert "estimate is not known yet, its interval not known yet" in path_words(path.iloc[:1])
    assert path_words(pd.DataFrame(columns=COLUMNS)).endswith("no grade yet.")
