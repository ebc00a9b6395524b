"""Projects page: a Hugging Face save_to_disk folder uploaded as a .zip is the pool (core.inputs.archives); an
archive whose member leads outside its folder is refused, naming the member, and nothing is created."""

from __future__ import annotations

import pytest

import core.services.project
from tests.test_archives import COLUMNS, ROWS, save_tiny_dataset, zipped

START = core.services.project.start_preparation  # the real one, before a test replaces it


@pytest.fixture
def page(open_app, monkeypatch, tmp_path):
    """The Projects page with no demo, no app worker and no preparation started by the page."""
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    monkeypatch.setenv("ACTIVEGRADE_APP_WORKER", "0")
    monkeypatch.setattr(core.services.project, "start_preparation", lambda store, pid, **_: None)
    return open_app()


def create(at, name: str, upload: tuple[str, bytes]) -> None:
    at.text_input(key="new_name").set_value(name)
    at.file_uploader(key="new_pool").set_value((*upload, "application/zip"))
    at.text_input(key="new_columns").set_value(COLUMNS)
    at.button(key="create").click().run()


def test_a_zipped_dataset_folder_is_the_pool_and_prepares(page, store, tmp_path):
    upload = ("arith.zip", zipped(save_tiny_dataset(tmp_path / "arith")))
    create(page, "From a dataset", upload)
    assert not page.exception and not page.error, [e.value for e in page.error]
    project = store.project_by_name("From a dataset")
    assert store.input_files(project.id)["pool"] == upload and project.settings.columns == COLUMNS
    START(store, project.id, wait=True)
    assert store.project(project.id).status == "ready", store.project(project.id).error
    assert store.load_items(project.id)["id"].tolist() == ROWS["idx"]


def test_a_member_outside_the_folder_is_refused_and_nothing_is_created(page, store, tmp_path):
    folder = save_tiny_dataset(tmp_path / "arith")
    create(page, "Escaping", ("arith.zip", zipped(folder, extra={"arith/../../evil.arrow": b"payload"})))
    shown = page.error[0].value.replace("\\", "")  # as plain text: markdown's characters escaped
    assert "arith.zip: holds the member 'arith/../../evil.arrow'" in shown and "Fix: archive the folder itself" in shown
    assert store.projects() == []
