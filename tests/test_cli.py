"""core.cli: the program name in help and errors is how the user called it."""

import subprocess
import sys

from core.cli import build_parser


def test_the_console_script_is_named_activegrade():
    assert build_parser().format_usage().startswith("usage: activegrade ")


def test_python_dash_m_core_names_itself():
    out = subprocess.run([sys.executable, "-m", "core", "--help"], capture_output=True, text=True, check=True).stdout
    assert out.startswith("usage: python -m core ")
