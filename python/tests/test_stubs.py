"""The committed type stubs (bitlearn/_core.pyi, bitlearn/ml.pyi) match the built module."""
import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "stubs" / "make_stubs.py"


def test_stubs_are_current():
    r = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
