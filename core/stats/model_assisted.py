"""The model-assisted part of the difference estimator: cross-fitted residuals.

mu = sum_h W_h [ ybar_h - beta' (xbar_h - Xbar_h) ] = sum_h W_h mean_h(e), with
e_i = y_i - beta' (x_i - Xbar_h(i)): x are the surrogate covariates
(agreement, semantic entropy, standardised), Xbar_h their known stratum means
over the whole pool, beta a within-stratum ridge regression slope. Any fixed
beta leaves the estimator unbiased; fitting beta on the same grades would
leak each item's grade into its own prediction, so the graded items of each
stratum alternate between two folds (in grading order) and an item's residual
uses the slope fitted on the other fold (cross-fitting). Sources: Sarndal,
Swensson and Wretman, Model Assisted Survey Sampling (1992), ch. 6-7 (the
difference and GREG estimators); Angelopoulos et al. 2023 and Zrnic and
Candes 2024 for cross-fitted prediction-powered and active inference.
"""

from __future__ import annotations

import numpy as np

from core.stats.allocation import Design

RIDGE = 2.0
"""Ridge penalty on the slope (standardised covariates), in units of one graded item's cross-product."""


def _fold_slopes(onehot: np.ndarray, fold: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Within-stratum ridge slopes fitted on each fold: (R, 2, p).

    beta_k = (C_xx + RIDGE I)^-1 C_xy with C the within-stratum centred cross
    products of fold k: C_xy = sum_h [S_xy,h - S_x,h S_y,h / n_h].
    """
    p = x.shape[-1]
    slopes = np.empty((x.shape[0], 2, p))
    for k in (0, 1):
        member = onehot * (fold == k)[..., None]
        cnt = np.maximum(member.sum(axis=1), 1.0)  # (R, H)
        sx = np.einsum("rnh,rnp->rhp", member, x)
        sy = np.einsum("rnh,rn->rh", member, y)
        sxx = np.einsum("rnh,rnp,rnq->rpq", member, x, x) - np.einsum("rhp,rhq,rh->rpq", sx, sx, 1 / cnt)
        sxy = np.einsum("rnh,rnp,rn->rp", member, x, y) - np.einsum("rhp,rh,rh->rp", sx, sy, 1 / cnt)
        slopes[:, k] = np.linalg.solve(sxx + RIDGE * np.eye(p), sxy[..., None])[..., 0]
    return slopes


def difference_residuals(design: Design, positions: np.ndarray, grades: np.ndarray) -> np.ndarray:
    """Cross-fitted residuals e_i = y_i - beta_(-k(i))' (x_i - Xbar_h(i)), shape (R, n).

    The graded items of each stratum alternate between folds 0 and 1 in
    grading order; an item's slope is the one fitted on the other fold
    (`_fold_slopes`), so its own grade never enters its own prediction.
    """
    positions = np.atleast_2d(positions)
    y = np.atleast_2d(np.asarray(grades, dtype=float))
    if design.covariates.shape[1] == 0:
        return y
    strata = design.stratum[positions]
    onehot = (strata[..., None] == np.arange(design.H)).astype(float)
    x = design.covariates[positions] - design.covariate_means[strata]
    fold = (np.take_along_axis(np.cumsum(onehot, axis=1), strata[..., None], axis=2)[..., 0] - 1).astype(np.int64) % 2
    slopes = _fold_slopes(onehot, fold, x, y)
    beta = np.take_along_axis(slopes, (1 - fold)[..., None], axis=1)  # (R, n, p)
    return y - np.einsum("rnp,rnp->rn", beta, x)
