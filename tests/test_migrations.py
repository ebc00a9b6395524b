"""Alembic migrations (core/store/migrations.py): a new database is built by the frozen revisions and
matches the models exactly; a database of every version in the field (1 and 2, made before Alembic, as
the SQL in tests/data/schemas records them) upgrades and keeps every grade; a newer one is refused.
On SQLite, and on PostgreSQL when the test server runs."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, create_engine, text

from core.errors import InputError
from core.services import tokens
from core.store import Store, head, upgrade
from core.store.migrations import REVISIONS
from core.store.models import Base
from tests.legacy_schemas import create_legacy_schema
from tests.pg_schema import throwaway_schema_url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def engine(request, tmp_path) -> Iterator[Engine]:
    if request.param == "sqlite":
        engine = create_engine(f"sqlite:///{tmp_path / 'm.db'}")
        yield engine
        engine.dispose()
    else:
        with throwaway_schema_url() as url:
            engine = create_engine(url)
            yield engine
            engine.dispose()


def at_revision(engine: Engine, revision: str) -> None:
    """The database as the revisions up to ``revision`` build it (a later one's tables and columns absent)."""
    config = Config()
    config.set_main_option("script_location", str(REVISIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


POOL_BYTES = b'{"id": "q0", "prompt": "p", "response": "r"}\n'


def legacy_database(engine: Engine, version: int) -> None:
    """A database as version ``version`` made it, with a project, two items, three grades (one retracted)."""
    create_legacy_schema(engine, version)
    now = "2026-11-01 12:00:00+00:00"
    with engine.begin() as c:
        c.execute(
            text(
                "INSERT INTO projects (id, name, created_at, settings, status, progress_done, progress_total,"
                " progress_message, error, updated_at) VALUES (1, 'old', :now, '{\"seed\": 3}', 'ready', 2, 2, '', '', :now)"
            ),
            {"now": now},
        )
        for position in (0, 1):
            c.execute(
                text('INSERT INTO items VALUES (1, :p, :id, 0, \'{"prompt": "p", "response": "r"}\')'),
                {"p": position, "id": f"q{position}"},
            )
        for position, value, retracted in ((0, 1.0, None), (1, 0.0, now), (1, 1.0, None)):
            c.execute(
                text(
                    "INSERT INTO grades (project_id, position, value, label, grader, comment, seconds, created_at,"
                    " retracted_at) VALUES (1, :p, :v, 'l', 'alice', '', 1.5, :now, :r)"
                ),
                {"p": position, "v": value, "now": now, "r": retracted},
            )
        c.execute(
            text("INSERT INTO input_files (project_id, role, name, content) VALUES (1, 'pool', 'pool.jsonl', :c)"),
            {"c": POOL_BYTES},
        )
        if version >= 2:
            c.execute(
                text("INSERT INTO users (name, role, active, created_at) VALUES ('alice', 'grader', true, :now)"),
                {"now": now},
            )


def schema_differences(engine: Engine) -> list:
    with engine.connect() as c:
        return compare_metadata(MigrationContext.configure(c), Base.metadata)


def test_a_new_database_is_built_by_the_revisions_and_matches_the_models(engine):
    assert upgrade(engine) is None
    with engine.connect() as c:
        assert MigrationContext.configure(c).get_current_revision() == head()
    assert schema_differences(engine) == []
    assert upgrade(engine) == head()  # a second start changes nothing


@pytest.mark.parametrize("version", [1, 2])
def test_a_database_of_every_released_version_upgrades_and_keeps_every_grade(engine, version):
    legacy_database(engine, version)
    assert upgrade(engine) == f"000{version}"
    assert schema_differences(engine) == []
    store = Store(engine)
    grades = store.grades(1, include_retracted=True)
    assert sorted(zip(grades["position"], grades["value"], strict=True)) == [(0, 1.0), (1, 0.0), (1, 1.0)]
    assert store.graded_positions(1) == {0: 1.0, 1: 1.0}
    assert store.project(1).settings.seed == 3
    assert store.project(1).settings.regime == "anytime"  # revision 0008: the rule it was made with
    assert store.input_files(1) == {"pool": ("pool.jsonl", POOL_BYTES)}
    with engine.connect() as c:  # revision 0007 gave the stored file its digest
        assert c.execute(text("SELECT digest FROM input_files")).scalar_one() == hashlib.sha256(POOL_BYTES).hexdigest()


def test_a_newer_database_is_refused(engine):
    upgrade(engine)
    with engine.begin() as c:
        c.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(InputError, match="newer than this ActiveGrade"):
        upgrade(engine)


def test_a_newer_legacy_database_is_refused(engine):
    legacy_database(engine, 2)
    with engine.begin() as c:
        c.execute(text("UPDATE schema_version SET version = 99"))
    with pytest.raises(InputError, match="schema version 99"):
        upgrade(engine)


def test_a_comparison_made_before_card_keys_gets_one_and_its_cards_are_shown_afresh(engine):
    """Revision 0017: the order of a comparison's cards without a key follows from its seed and the code (a security
    review named every response's model); the upgrade draws a key and drops the showings in the old order."""
    at_revision(engine, "0016")
    now = "2026-11-01 12:00:00+00:00"
    with engine.begin() as c:
        for pid, settings in ((1, '{"targets": ["a", "b"]}'), (2, '{"seed": 3}')):
            c.execute(
                text(
                    "INSERT INTO projects (id, name, created_at, settings, status, progress_done, progress_total,"
                    " progress_message, error, updated_at) VALUES (:id, :name, :now, :s, 'ready', 0, 0, '', '', :now)"
                ),
                {"id": pid, "name": f"p{pid}", "now": now, "s": settings},
            )
            c.execute(
                text(
                    "INSERT INTO showings (token, project_id, grader, position, item_id, reviewing, released_at,"
                    " expires_at) VALUES (:t, :id, 'ann', 0, 'q0', false, :now, '2099-01-01 00:00:00+00:00')"
                ),
                {"t": f"token{pid}", "id": pid, "now": now},
            )
    assert upgrade(engine) == "0016"
    store = Store(engine)
    assert len(store.project(1).settings.card_key) == 32 and store.project(2).settings.card_key == ""
    with engine.connect() as c:
        assert c.execute(text("SELECT project_id FROM showings")).scalars().all() == [2]


def test_an_upgrade_is_logged_by_the_process_that_makes_it(engine, caplog):
    """Any command migrates an older database when it opens it (`status` included), and said nothing (an
    operator's review); opening one already at the head says nothing."""
    with caplog.at_level("INFO", logger="core.store.migrations"):
        upgrade(engine)
        upgrade(engine)
    said = [r.getMessage() for r in caplog.records if r.name == "core.store.migrations"]
    assert said == [f"database schema upgraded from nothing (a new database) to {head()}"]


def test_the_tokens_made_before_expiry_keep_answering(engine):
    """Revision 0018: a token gains ``expires_at``; those made before it have none, so no running pipeline stops
    on an upgrade (the Team page and `tokens list` say to replace them)."""
    at_revision(engine, "0017")
    with engine.begin() as c:
        c.execute(
            text(
                "INSERT INTO users (id, name, role, active, password_hash, created_at)"
                " VALUES (1, 'ann', 'grader', true, '', '2026-11-01 12:00:00+00:00')"
            )
        )
        c.execute(
            text(
                "INSERT INTO api_tokens (id, token_hash, user_id, name, created_by, created_at)"
                " VALUES (1, :h, 1, 'ci', 'root', '2026-11-01 12:00:00+00:00')"
            ),
            {"h": hashlib.sha256(b"ag_old").hexdigest()},
        )
    assert upgrade(engine) == "0017"
    user = tokens.resolve(Store(engine), "ag_old")
    assert user is not None and user.name == "ann"
