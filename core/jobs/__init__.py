"""Long work outside the web request, as rows of the jobs table that workers claim and run: preparation
(sampling, chunks), simulation (core.jobs.worker, core.jobs.kinds)."""
