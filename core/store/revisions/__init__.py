"""Alembic's script directory for the ActiveGrade schema (see core/store/migrations.py)."""
