"""ActiveGrade served with the app's own web layer: ``streamlit run serve.py`` (the same options as app.py).

Streamlit (>= 1.67) finds the ``st.App`` below and serves app.py through it, with ui/web.py's middleware
(security headers on every response, websockets from other origins refused), routes (the sign-in
cookie set HttpOnly) and lifespan (the app's own worker started with the server, warm: docs/workers.md).
``streamlit run app.py`` still works, without them (its worker starts when a job waits).
"""

from __future__ import annotations

import gc
from pathlib import Path

import streamlit as st

from ui import web

web.SERVED.set()
app = st.App(Path(__file__).with_name("app.py"), routes=web.ROUTES, middleware=web.MIDDLEWARE, lifespan=web.lifespan)
# The objects of start-up (Streamlit, pandas, scipy, the app's modules: about 200,000) live as long as the server:
# frozen, the collector's full collections no longer walk them (under 100 graders, 60-120 ms every few seconds with
# every request stopped; 7-30 ms frozen: benchmarks/concurrent_graders.md).
gc.freeze()
