"""Reading and checking what users bring: pool and sample files, evaluation logs, limits, safe text."""
