"""Every kind of job a worker runs, by the name stored in the jobs table."""

from __future__ import annotations

from core.jobs.context import Kind
from core.jobs.preparation_job import CHECK, CHECK_KIND, CHUNK, CHUNK_KIND, PREPARE, PREPARE_KIND
from core.jobs.simulation_job import SIMULATE, SIMULATE_KIND

KINDS: dict[str, Kind] = {PREPARE: PREPARE_KIND, CHUNK: CHUNK_KIND, CHECK: CHECK_KIND, SIMULATE: SIMULATE_KIND}
