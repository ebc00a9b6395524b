"""ActiveGrade's Python client for the HTTP API a running app serves (docs/api.md).

    import activegrade

    client = activegrade.Client("http://127.0.0.1:8501", token)   # a token from the Team page
    project = client.create_project("Arithmetic", "pool.jsonl", "samples.jsonl", n_strata=3).wait_ready()
    while (card := project.next_item()) is not None:
        project.grade(card, "Correct")
    print(project.reading().estimate, project.export("csv")[:80])

The implementation of everything else lives in the ``core`` package; this one only speaks HTTP.
"""

from activegrade.client import ApiError, Card, Client, Interval, Outcome, Project, ProjectState, Reading

__all__ = ["ApiError", "Card", "Client", "Interval", "Outcome", "Project", "ProjectState", "Reading"]
