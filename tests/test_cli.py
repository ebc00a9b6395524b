"""core.cli: the program name in help and errors is how the user called it; every command's conventions
(`--json -` to standard output, `--quiet`, progress bars only on a terminal, `--version`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from core.cli import build_parser
from core.store import Store


def test_the_console_script_is_named_activegrade():
    assert build_parser().format_usage().startswith("usage: activegrade ")


def test_python_dash_m_core_names_itself():
    out = subprocess.run([sys.executable, "-m", "core", "--help"], capture_output=True, text=True, check=True).stdout
    assert out.startswith("usage: python -m core ")


def test_a_command_imports_its_own_module_only():
    probe = (
        "import sys; from core.cli import build_parser; build_parser(argv=sys.argv[1:]);"
        "print(' '.join(m for m in ('core.cli.simulate', 'core.cli.sample', 'pandas') if m in sys.modules))"
    )
    loaded = {
        " ".join(argv): subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True)
        for argv in (["--help"], ["users", "--help"], ["simulate", "--help"])
    }
    assert loaded["--help"].stdout.split() == []  # the list of commands needs none of them
    assert "core.cli.simulate" not in loaded["users --help"].stdout.split()
    assert "core.cli.simulate" in loaded["simulate --help"].stdout.split()


DATA = Path(__file__).parent / "data" / "app"


def test_json_dash_writes_to_standard_output_and_messages_go_to_stderr(capsys, tmp_path):
    from core.cli import main

    pool, samples = str(DATA / "pool.jsonl"), str(DATA / "samples.jsonl")
    simulate = ["simulate", "--pool", pool, "--samples", samples, "--budgets", "10", "--reps", "3", "--json", "-"]
    assert main(simulate) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) and "activegrade" in captured.err  # the table, on stderr
    assert not (Path.cwd() / "-").exists()
    out = tmp_path / "items.csv"
    assert main(["prepare", "--pool", pool, "--samples", samples, "--out", str(out), "--json", "-"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["items"] == 40 and report["out"] == str(out) and "wrote" in captured.err


def test_quiet_prints_nothing_and_no_progress_bar_off_a_terminal(capsys, tmp_path):
    from core.cli import main

    pool, samples = str(DATA / "pool.jsonl"), str(DATA / "samples.jsonl")
    assert main(["prepare", "--pool", pool, "--samples", samples, "--out", str(tmp_path / "a.csv"), "-q"]) == 0
    assert capsys.readouterr() == ("", "")
    assert main(["prepare", "--pool", pool, "--samples", samples, "--out", str(tmp_path / "b.csv")]) == 0
    captured = capsys.readouterr()
    assert "\r" not in captured.err and "clustering" not in captured.err  # stderr is no terminal here
    assert "40 items" in captured.out


def test_a_progress_bar_on_a_terminal(monkeypatch):
    import argparse

    from core.cli.output import show_progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert show_progress(argparse.Namespace(quiet=False)) and not show_progress(argparse.Namespace(quiet=True))


def test_a_reader_that_closes_early_gets_no_traceback(tmp_path):
    """`python -m core status | head -2` (docs/cli.md: never a traceback): the reader closes standard output
    before the command writes its lines or its JSON; the command ends quietly with Python's broken-pipe status."""
    env = {**os.environ, "ACTIVEGRADE_DB_URL": f"sqlite:///{tmp_path / 'cli.db'}"}
    Store.open(env["ACTIVEGRADE_DB_URL"]).engine.dispose()  # status reads a database that is there
    for command in (["status"], ["status", "--json", "-"]):
        process = subprocess.Popen(
            [sys.executable, "-m", "core", *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        process.stdout.close()  # the reader is gone before the first line
        errors = process.stderr.read().decode()
        process.stderr.close()
        assert process.wait() == 1 and "Traceback" not in errors and "Broken" not in errors, (command, errors)


def test_version_on_python_dash_m_core():
    out = subprocess.run([sys.executable, "-m", "core", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("python -m core ")


def test_simulate_draws_its_progress_on_a_terminal(capsys, monkeypatch):
    from core.cli import main

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    pool, samples = str(DATA / "pool.jsonl"), str(DATA / "samples.jsonl")
    assert main(["simulate", "--pool", pool, "--samples", samples, "--budgets", "10", "--reps", "3"]) == 0
    err = capsys.readouterr().err
    assert "simulating" in err and "clustering" in err


def test_a_negative_seed_is_a_usage_error_not_a_traceback(capsys):
    for command in (["simulate", "--pool", "p.jsonl"], ["sample", "--pool", "p.jsonl", "--model", "m"]):
        try:
            build_parser().parse_args([*command, "--seed", "-1"])
        except SystemExit as exit_:
            assert exit_.code == 2
        else:
            raise AssertionError(f"{command[0]} took --seed -1")
        assert "argument --seed: '-1' is not a whole number from 0" in capsys.readouterr().err


def test_the_json_report_writes_a_number_not_known_as_null(capsys):
    """A bare NaN is not JSON (JavaScript's JSON.parse refused the simulator's report): null, as the API says it."""
    from core.cli import main

    pool, samples = str(DATA / "pool.jsonl"), str(DATA / "samples.jsonl")
    assert main(["simulate", "--pool", pool, "--samples", samples, "--budgets", "1", "--reps", "3", "--json", "-"]) == 0

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in the JSON report")

    report = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert report["methods"]["activegrade"]["1"]["mse_ratio"] is None


def test_two_outputs_on_standard_output_are_refused(capsys):
    from core.cli import main

    assert main(["export", "1", "--format", "csv", "--out", "-", "--json", "-"]) == 2
    assert "--out - and --json - both write to standard output" in capsys.readouterr().err


def test_an_output_that_names_an_input_or_the_other_output_is_refused_and_the_file_kept(tmp_path, capsys):
    """prepare --json POOL replaced the pool with the report, --out SAMPLES the samples with the items table, and
    export --out X --json X the export with the report, each with exit status 0 (a new user's review)."""
    from core.cli import main

    pool, samples = tmp_path / "pool.jsonl", tmp_path / "samples.jsonl"
    pool.write_bytes((DATA / "pool.jsonl").read_bytes())
    samples.write_bytes((DATA / "samples.jsonl").read_bytes())
    before = pool.read_bytes(), samples.read_bytes()
    prepare = ["prepare", "--pool", str(pool), "--samples", str(samples), "--backend", "exact", "-q"]
    assert main([*prepare, "--out", str(tmp_path / "items.csv"), "--json", str(pool)]) == 2
    assert f"--json {pool} is the file of --pool" in capsys.readouterr().err
    assert main([*prepare, "--out", str(samples)]) == 2
    assert "is the file of --samples: writing it would replace what the command reads" in capsys.readouterr().err
    assert main([*prepare, "--out", str(tmp_path / "not-made-yet" / ".." / "pool.jsonl")]) == 2  # its folder made
    assert "is the file of --pool" in capsys.readouterr().err and not (tmp_path / "not-made-yet").exists()
    twice = str(tmp_path / "x.csv")
    assert main(["export", "1", "--format", "csv", "--out", twice, "--json", twice]) == 2
    assert "writing it would replace the other output" in capsys.readouterr().err
    assert (pool.read_bytes(), samples.read_bytes()) == before


def test_prepare_writes_the_items_to_standard_output_as_json_lines(capsys):
    from core.cli import main

    pool, samples = str(DATA / "pool.jsonl"), str(DATA / "samples.jsonl")
    assert main(["prepare", "--pool", pool, "--samples", samples, "--out", "-"]) == 0
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert len(rows) == 40 and {"id", "stratum", "agreement"} <= set(rows[0])
    assert "wrote the items table to standard output" in captured.err  # the messages beside the data, on stderr


def test_an_items_table_given_back_as_a_pool_says_its_scores_are_computed_afresh(capsys, tmp_path):
    """`prepare` then `simulate` on its items table: the table's strata are not read, and the messages say why
    rather than that the pool has no such column."""
    from core.cli import main

    pool, samples, items = str(DATA / "pool.jsonl"), str(DATA / "samples.jsonl"), str(tmp_path / "items.csv")
    assert main(["prepare", "--pool", pool, "--samples", samples, "--out", items, "-q"]) == 0
    assert main(["simulate", "--pool", items, "--proxy", "agreement", "--reps", "3", "--budgets", "10"]) == 2
    assert "'agreement' is a score an earlier preparation wrote" in capsys.readouterr().err
    assert main(["simulate", "--pool", items, "--reps", "3", "--budgets", "10", "-q"]) == 0
    assert "is an items table an earlier preparation wrote" in capsys.readouterr().err


def test_two_stopping_regimes_are_refused_not_one_dropped(capsys):
    from core.cli import main

    argv = ["simulate", "--pool", str(DATA / "pool.jsonl"), "--budget-fixed", "--regime", "anytime", "--reps", "3"]
    assert main(argv) == 2
    assert "--budget-fixed and --regime anytime name two stopping regimes" in capsys.readouterr().err


def test_prepare_names_the_file_of_a_pool_of_several_models(capsys, tmp_path):
    from core.cli import main
    from tests.test_compare import long_pool, write_jsonl

    pool = write_jsonl(tmp_path / "pool.jsonl", long_pool())
    assert main(["prepare", "--pool", str(pool), "--out", str(tmp_path / "items.csv")]) == 2
    err = capsys.readouterr().err
    assert f"error: {pool}, column 'model': the pool names 2 models" in err and "surrogate sample" not in err


def test_a_quiet_command_quiets_the_libraries_progress_bars():
    """`sample -q` still wrote transformers' GGUF de-quantizing and weight-loading bars into logs (a new user's
    review): where the command draws none, tqdm's default is off and so are the hub's and transformers', which read
    them when first imported, after the command's arguments are (a fresh interpreter, as a command runs)."""
    script = (
        "import argparse, sys\n"
        "from core import cli\n"
        "assert 'tqdm' not in sys.modules and 'transformers' not in sys.modules\n"
        "cli._quiet_libraries(argparse.Namespace(quiet=True))\n"
        "from transformers.utils import logging\n"
        "from tqdm import tqdm\n"
        "print(logging.is_progress_bar_enabled(), tqdm(range(3)).disable)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
