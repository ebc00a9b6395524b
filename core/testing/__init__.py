"""Tooling for tests and benchmarks (not shipped in the wheel): app servers, simulated graders, tiny models."""
