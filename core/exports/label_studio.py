"""The round trip with Label Studio, for teams whose graders already work there: the pool as Label Studio tasks
with a labeling config for the project's scale, and Label Studio's exported annotations back as grades, each
under its annotator's name.

Formats as Label Studio's documentation gives them (labelstud.io/guide/task_format, /guide/tasks):
- Tasks (import into a Label Studio project): a JSON list of `{"data": {...}}`, here `data` = `item_id`
  (the pool's id), `prompt`, `response`, `reference` where the pool has one and the project shows it to its
  graders, and `activegrade_project` (the project's id, which the import checks: a copy of the project with
  the same pool would otherwise take another project's annotations without a word). The reserved task `id`
  is left to Label Studio.
- The labeling config (`labeling_config`): the prompt, the reference where shown, and the response as
  `<Text>`, the scale's labels as one single-choice `<Choices name="grade" toName="response">`, an optional
  `<TextArea name="comment">`.
- Annotations (Label Studio's "JSON" export): the task list, each task with `annotations`
  (`completions` in Label Studio 0.x), each annotation with `result` (the choices as
  `{"from_name": "grade", "type": "choices", "value": {"choices": [label]}}`, the comment as
  `{"from_name": "comment", "type": "textarea", "value": {"text": [...]}}`), `completed_by` (a user id,
  or an object with `id` and `email`), `lead_time` (seconds) and `was_cancelled` (a skip: not a grade).

An annotation's grader is `label-studio user <id>`, its annotator's Label Studio id, which every export gives:
the quick export gives the id alone and a snapshot export an object with the e-mail too, so a grader named by
the e-mail where there is one became two graders when both exports were imported (the same grades twice).
A `lead_time` over core.services.grading.MAX_VIEW_S (a task left open for days) is no measurement of the
time spent and is read as unknown, and an annotation whose annotator's account was deleted in Label Studio
(`completed_by` null) has no grader to be under and is skipped; the import says how many of each. Importing checks every annotation before it writes any
(the task and its project, its item, its label and comment, in order) and records each grade through
core.services.reservations.submit, the grade pages' own path (a changed label is kept as a change, an
identical one is not recorded twice), and one audit event for the import.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import quoteattr

import pandas as pd

from core.errors import InputError, NotThisKind
from core.inputs.limits import MAX_NAME_CHARS, check_length
from core.scales import Scale
from core.services import audit, auth, reservations
from core.services.grading import MAX_COMMENT_CHARS, MAX_VIEW_S
from core.services.outcome import Outcome, permitted
from core.services.progress import counted
from core.settings import ProjectSettings
from core.store import Store

GRADE = "grade"
COMMENT = "comment"
PROJECT = "activegrade_project"
"""The task's field that names the project its tasks came from (by id)."""
IMPORTED = "grades_imported"
FIX = "give the JSON export of a Label Studio project whose tasks came from `activegrade export --format label-studio`"
JSON_EXPORT = "export the Label Studio project as JSON (JSON-MIN and CSV flatten the annotations into rows, and leave out the skipped ones)"


def shown_fields(items: pd.DataFrame, settings: ProjectSettings) -> tuple[str, ...]:
    """The texts a task carries: the prompt and response, and the reference where the pool has one and the
    project shows it to its graders (core.services.grading.grader_view), so Label Studio shows what the Grade
    page does and no more."""
    reference = ("reference",) if settings.show_reference and "reference" in items.columns else ()
    return ("prompt", "response", *reference)


def labeling_config(scale: Scale, fields: Sequence[str]) -> str:
    """The Label Studio labeling config (XML) for grading with ``scale``: the task's ``fields`` (`shown_fields`),
    one choice, a comment."""
    choices = "\n".join(f"    <Choice value={quoteattr(choice.label)}/>" for choice in scale.choices)
    reference = (
        '\n  <Header value="Reference"/>\n  <Text name="reference" value="$reference"/>'
        if "reference" in fields
        else ""
    )
    return f"""<View>
  <Header value="Prompt"/>
  <Text name="prompt" value="$prompt"/>{reference}
  <Header value="Response"/>
  <Text name="response" value="$response"/>
  <Choices name="{GRADE}" toName="response" choice="single" required="true">
{choices}
  </Choices>
  <TextArea name="{COMMENT}" toName="response" placeholder="Comment (optional)" maxSubmissions="1"/>
</View>
"""


def tasks(items: pd.DataFrame, order: Sequence[int], project_id: int, fields: Sequence[str]) -> list[dict[str, Any]]:
    """Every item as a Label Studio task of project ``project_id`` with the texts ``fields`` (`shown_fields`;
    see the module docstring), in ``order`` (positions): Label Studio hands tasks out in the file's order, so
    the order is the design's (core.stats.queue.handed_out_order), and the first tasks graded are a stratified
    random sample, not the pool's first rows."""
    shown = items.iloc[list(order)]
    frame = shown[["id", *fields]].astype(object).where(shown[["id", *fields]].notna(), None)
    return [
        {"data": {"item_id": str(row[0]), **dict(zip(fields, row[1:])), PROJECT: project_id}}
        for row in frame.itertuples(index=False)
    ]


def tasks_json(items: pd.DataFrame, order: Sequence[int], project_id: int, fields: Sequence[str]) -> bytes:
    return (json.dumps(tasks(items, order, project_id, fields), ensure_ascii=False, indent=1) + "\n").encode()


@dataclass(frozen=True)
class Annotation:
    """One grade read from Label Studio's export."""

    item_id: str
    label: str
    grader: str
    seconds: float | None
    comment: str
    task: str  # its task in messages: its place in the file, from 1, and Label Studio's own id where it has one
    project: int | None  # the task's PROJECT field (None where the tasks came without one)
    timed_out: bool = False  # its lead_time was over MAX_VIEW_S, read as unknown


def _grader(annotation: dict[str, Any]) -> str | None:
    """`label-studio user <id>` (see the module docstring): the id, never the e-mail only some exports give; None
    where the annotator's account was deleted (Label Studio then empties ``completed_by``)."""
    by = annotation.get("completed_by")
    annotator = by.get("id") if isinstance(by, dict) else by
    return f"label-studio user {annotator}" if _whole(annotator) else None


def _whole(value: object) -> bool:
    """Whether ``value`` is a whole number in JSON (not a bool, a text or a list)."""
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Annotations:
    """What Label Studio's export holds: the grades, and the annotations skipped for want of an annotator."""

    grades: list[Annotation]
    orphans: int


def _results(annotation: dict[str, Any], name: str, kind: str, key: str) -> list[str]:
    return [
        str(text)
        for result in annotation.get("result") or []
        if isinstance(result, dict) and result.get("from_name") == name and result.get("type") == kind
        for text in (result.get("value") or {}).get(key) or []
    ]


def read_annotations(name: str, data: bytes) -> Annotations:
    """The grades in Label Studio's JSON export (see the module docstring); cancelled annotations are skipped, and
    so are those of a deleted account (counted)."""
    try:
        exported = json.loads(data)
    except ValueError as error:
        raise InputError(f"the file is not JSON ({error})", file=name, fix=f"{JSON_EXPORT}; {FIX}") from None
    if not isinstance(exported, list):
        raise InputError("the file is not a list of tasks", file=name, fix=FIX)
    found, orphans = [], 0
    for place, task in enumerate(exported, start=1):
        item = (task.get("data") or {}).get("item_id") if isinstance(task, dict) else None
        named = f"task {place}" + (
            f" (Label Studio id {task['id']})" if isinstance(task, dict) and "id" in task else ""
        )
        if item is None and isinstance(task, dict) and "data" not in task and "item_id" in task:
            raise InputError(f"{named} is a row of Label Studio's JSON-MIN export", file=name, fix=JSON_EXPORT)
        if item is None:
            raise InputError(f"{named} has no data.item_id", file=name, fix=FIX)
        project = task["data"].get(PROJECT)
        if project is not None and not _whole(project):
            raise InputError(f"{named}: {PROJECT} {project!r} is not a project's id", file=name, fix=FIX)
        by_grader: set[str] = set()
        for annotation in task.get("annotations") or task.get("completions") or []:
            if not isinstance(annotation, dict):
                raise InputError(f"{named} (item {item!r}): an annotation is not an object", file=name, fix=FIX)
            if annotation.get("was_cancelled"):
                continue
            labels = _results(annotation, GRADE, "choices", "choices")
            if len(labels) != 1:
                raise InputError(
                    f"{named} (item {item!r}): an annotation has {len(labels)} choices of '{GRADE}', not one",
                    file=name,
                    fix="grade with the labeling config of `activegrade export --format label-studio-config`",
                )
            grader = _grader(annotation)
            if grader is None:
                orphans += 1
                continue
            if grader in by_grader:  # one would replace the other without a word
                raise InputError(
                    f"{named} (item {item!r}) has two annotations by {grader}",
                    file=name,
                    fix="keep one annotation per annotator and task in Label Studio, then export again",
                )
            by_grader.add(grader)
            seconds = _lead_time(annotation.get("lead_time"), f"{named} (item {item!r})", name)
            found.append(
                Annotation(
                    item_id=str(item),
                    label=labels[0],
                    grader=grader,
                    seconds=None if seconds is not None and seconds > MAX_VIEW_S else seconds,
                    # stripped as the grade service stores it: unstripped, it was a change at every import
                    comment="\n".join(_results(annotation, COMMENT, "textarea", "text")).strip(),
                    task=named,
                    project=project,
                    timed_out=seconds is not None and seconds > MAX_VIEW_S,
                )
            )
    return Annotations(found, orphans)


def _lead_time(lead: object, named: str, name: str) -> float | None:
    """An annotation's ``lead_time`` as seconds (None where it has none); InputError for one that is no number
    of seconds (text was taken as no time at all)."""
    if lead is None:
        return None
    if isinstance(lead, bool) or not isinstance(lead, int | float) or not 0 <= lead < float("inf"):
        raise InputError(
            f"{named}: lead_time {lead!r} is not a number of seconds",
            file=name,
            fix="give the seconds spent as a number, or leave lead_time out",
        )
    return float(lead)


def import_annotations(store: Store, actor: auth.User, project_id: int, name: str, data: bytes) -> Outcome:
    """Record Label Studio's annotations (the export ``data``, file ``name``) as the project's grades (see the
    module docstring); ``actor`` must be allowed to change the project's settings."""
    user = permitted(store, actor, auth.CHANGE_SETTINGS, project_id)
    project = store.project(project_id)
    check_one_question(project.name, project.settings)
    scale = project.settings.grading_scale
    ids = store.load_items(project_id)["id"].astype(str)
    positions = dict(zip(ids, range(len(ids))))
    read = read_annotations(name, data)
    annotations = read.grades
    for a in annotations:  # every annotation checked before any is written
        _check_project(store, project_id, a, name)
        check_length(a.grader, MAX_NAME_CHARS, f"{a.task}'s annotator", file=name)
        if a.item_id not in positions:
            raise InputError(f"{a.task}: item {a.item_id!r} is not in the project's pool", file=name, fix=FIX)
        try:
            scale.value_of(a.label)
        except KeyError:
            labels = ", ".join(c.label for c in scale.choices)
            raise InputError(
                f"{a.task} (item {a.item_id!r}): {a.label!r} is not a label of the project's scale ({labels})",
                file=name,
                fix="grade with the labeling config of `activegrade export --format label-studio-config`",
            ) from None
        check_length(a.comment, MAX_COMMENT_CHARS, f"the comment of {a.task} (item {a.item_id!r})", file=name)
    new = changed = untimed = 0
    for a in annotations:
        position = positions[a.item_id]
        earlier = store.grade_of(project_id, position, a.grader)
        if earlier is not None and earlier["label"] == a.label and earlier["comment"] == a.comment:
            continue  # imported before
        reservations.submit(store, project_id, position, scale, a.label, a.grader, comment=a.comment, seconds=a.seconds)
        new, changed = (new + 1, changed) if earlier is None else (new, changed + 1)
        untimed += a.timed_out
    graders = sorted({a.grader for a in annotations})
    audit.record(
        store, user, IMPORTED, project_id, source="label-studio", file=name, grades=new + changed, graders=graders
    )
    replaced = f", changed {counted(changed, 'grade')} given before (the old ones kept, retracted)" if changed else ""
    notes = []
    if untimed:
        notes.append(
            f"{counted(untimed, 'lead time')} over {MAX_VIEW_S / 86_400:.0f} days read as unknown (a task left open)"
        )
    if read.orphans:
        notes.append(f"{counted(read.orphans, 'annotation')} of a deleted Label Studio account skipped (no grader)")
    return Outcome(
        "imported",
        f"imported {counted(new, 'grade')}{replaced} by {counted(len(graders), 'grader')} from {name} "
        f"({len(annotations) - new - changed:,} already there)" + "".join(f"; {note}" for note in notes),
    )


def _check_project(store: Store, project_id: int, annotation: Annotation, name: str) -> None:
    """InputError where the annotation's task came from another project's tasks (its PROJECT field; tasks
    exported before the field was written have none, and are taken by their items alone)."""
    came = annotation.project
    if came is None or came == project_id:
        return
    known = {p.id: p.name for p in store.projects()}
    source = f"project {came} ({known[came]!r})" if came in known else f"project {came!r}"
    raise InputError(
        f"{annotation.task}: the tasks were exported from {source}, not from project {project_id} "
        f"({known.get(project_id, '')!r})",
        file=name,
        fix="import the file into the project its tasks came from, or export this project's own tasks for Label Studio",
    )


def check_one_question(name: str, settings: ProjectSettings) -> None:
    """NotThisKind (an InputError; the API's 409) unless the project asks one question of one response, as the
    tasks and labeling config this module writes do: a rubric's grades are keyed by criterion and a comparison's
    by target, which a Label Studio choice of one label carries neither of."""
    asks = (
        f"a rubric of {len(settings.criteria)} criteria"
        if settings.rubric is not None
        else f"a comparison of {len(settings.targets)} models"
        if settings.compares
        else None
    )
    if asks is not None:
        raise NotThisKind(
            f"project {name!r} asks {asks}; a Label Studio annotation carries one label for one response",
            fix="grade this project in ActiveGrade ("
            + ("on the Grade page, side by side" if settings.compares else "on the Grade page or through its API")
            + "), or import into a one-question project",
        )
