"""pytest setup: the package under test is the build tree's (PYTHONPATH=build/python) or the
installed one; the `bitlearn` program is build/bitlearn unless BITLEARN_CLI names another."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("BITLEARN_CLI", str(ROOT / "build" / "bitlearn"))
    if not os.path.exists(path):
        pytest.skip(f"the bitlearn program is not built ({path})")
    return path
