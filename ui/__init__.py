"""Streamlit-side helpers shared by app.py and the pages (the only Streamlit code besides them)."""
