"""ActiveGrade core: headless library for semantic-entropy stratified active grading.

Nothing in this package imports Streamlit; the app, the CLI, the simulator and
the tests all call the same functions.
"""
