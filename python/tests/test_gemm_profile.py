"""The exact-integer GEMM profile from Python: bitlearn.set_gemm_profile('exact') switches every
matrix product of the process (docs/contract.md, section 4.1); its products are closer to float64
than the default profile's and do not depend on the order of k; verify reports the profile."""
import numpy as np
import pytest

import bitlearn


@pytest.fixture
def exact():
    bitlearn.set_gemm_profile("exact")
    yield
    bitlearn.set_gemm_profile("contract")


def test_profile_switch_and_errors():
    assert bitlearn.gemm_profile() == "contract"
    bitlearn.set_gemm_profile("exact")
    try:
        assert bitlearn.gemm_profile() == "exact"
    finally:
        bitlearn.set_gemm_profile("contract")
    with pytest.raises(bitlearn.Error, match="unknown GEMM profile"):
        bitlearn.set_gemm_profile("fast")


def test_exact_products_are_order_free_and_accurate(exact):
    rng = np.random.RandomState(0)
    a = rng.randn(40, 3000).astype(np.float32)
    b = rng.randn(3000, 30).astype(np.float32)
    c = np.asarray(bitlearn.matmul(a, b))
    perm = rng.permutation(3000)
    c_perm = np.asarray(bitlearn.matmul(a[:, perm], b[perm]))
    assert c.tobytes() == c_perm.tobytes()  # no order to fix: a permuted k gives the same bits
    want = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    err_exact = np.max(np.abs(c - want) / scale)
    bitlearn.set_gemm_profile("contract")
    c_contract = np.asarray(bitlearn.matmul(a, b))
    err_contract = np.max(np.abs(c_contract - want) / scale)
    assert err_exact < 2.0 ** -24
    assert err_exact <= err_contract
    assert c.tobytes() != c_contract.tobytes()


def test_verify_reports_the_profile(exact):
    r = bitlearn.verify(quick=True)
    assert r["contract_profile"] == "bitlearn.exact_gemm.v1"
    assert all(c["state"] == "IDENTICAL" for c in r["runs"][0]["checks"])
    assert r["digest"] == "d79ff36e142dbd9d435fe0ac8b2bf7192e1bda4882c30dbaf2707197d09e1632"
