"""Long work outside the web request: sampling, preparation and simulation jobs."""
