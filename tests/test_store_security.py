"""Security findings at the store's edge: ids never reused, the same limits on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime
import decimal
import io

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import text

from core.errors import InputError
from core.scales import BINARY, parse_custom_labels
from core.services import account_writes, auth, reservations, team
from core.services.project import create_project
from core.store import Store, accounts, make_engine, upgrade
from tests.legacy_schemas import create_legacy_schema
from tests.pg_schema import throwaway_schema_url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    if request.param == "sqlite":
        s = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
        yield s
        s.engine.dispose()
        return
    with throwaway_schema_url() as url:
        s = Store.open(url)
        yield s
        s.engine.dispose()


def _pool(**extra) -> tuple[str, bytes]:
    table = pa.table({"id": ["a", "b"], "prompt": ["p", "q"], "response": ["r", "s"], **extra})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return "pool.parquet", buffer.getvalue()


def test_a_deleted_projects_id_is_never_given_again(store):
    first = store.create_project("first", {}, {"pool": ("pool.jsonl", b"{}\n")})
    second = store.create_project("second", {}, {"pool": ("pool.jsonl", b"{}\n")})
    store.delete_project(second)
    assert store.create_project("third", {}, {"pool": ("pool.jsonl", b"{}\n")}) > second > first


def test_the_migration_keeps_every_grade_and_stops_id_reuse_on_an_older_sqlite_database(tmp_path):
    url = f"sqlite:///{tmp_path / 'v2.db'}"
    engine = make_engine(url)  # the app's engine: foreign keys on
    create_legacy_schema(engine, 2)  # projects without AUTOINCREMENT, no back-off table
    with engine.begin() as c:  # projects as version 2 wrote them: its table has none of the later columns
        for name in ("kept", "gone"):
            c.execute(
                text(
                    "INSERT INTO projects (name, created_at, settings, status, progress_done, progress_total,"
                    " progress_message, error, updated_at) VALUES (:name, CURRENT_TIMESTAMP, '{}', 'new', 0, 0, '',"
                    " '', CURRENT_TIMESTAMP)"
                ),
                {"name": name},
            )
        kept, gone = (
            c.execute(text("SELECT id FROM projects WHERE name = :n"), {"n": n}).scalar() for n in ("kept", "gone")
        )
    with engine.begin() as c:  # grades as version 2 wrote them: its table has no target or criterion
        for position in range(7):
            c.execute(
                text(
                    "INSERT INTO grades (project_id, position, value, label, grader, comment, created_at)"
                    " VALUES (:project, :position, 1.0, 'Correct', 'ann', '', CURRENT_TIMESTAMP)"
                ),
                {"project": kept, "position": position},
            )
        c.execute(  # the event as version 2 wrote it: its table has no chain hash
            text(
                "INSERT INTO audit_events (at, actor, action, project_id, detail)"
                " VALUES (CURRENT_TIMESTAMP, 'root', 'project_deleted', :project, '{}')"
            ),
            {"project": gone},
        )
    with engine.begin() as c:  # deleted as version 2 did: its schema has none of the later tables
        c.execute(text("DELETE FROM projects WHERE id = :gone"), {"gone": gone})
    with engine.connect() as c:  # read as version 2's tables hold them: today's readers ask for a criterion
        grades_before = pd.read_sql(
            text("SELECT position, value, label, grader FROM grades WHERE project_id = :p ORDER BY id"),
            c,
            params={"p": kept},
        )
    assert "AUTOINCREMENT" not in _projects_sql(engine)

    assert upgrade(engine) == "0002"
    assert "AUTOINCREMENT" in _projects_sql(engine)
    new = Store(engine)
    kept_grades = new.grades(kept)[list(grades_before.columns)]
    pd.testing.assert_frame_equal(kept_grades, grades_before, check_dtype=False)  # every grade kept
    assert new.project(kept).name == "kept"
    assert new.create_project("next", {}, {"pool": ("pool.jsonl", b"{}\n")}) > gone  # no inherited audit trail
    accounts.add_failure(new, "ann", "203.0.113.9")  # the back-off table exists
    with engine.connect() as c:
        assert c.execute(text("PRAGMA foreign_keys")).scalar() == 1  # the app's connections check keys again
        assert c.execute(text("PRAGMA foreign_key_check")).fetchall() == []


def _projects_sql(engine) -> str:
    with engine.connect() as c:
        return c.execute(text("SELECT sql FROM sqlite_master WHERE name = 'projects'")).scalar()


@pytest.mark.parametrize(
    "pool, problem",
    [
        (_pool(meta=pa.array([decimal.Decimal("1.5"), decimal.Decimal("2")])), "type Decimal"),
        (_pool(meta=pa.array([datetime.date(2024, 1, 1), None])), "type date"),
        (_pool(meta=pa.array([b"\x00\x01", b"x"])), "type bytes"),
        (_pool(meta=pa.array([datetime.timedelta(days=1), None])), "type Timedelta"),
        (_pool(meta=pa.array([{"wait": datetime.timedelta(seconds=3)}, None])), "another type"),
        (("pool.jsonl", b'{"id": "a", "prompt": "p", "response": "r", "meta": Infinity}\n'), "infinite"),
        (("pool.jsonl", b'{"id": "a", "prompt": "p", "response": "r", "m": {"x": [-Infinity]}}\n'), "infinite"),
        (("pool.jsonl", b'{"id": "' + b"i" * 501 + b'", "prompt": "p", "response": "r"}\n'), "over the limit of 500"),
    ],
    ids=["decimal", "date", "binary", "duration", "nested-duration", "infinity", "nested-infinity", "long-id"],
)
def test_values_postgresql_would_refuse_are_input_errors_on_both_databases(store, pool, problem):
    with pytest.raises(InputError, match=problem):
        create_project(store, "p", pool, start=False)
    assert store.projects() == []


def test_over_long_names_and_labels_are_input_errors_on_both_databases(store):
    with pytest.raises(InputError, match="project name has 201 characters"):
        create_project(store, "n" * 201, ("pool.jsonl", b'{"id": "a", "prompt": "p", "response": "r"}\n'), start=False)
    with pytest.raises(InputError, match="label 1 has 201 characters"):
        parse_custom_labels("l" * 201 + " = 0\nok = 1")
    with pytest.raises(InputError, match="account name has 201 characters"):
        account_writes.create_account(store, "a" * 201, auth.GRADER, password="long enough password")
    pid = store.create_project("p", {}, {"pool": ("pool.jsonl", b"{}\n")})
    with pytest.raises(InputError, match="grader's name has 201 characters"):
        reservations.submit(store, pid, 0, BINARY, "Correct", "g" * 201)


def test_a_2_mb_sign_in_name_is_a_failed_sign_in_not_a_database_error(store):
    assert auth.sign_in(store, "x" * 2_000_000, "any password at all", address="203.0.113.9") is None
    assert accounts.events(store)["actor"].str.len().max() <= 200


def test_images_in_project_name_guidelines_and_labels_are_refused():
    from core.services.project import check_project_name, check_settings

    with pytest.raises(InputError, match="markdown image"):
        check_project_name("Q3 ![x](https://tracker.example/n.png)")
    with pytest.raises(InputError, match="markdown image"):
        check_settings({"guidelines": "see ![x][r]\n\n[r]: https://tracker.example/g.png"})
    with pytest.raises(InputError, match="too large or too deeply nested"):
        check_settings({"guidelines": ">" * 10_000})
    with pytest.raises(InputError, match="criterion 'safe' hold a markdown image"):
        check_settings({"criteria": [{"name": "safe", "guidelines": "![x](https://tracker.example/c.png)"}]})
    with pytest.raises(InputError, match="markdown image"):
        parse_custom_labels("![ok](https://tracker.example/l.png) = 1\nno = 0")


@pytest.mark.parametrize("hidden", ["\u200b", "\u2060", "\u202e", "\u00ad", "\U000e0041"])
def test_names_people_tell_apart_hold_no_invisible_character(store, hidden):
    """Two names that differ by an invisible character show as one: labels "Good" and "Good\u200b" on one
    card, criteria, models and project names alike, and a token's name wrote escape codes into `tokens list`
    (a security review)."""
    import pandas as pd

    from core.inputs.targets import split_targets
    from core.services import account_writes, tokens
    from core.services.project import check_project_name
    from core.settings import ProjectSettings

    with pytest.raises(InputError, match="invisible character"):
        check_project_name(f"Look{hidden}alike")
    with pytest.raises(InputError, match="the label holds the invisible character"):
        parse_custom_labels(f"Good = 1\nGood{hidden} = 0")
    with pytest.raises(InputError, match="criterion's name holds the invisible character"):
        ProjectSettings(criteria=[{"name": "Accuracy"}, {"name": f"Accuracy{hidden}"}])
    pool = pd.DataFrame(
        {"id": ["q1", "q1"], "prompt": ["p", "p"], "response": ["a", "b"], "model": ["gpt", f"gpt{hidden}"]}
    )
    with pytest.raises(InputError, match="model name .* holds the invisible character"):
        split_targets(pool, "pool.jsonl")
    admin = account_writes.create_account(store, "tokenadmin", auth.ADMIN, password="a long enough password")
    with pytest.raises(InputError, match="token's name holds the character"):
        tokens.create(store, admin, "tokenadmin", f"CI{hidden}")
    with pytest.raises(InputError, match="token's name holds the character"):
        tokens.create(store, admin, "tokenadmin", "CI\x1b[31mRED\x1b[0m")
    with pytest.raises(InputError, match="markdown image"):  # the Dashboard shows a criterion's name as markdown
        ProjectSettings(criteria=[{"name": "Accuracy ![t](https://tracker.example/c.png)"}])


def test_the_first_admin_needs_the_setup_code_from_the_servers_log(store, caplog, monkeypatch):
    """Whoever reached a fresh deployment first could make it theirs (attacker review): the form asks for a
    code only the server's log shows."""
    monkeypatch.setattr(team, "_setup_code", None)  # as in a fresh process (another test may have made it)
    with caplog.at_level("WARNING"):
        code = team.setup_code()
    assert code in caplog.text and team.setup_code() == code  # one code per process
    with pytest.raises(InputError, match="not the setup code"):
        team.create_first_admin(store, "mallory", "a long enough password", "guess")
    assert accounts.users(store) == []
    assert team.create_first_admin(store, "root", "a long enough password", f" {code} ").role == auth.ADMIN


def test_two_first_admin_forms_sent_at_once_create_one_admin(store):
    import threading

    barrier = threading.Barrier(8)
    results = []

    def submit(k: int) -> None:
        barrier.wait()
        results.append(team.create_first_admin(store, f"admin{k}", "a long enough password", team.setup_code()))

    threads = [threading.Thread(target=submit, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len([r for r in results if r is not None]) == 1
    assert [u.role for u in accounts.users(store)] == [auth.ADMIN]


@pytest.mark.parametrize(
    "url",
    [
        "bob:hunter2secret@db.example/app",  # the scheme forgotten: SQLAlchemy cannot parse it
        "postgres ql://bob:hunter2secret@db.example/app",
        "postgresql+psycopg://bob@127.0.0.1:1/app?password=hunter2secret&port=x",  # libpq reads ?password=
        "postgresql+psycopg://bob:hunter2%40secret@127.0.0.1:notaport/app",
        "postgresql+psycopg://bob:hunter2secret@127.0.0.1:1/app",
    ],
    ids=["no-scheme", "bad-scheme", "query-password", "encoded", "refused"],
)
def test_a_database_url_that_fails_is_described_without_its_password(url):
    from core.store.engine import describe_failure, redact_url

    with pytest.raises(Exception) as failure:
        Store.open(url)
    assert "hunter2" not in describe_failure(url, failure.value)
    assert "hunter2" not in redact_url(url) and "bob" in redact_url(url)


def test_a_short_password_is_masked_in_its_place_only():
    """A password "p" masked every p of the message ("***ostgresql+***syco***g"), garbling it and spelling the
    password's letters out (a new user's review): only the password's own place is masked."""
    from core.store.engine import describe_failure, redact_url

    url = "postgresql+psycopg://u:p@127.0.0.1:1/x"
    assert redact_url(url) == "postgresql+psycopg://u:***@127.0.0.1:1/x"
    error = RuntimeError(f"connection to {url} failed: port 1 refused; is the server accepting TCP/IP connections?")
    told = describe_failure(url, error)
    assert told == (
        "RuntimeError: connection to postgresql+psycopg://u:***@127.0.0.1:1/x failed: port 1 refused; is the server "
        "accepting TCP/IP connections?"
    )
    assert (
        redact_url("postgresql+psycopg://bob@h/app?password=pw&port=5")
        == "postgresql+psycopg://bob@h/app?password=***&port=5"
    )
