"""Charts shared by the dashboard and the presenter view."""

from __future__ import annotations

import altair as alt
import pandas as pd


def path_chart(path: pd.DataFrame, height: int = 320, font_size: int = 11) -> alt.Chart:
    """The estimate (dark line) and its interval (blue band) against the number of grades, over uniform random
    sampling's interval at the same count (grey band, its dashed edges drawn over the blue band so that they
    show where the two intervals overlap), and the interval valid whenever grading stops (dotted blue lines,
    where the path has it)."""
    # the grades given, not one past them (a nice domain ran to 24 at 23 grades); grades in [0, 1], an interval
    # end outside it drawn at its edge (a band dipped below 0 at 4 grades: a manager's review)
    x = alt.X("grades:Q", title="grades", axis=alt.Axis(tickMinStep=1, format="d"), scale=alt.Scale(nice=False))
    y_scale = alt.Scale(domain=[0, 1], clamp=True)
    base = alt.Chart(path).encode(x=x)
    uniform = base.mark_area(opacity=0.18, color="#7f7f7f").encode(
        y=alt.Y("uniform_low:Q", title="mean grade", scale=y_scale), y2="uniform_high:Q"
    )
    edges = [
        base.mark_line(color="#7f7f7f", strokeDash=[6, 4]).encode(y=alt.Y(f"{bound}:Q", scale=y_scale))
        for bound in ("uniform_low", "uniform_high")
    ]
    ours = base.mark_area(opacity=0.45, color="#1f77b4").encode(y=alt.Y("ci_low:Q", scale=y_scale), y2="ci_high:Q")
    anytime = [
        base.mark_line(color="#1f77b4", strokeDash=[2, 3], strokeWidth=2).encode(y=alt.Y(f"{bound}:Q", scale=y_scale))
        for bound in ("anytime_low", "anytime_high")
    ]
    line = base.mark_line(color="#1f3b73", strokeWidth=3).encode(y=alt.Y("estimate:Q", scale=y_scale))
    return (
        alt.layer(uniform, ours, *edges, *anytime, line)
        .properties(height=height, description=path_words(path))
        .configure_axis(labelFontSize=font_size, titleFontSize=font_size + 2)
    )


def path_words(path: pd.DataFrame) -> str:
    """The chart in words, its text alternative (a screen reader read "Vega visualization" alone): where the
    path ends, the estimate and its interval beside uniform sampling's at the same count."""
    if path.empty:
        return "Estimate against the number of grades: no grade yet."
    last = path.iloc[-1]

    def span(low: float, high: float) -> str:
        return f"{low:.3f} to {high:.3f}" if pd.notna(low) and pd.notna(high) else "not known yet"

    estimate = f"{last['estimate']:.3f}" if pd.notna(last["estimate"]) else "not known yet"
    return (
        f"Estimate against the number of grades, from {int(path['grades'].iloc[0]):,} to {int(last['grades']):,}. "
        f"At {int(last['grades']):,} grades the estimate is {estimate}, its interval "
        f"{span(last['ci_low'], last['ci_high'])}; uniform random sampling's interval at the same count: "
        f"{span(last['uniform_low'], last['uniform_high'])}."
    )
