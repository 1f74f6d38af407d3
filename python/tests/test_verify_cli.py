"""bitlearn.verify() and `python -m bitlearn`: the same reports and digests as the program."""
import json
import os
import subprocess
import sys

import bitlearn as bl


def test_version():
    assert bl.__version__ == "0.1.0"
    assert bl.contract_profile.startswith("bitlearn.identical")


def test_verify_quick_dict_has_the_program_digest(cli, tmp_path):
    report = bl.verify(quick=True, threads=2)
    assert report["suite"] == "quick"
    cpu = report["runs"][0]
    assert cpu["device"] == "cpu"
    assert all(c["state"] == "IDENTICAL" for c in cpu["checks"]), cpu["checks"]
    out = subprocess.run([cli, "verify", "--quick", "--threads", "1", "--json", str(tmp_path / "r.json")],
                         capture_output=True, text=True, check=True).stdout
    digest = [line.split()[1] for line in out.splitlines() if line.startswith("digest:")][0]
    assert cpu["digest"] == digest
    cli_report = json.loads((tmp_path / "r.json").read_text())
    assert cli_report["runs"][0]["digest"] == digest
    assert [c["hash"] for c in cli_report["runs"][0]["checks"]] == [c["hash"] for c in cpu["checks"]]


def test_verify_all_without_cuda_names_the_missing_device():
    report = bl.verify(device="all", quick=True)
    if not bl.cuda_backend_built():
        assert any("cuda" in s for s in report["skipped_devices"])


def _module(*args, **kw):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "bitlearn", *args], capture_output=True, text=True,
                          env=env, **kw)


def test_python_m_bitlearn_mirrors_the_program(cli, tmp_path):
    r = _module("verify", "--quick", "--json", str(tmp_path / "py.json"))
    assert r.returncode == 0, r.stderr
    assert "digest:" in r.stdout
    subprocess.run([cli, "verify", "--quick", "--json", str(tmp_path / "cli.json")], check=True,
                   capture_output=True)
    c = _module("compare", str(tmp_path / "py.json"), str(tmp_path / "cli.json"))
    assert c.returncode == 0, c.stdout + c.stderr
    assert bl.compare(str(tmp_path / "py.json"), str(tmp_path / "cli.json")) == 0
    d = _module("doctor")
    assert "contract profile" in d.stdout
    bad = _module("verify", "--device", "nonsense")
    assert bad.returncode == 2
