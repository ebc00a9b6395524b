"""ActiveGrade served with the app's own web layer: ``streamlit run serve.py`` (the same options as app.py).

Streamlit (>= 1.67) finds the ``st.App`` below and serves app.py through it, with ui/web.py's middleware
(security headers on every response, websockets from other origins refused), routes (the sign-in
cookie set HttpOnly) and lifespan (the app's own worker started with the server, warm: docs/workers.md).
``streamlit run app.py`` still works, without them (its worker starts when a job waits).
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import streamlit as st
import uvicorn.config

from core.config import config
from core.errors import InputError
from ui import web

try:
    config()  # a setting not understood stops the server here, saying which and how to fix it
except InputError as bad:
    sys.exit(f"ActiveGrade did not start: {bad}")

# uvicorn believes X-Forwarded-For from a loopback peer by default (FORWARDED_ALLOW_IPS, read before this file is
# loaded) and puts its address in the request's client, which every client on this machine could then forge: the
# wrong-token back-off and the audit's addresses read it. The app reads that header itself, and only from
# ACTIVEGRADE_TRUSTED_PROXIES (core.services.auth.client_address). uvicorn loads this file, then wraps the app in
# its proxy-headers middleware by this module-level name: it wraps nothing.
uvicorn.config.ProxyHeadersMiddleware = lambda app, trusted_hosts: app
web.SERVED.set()
app = st.App(Path(__file__).with_name("app.py"), routes=web.ROUTES, middleware=web.MIDDLEWARE, lifespan=web.lifespan)
# The objects of start-up (Streamlit, pandas, scipy, the app's modules: about 200,000) live as long as the server:
# frozen, the collector's full collections no longer walk them (under 100 graders, 60-120 ms every few seconds with
# every request stopped; 7-30 ms frozen: benchmarks/concurrent_graders.md).
gc.freeze()
