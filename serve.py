"""ActiveGrade served with the app's own web layer: ``streamlit run serve.py`` (the same options as app.py).

Streamlit (>= 1.67) finds the ``st.App`` below and serves app.py through it, with ui/web.py's middleware
(security headers on every response, websockets from other origins refused), routes (the sign-in
cookie set HttpOnly) and lifespan (the app's own worker started with the server, warm: docs/workers.md).
``streamlit run app.py`` still works, without them (its worker starts when a job waits).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import web

web.SERVED.set()
app = st.App(Path(__file__).with_name("app.py"), routes=web.ROUTES, middleware=web.MIDDLEWARE, lifespan=web.lifespan)
