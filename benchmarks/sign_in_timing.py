"""Does the time a failed sign-in takes tell which kind of name was tried?

core.services.auth.sign_in checks unknown names, disabled accounts and accounts
without a password (OIDC only) against a throw-away Argon2 hash, so an attacker
timing the sign-in form cannot list the accounts, nor tell which ones sign in
through the identity provider (issue 14). This script times failed sign-ins of
each kind, interleaved in random order on one SQLite database, and compares
each with unknown names (Mann-Whitney U test, two-sided; a p-value far below
0.05 would mean the kinds can be told apart). Writes benchmarks/sign_in_timing.md.

    python benchmarks/sign_in_timing.py [--tries 40]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import mannwhitneyu

from core.services import account_writes, auth
from core.store import Store, accounts

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "the real password of the account"
WRONG = "a wrong password, typed by someone"

KINDS = {
    "unknown name": lambda k: f"nobody{k}",
    "account with a password, wrong password": lambda k: "pam",
    "OIDC-only account (no password)": lambda k: "olga",
    "disabled account": lambda k: "dora",
}


def time_tries(tries: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Milliseconds per failed sign-in, by kind: each try from its own address, and the account's failures
    cleared after it, untimed (account_writes.unlock), so no back-off applies; the account's own back-off
    (20 failures from anywhere) had refused the 21st try at one name."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(f"sqlite:///{Path(tmp) / 'timing.db'}")
        account_writes.create_account(store, "pam", auth.GRADER, password=PASSWORD)
        account_writes.create_account(store, "olga", auth.GRADER, email="olga@example.org")
        account_writes.create_account(store, "dora", auth.GRADER, password=PASSWORD)
        accounts.set_active(store, "dora", False)
        order = [kind for kind in KINDS for _ in range(tries)]
        random.Random(seed).shuffle(order)
        times: dict[str, list[float]] = {kind: [] for kind in KINDS}
        for k, kind in enumerate(order):
            name = KINDS[kind](k)
            start = time.perf_counter()
            found = auth.sign_in(store, name, PASSWORD if kind == "disabled account" else WRONG, address=f"10.0.{k}")
            times[kind].append((time.perf_counter() - start) * 1000)
            assert found is None
            account_writes.unlock(store, name)
        store.engine.dispose()
    return {kind: np.array(values) for kind, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=40, help="failed sign-ins per kind")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    times = time_tries(args.tries)
    base = times["unknown name"]
    lines = [
        "# Sign-in timing: failed sign-ins by kind of name",
        "",
        f"Written by `python benchmarks/sign_in_timing.py --tries {args.tries}` on {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load average before the run "
        f"{load_before:.1f} (a shared machine: the times vary with the load; the tries of all kinds are interleaved, "
        "so the load falls on them alike).",
        "",
        "Each failed sign-in through core.services.auth.sign_in on SQLite (Argon2id, argon2-cffi's default "
        "parameters). p: Mann-Whitney U test against unknown names, two-sided; a small p would let an attacker "
        "tell the kind of account from the time.",
        "",
        "| kind of name | tries | median ms | 10th-90th percentile ms | median - unknown name's, ms | p |",
        "|---|---|---|---|---|---|",
    ]
    for kind, values in times.items():
        p = "" if kind == "unknown name" else f"{mannwhitneyu(values, base).pvalue:.2f}"
        delta = "" if kind == "unknown name" else f"{np.median(values) - np.median(base):+.1f}"
        low, high = np.percentile(values, [10, 90])
        lines.append(f"| {kind} | {len(values)} | {np.median(values):.1f} | {low:.1f}-{high:.1f} | {delta} | {p} |")
    (ROOT / "benchmarks" / "sign_in_timing.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
