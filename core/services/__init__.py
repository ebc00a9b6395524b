"""The rules of a project in use: accounts, sessions, grading, reservations, settings, progress, audit."""
