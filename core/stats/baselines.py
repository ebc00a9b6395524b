"""Baselines from the active-testing literature, vectorised over replications.

Both draw items with unequal probabilities from a surrogate's predicted
grade p_i and correct for it, so they are unbiased whatever p_i is worth:

- LURE (Kossen, Farquhar, Gal and Rainforth 2021, "Active Testing:
  Sample-Efficient Model Evaluation", eq. 3; the estimator is from Farquhar,
  Gal and Rainforth 2021, "On Statistical Bias in Active Learning"):
  sequential sampling without replacement with proposal q proportional to the
  predicted loss 1 - p_i, and the weighted mean of the losses.
- Active inference (Zrnic and Candes 2024, "Active Statistical Inference",
  section 3): each item is graded independently with probability
  pi_i proportional to sqrt(p_i (1 - p_i)) (the surrogate's uncertainty), and
  mu = mean_i(p_i) + (1/N) sum_i xi_i (y_i - p_i) / pi_i.

Each function returns (estimate, variance estimate, realised n) arrays of
shape (R,); their intervals are normal (Wald), as in those papers.
"""

from __future__ import annotations

import numpy as np

UNIFORM_MIX = 0.1
"""Share of the proposal that is uniform, so no item has a vanishing probability."""


def _mixed(weights: np.ndarray) -> np.ndarray:
    """(1 - UNIFORM_MIX) w / mean(w) + UNIFORM_MIX: positive weights with mean 1 (all 1 when w is all 0)."""
    if weights.mean() <= 0:
        return np.ones_like(weights)
    return (1 - UNIFORM_MIX) * weights / weights.mean() + UNIFORM_MIX


def lure(
    labels: np.ndarray, predicted: np.ndarray, n: int, rng: np.random.Generator, reps: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LURE estimate of mean(labels) from n items drawn sequentially with q proportional to 1 - predicted.

    Loss L = 1 - y. With q_m the probability of the item drawn at step m
    among the N - m + 1 left, v_m = 1 + (N - M)/(N - m) (1 / ((N - m + 1) q_m) - 1)
    and R_hat = (1/M) sum_m v_m L_m; mu_hat = 1 - R_hat. Variance:
    (1 - M/N) s^2 / M with s^2 the sample variance of the M terms v_m L_m
    (infinite for M = 1; a normal approximation, the papers give no interval). The sequential draws are Gumbel-top-k: sorting
    log w_i + Gumbel noise gives exactly successive sampling without replacement.
    """
    N = labels.size  # noqa: N806
    w = _mixed(1.0 - predicted)
    keys = np.log(w) + rng.gumbel(size=(reps, N))
    order = np.argsort(-keys, axis=1)[:, :n]
    drawn_w = w[order]
    left = w.sum() - np.concatenate([np.zeros((reps, 1)), np.cumsum(drawn_w, axis=1)[:, :-1]], axis=1)
    q = drawn_w / left
    m = np.arange(1, n + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = 1 + np.where(m < N, (N - n) / np.maximum(N - m, 1), 0.0) * (1 / ((N - m + 1) * q) - 1)
    terms = v * (1.0 - labels[order])
    value = 1.0 - terms.mean(axis=1)
    variance = (1 - n / N) * terms.var(axis=1, ddof=1) / n if n > 1 else np.full(reps, np.inf)
    return value, variance, np.full(reps, n)


def active_inference(
    labels: np.ndarray, predicted: np.ndarray, n: int, rng: np.random.Generator, reps: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Active inference estimate with expected budget n (Poisson sampling).

    pi_i = min(1, n u_i / sum_j u_j), u = mixed sqrt(p (1 - p)) (rescaled so
    sum pi = n after capping); mu_hat = mean(p) + (1/N) sum_i xi_i (y_i - p_i)/pi_i;
    variance (Horvitz-Thompson for Poisson sampling):
    (1/N^2) sum_i xi_i (1 - pi_i) (y_i - p_i)^2 / pi_i^2.
    """
    N = labels.size  # noqa: N806
    u = _mixed(np.sqrt(predicted * (1 - predicted)))
    pi = _capped_probabilities(u, n)
    xi = rng.random((reps, N)) < pi
    residual = labels - predicted
    value = predicted.mean() + (xi * residual / pi).sum(axis=1) / N
    variance = (xi * (1 - pi) * residual**2 / pi**2).sum(axis=1) / N**2
    return value, variance, xi.sum(axis=1)


def _capped_probabilities(u: np.ndarray, n: int) -> np.ndarray:
    """Inclusion probabilities proportional to u, summing to n, none above 1 (capped ones fixed at 1)."""
    pi = np.zeros_like(u)
    capped = np.zeros(u.size, dtype=bool)
    for _ in range(u.size):
        pi[~capped] = (n - capped.sum()) * u[~capped] / u[~capped].sum()
        pi[capped] = 1.0
        over = ~capped & (pi > 1)
        if not over.any():
            break
        capped |= over
    return pi
