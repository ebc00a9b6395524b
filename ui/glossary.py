"""Plain-language help for every term the setup page and the dashboard use, each with its formula."""

from __future__ import annotations

import streamlit as st

STOPPING_TERM = "stopping rule (planned looks, a budget fixed, any grade)"
"""The term that explains how grading may stop (it was headed "budget fixed": a new user's review)."""

TERMS: dict[str, tuple[str, str]] = {
    "stratum": (
        "A group of items the surrogate model finds about equally doubtful. The pool is cut into strata and "
        "each stratum's mean grade is estimated from its own graded items.",
        r"\hat\mu = \sum_h W_h \bar y_h,\quad W_h = N_h / N",
    ),
    "agreement": (
        "The share of the surrogate model's sampled answers that mean the same as the answer being graded: "
        "1 = every sample agrees with it (the surrogate expects a high grade), 0 = none does (a low one).",
        r"a_i = \frac{\#\{\text{samples in the answer's meaning class}\}}{K}",
    ),
    "semantic entropy": (
        "How much the surrogate's sampled answers disagree with each other, in nats (natural-log units): 0 = all "
        "mean the same; ln K (about 2.08 for K = 8 samples) = all K differ, the most possible.",
        r"SE_i = -\sum_c p_c \ln p_c,\quad p_c = \text{share of samples in meaning class } c",
    ),
    "predicted mean grade": (
        "What the surrogate's agreement predicts the stratum's mean grade to be, pulled halfway to 1/2 "
        "because agreement ranks answers well but is not a calibrated probability. The queue starts from it; "
        "the forecast reads the mean grade you expect instead, where you give one, and the grades take over both.",
        r"\hat p_h = \tfrac12 + \text{shrink}\,(\bar a_h - \tfrac12)",
    ),
    "predicted spread": (
        "How much grades are expected to vary inside a stratum (their standard deviation), from its predicted "
        "mean as if graded 0 or 1 (a finer scale's grades vary less, by a share the grades show). Strata whose "
        "grades vary more need more grades; a stratum whose grades all agree needs few.",
        r"\sigma_h \approx \sqrt{\hat p_h (1 - \hat p_h)}",
    ),
    "proportional": (
        "Grades spread over the strata in proportion to their size: what uniform random sampling does on average.",
        r"n_h = n\,N_h / N",
    ),
    "Neyman allocation": (
        "Grades spread in proportion to a stratum's size times its spread, which gives the narrowest interval "
        "for a fixed number of grades (Neyman 1934). The queue follows it as grades come in, grades every "
        "stratum at least twice, and adds to each spread the price of a stratum with few grades in the interval "
        "the stopping rule reads, so a stratum whose grades all agree still gets enough of them: kappa / n_h with "
        "kappa = 1/2 for the fixed-n interval (planned looks, the default, and a budget fixed in advance), and "
        "kappa = log(40) / 2 for the anytime-valid interval.",
        r"n_h \propto N_h \sqrt{\sigma_h^2 + \kappa / n_h}",
    ),
    STOPPING_TERM: (
        "How grading may stop. By default (planned looks) the stopping rule checks the interval at two looks, "
        "when half and then all of the precision the target needs is reached, and says done at the first look "
        "whose interval is within the target; each look's interval is a little wider than a one-off 95% interval "
        "(99.4% and 95.2%), so that the two together hold at 95%. With the budget fixed in advance, graders get "
        "no new item once n0 items are graded and the report reads the fixed-n interval at n0 (reading it after "
        "more grades chosen on sight would be peeking). With the anytime-valid interval (a project setting), you "
        "may stop at any grade, which costs about twice the grades.",
        r"\text{done at look } k \text{ when } c_k\,\widehat{se}_k \le \text{target},\quad c_1 = 2.77,\ c_2 = 1.98",
    ),
    "half-width (±)": (
        "Half the width of the 95% interval, (high - low) / 2: what the target (±) is compared with. The interval "
        "need not be centred on the estimate: near 0 or 1 it reaches further toward the middle, as the "
        "uncertainty does, so read its two ends rather than the estimate ± the half-width.",
        r"\text{half-width} = (\text{high} - \text{low}) / 2",
    ),
    "saving vs uniform": (
        "How many fewer grades this project needs to stop than uniform random sampling: against the grades a "
        "uniform sample needs for the target with the usual fixed-n interval, and against uniform sampling "
        "stopped by the same rule. Expected (at the forecast stop) until the rule says done; with a budget fixed "
        "in advance, against a uniform sample of the same precision.",
        r"\text{saving} = 1 - n / m,\quad n = \text{grades at the stop},\ m = \text{uniform's grades}",
    ),
}


def term_help(term: str) -> str:
    """The plain-language text of ``term`` (for a widget's ``help=``)."""
    return TERMS[term][0]


def terms_popover(label: str = "What do these terms mean?") -> None:
    """Every term in plain words, its formula beneath it."""
    with st.popover(label, icon=":material/help:"):
        for term, (plain, formula) in TERMS.items():
            st.markdown(f"**{term}**: {plain}")
            st.latex(formula)
