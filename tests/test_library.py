"""activegrade.library, the statistics as plain functions: its examples run as doctests, and
``import activegrade`` imports none of it until one of its names is used."""

from __future__ import annotations

import doctest
import subprocess
import sys

import activegrade
from activegrade import library


def test_the_librarys_examples_run():
    result = doctest.testmod(library, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 20 and result.failed == 0


def test_every_library_function_has_an_example():
    finder = doctest.DocTestFinder()
    for name in library.__all__:
        tests = finder.find(getattr(library, name), name, globs={})
        assert tests and tests[0].examples, f"{name} has no example"


def test_importing_activegrade_loads_the_library_on_first_use_only():
    code = (
        "import sys, activegrade\n"
        "assert 'activegrade.library' not in sys.modules and 'core' not in sys.modules, sorted(sys.modules)\n"
        "assert callable(activegrade.prepare) and 'activegrade.library' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert activegrade.estimate is library.estimate and set(library.__all__) <= set(activegrade.__all__)
