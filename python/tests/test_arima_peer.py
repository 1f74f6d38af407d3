"""arima and sarimax against statsmodels 0.15's SARIMAX.

bitlearn differences the series explicitly, so its likelihood is statsmodels' with
simple_differencing=True; trend terms are regression columns (1 and t = 1 .. n), as in statsmodels'
tsa.arima.model.ARIMA, and are given to SARIMAX as exogenous columns. On statsmodels' sunspots and
macrodata, the airline series (log, the airline model) and a seeded simulated ARMA with two
regressors:
- the log-likelihood statsmodels computes at bitlearn's fitted parameters (sigma2 included) equals
  bitlearn's llf to 1e-10 relative (the two Kalman filters agree to a few binary64 ulps);
- bitlearn's maximum is never below statsmodels' own fit (run to scipy's tightest tolerances), and
  the parameters agree to 1e-4 relative (statsmodels' optimizer stops on a flat likelihood earlier);
- forecasts and 95% / 80% intervals equal those of statsmodels' SARIMAX with the differencing in
  the state (simple_differencing=False, the same parameters) to 1e-9 relative to the series' scale;
- in-sample one-step predictions after the first d + D s + 20 rows agree to 1e-4 of the scale
  (statsmodels starts the integrated states from a large finite variance);
- aic and bic are statsmodels' at the same llf and parameter count.
"""
import warnings

import numpy as np
import pytest

sm = pytest.importorskip("statsmodels.api")
from statsmodels.tsa.statespace.sarimax import SARIMAX  # noqa: E402

from bitlearn import ml  # noqa: E402

AIRLINE = np.array([
    112, 118, 132, 129, 121, 135, 148, 148, 136, 119, 104, 118, 115, 126, 141, 135, 125, 149, 170, 170, 158, 133,
    114, 140, 145, 150, 178, 163, 172, 178, 199, 199, 184, 162, 146, 166, 171, 180, 193, 181, 183, 218, 230, 242,
    209, 191, 172, 194, 196, 196, 236, 235, 229, 243, 264, 272, 237, 211, 180, 201, 204, 188, 235, 227, 234, 264,
    302, 293, 259, 229, 203, 229, 242, 233, 267, 269, 270, 315, 364, 347, 312, 274, 237, 278, 284, 277, 317, 313,
    318, 374, 413, 405, 355, 306, 271, 306, 315, 301, 356, 348, 355, 422, 465, 467, 404, 347, 305, 336, 340, 318,
    362, 348, 363, 435, 491, 505, 404, 359, 310, 337, 360, 342, 406, 396, 420, 472, 548, 559, 463, 407, 362, 405,
    417, 391, 419, 461, 472, 535, 622, 606, 508, 461, 390, 432], dtype=np.float64)


def _simulated():
    rng = np.random.default_rng(7)
    n = 200
    X = rng.normal(size=(n + 8, 2))
    e = rng.normal(size=n + 58)
    w = np.zeros(n + 58)
    for t in range(2, n + 58):
        w[t] = 0.5 * w[t - 1] - 0.3 * w[t - 2] + e[t] + 0.4 * e[t - 1]
    y = 2.0 + X[:n] @ np.array([1.5, -0.7]) + w[58:]
    return y, X[:n], X[n:]


def _series(name):
    """y, X (or None), future X (or None), all float32-representable."""
    f32 = lambda a: None if a is None else np.asarray(a, np.float32).astype(np.float64)  # noqa: E731
    if name == "sunspots":
        return f32(sm.datasets.sunspots.load_pandas().data["SUNACTIVITY"].values), None, None
    if name == "infl":
        d = sm.datasets.macrodata.load_pandas().data
        return f32(d["infl"].values[:-8]), f32(d["unemp"].values[:-8, None]), f32(d["unemp"].values[-8:, None])
    if name == "loggdp":
        return f32(np.log(sm.datasets.macrodata.load_pandas().data["realgdp"].values)), None, None
    if name == "airline":
        return f32(np.log(AIRLINE)), None, None
    y, X, Xf = _simulated()
    return f32(y), f32(X), f32(Xf)


# (series, bitlearn class, parameters, statsmodels order, seasonal order, trend)
CASES = [
    ("sunspots", "ARIMA", dict(p=2, trend="c"), (2, 0, 0), (0, 0, 0, 0), "c"),
    ("sunspots", "ARIMA", dict(p=2, q=1, trend="c"), (2, 0, 1), (0, 0, 0, 0), "c"),
    ("sunspots", "ARIMA", dict(p=1, d=1, q=1), (1, 1, 1), (0, 0, 0, 0), "n"),
    ("sunspots", "ARIMA", dict(p=2, d=1, q=2, trend="t"), (2, 1, 2), (0, 0, 0, 0), "t"),
    ("sunspots", "SARIMAX", dict(p=1, seasonal_p=1, seasonal_q=1, s=11, trend="c"), (1, 0, 0), (1, 0, 1, 11), "c"),
    ("infl", "ARIMA", dict(p=1, q=1, trend="c"), (1, 0, 1), (0, 0, 0, 0), "c"),
    ("loggdp", "ARIMA", dict(p=1, d=1, trend="t"), (1, 1, 0), (0, 0, 0, 0), "t"),
    ("airline", "SARIMAX", dict(p=0, d=1, q=1, seasonal_d=1, seasonal_q=1, s=12), (0, 1, 1), (0, 1, 1, 12), "n"),
    ("simulated", "SARIMAX", dict(p=2, q=1, trend="c"), (2, 0, 1), (0, 0, 0, 0), "c"),
]


def _regressors(trend, X, first, n):
    cols = []
    if "c" in trend:
        cols.append(np.ones(n))
    if "t" in trend:
        cols.append(np.arange(first + 1, first + n + 1, dtype=np.float64))
    if X is not None:
        cols.append(X)
    return np.column_stack(cols) if cols else None


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[3]}x{c[4]}-{c[5]}" for c in CASES])
def test_against_statsmodels(case):
    series, cls, params, order, sorder, trend = case
    y, X, Xf = _series(series)
    n = len(y)
    est = getattr(ml, cls)(**params).fit(y.astype(np.float32), None if X is None else X.astype(np.float32))
    p = np.r_[est.params_, est.sigma2_]
    Z = _regressors(trend, X, 0, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SARIMAX(y, exog=Z, order=order, seasonal_order=sorder, simple_differencing=True)
        # The same likelihood at the same parameters.
        np.testing.assert_allclose(model.loglike(p), est.llf_, rtol=1e-10)
        res = model.fit(disp=False, maxiter=3000, pgtol=1e-12, factr=1.0)
    # The maximum: never below statsmodels', parameters close.
    assert est.llf_ >= res.llf - 1e-9 * abs(res.llf)
    scale = np.maximum(np.abs(res.params), 1.0)
    assert np.max(np.abs(p - res.params) / scale) < 1e-4, (p, res.params)
    np.testing.assert_allclose(est.aic_, -2 * est.llf_ + 2 * len(p), rtol=1e-12)
    np.testing.assert_allclose(est.bic_, -2 * est.llf_ + len(p) * np.log(res.nobs), rtol=1e-12)
    # Forecasts and intervals in levels: statsmodels with the differencing in the state.
    steps = 8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = SARIMAX(y, exog=Z, order=order, seasonal_order=sorder, simple_differencing=False).filter(p)
        fc = full.get_forecast(steps, exog=_regressors(trend, Xf, n, steps))
    yscale = np.max(np.abs(y))
    for alpha in (0.05, 0.2):
        mean, lower, upper = est.forecast(steps, None if Xf is None else Xf.astype(np.float32), alpha)
        ci = fc.conf_int(alpha=alpha)
        np.testing.assert_allclose(mean, fc.predicted_mean, rtol=0, atol=1e-9 * yscale)
        np.testing.assert_allclose(lower, ci[:, 0], rtol=0, atol=1e-9 * yscale)
        np.testing.assert_allclose(upper, ci[:, 1], rtol=0, atol=1e-9 * yscale)
    # In-sample one-step predictions after the integrated states settle.
    skip = order[1] + sorder[1] * sorder[3] + 20
    pred = est.predict(None if X is None else X.astype(np.float32))
    np.testing.assert_allclose(pred[skip:], full.predict()[skip:], rtol=0, atol=1e-4 * yscale)


def test_errors_are_named():
    y = np.arange(10, dtype=np.float32)
    with pytest.raises(Exception, match="too short"):
        ml.ARIMA(p=5, q=5).fit(y)
    with pytest.raises(Exception, match="y\\[3\\]"):
        ml.ARIMA().fit(np.where(np.arange(10) == 3, np.nan, y).astype(np.float32))
    with pytest.raises(Exception, match="seasonal_d \\* s"):
        ml.SARIMAX(seasonal_d=1, s=12).fit(y)


def test_statsmodels_order_spellings():
    """order=(p, d, q) and seasonal_order=(P, D, Q, s), as statsmodels (and the command line's
    order= / seasonal_order=) spell them: the same model as the single orders, kept in step by
    get_params, set_params and clone."""
    from sklearn.base import clone
    y = np.log(AIRLINE).astype(np.float32)
    a = ml.ARIMA(order=(2, 1, 1), trend="t").fit(y)
    b = ml.ARIMA(p=2, d=1, q=1, trend="t").fit(y)
    assert np.array_equal(a.params_, b.params_) and np.array_equal(a.predict(), b.predict())
    assert np.array_equal(a.forecast(5)[0], b.forecast(5)[0])
    assert (a.p, a.d, a.q) == (2, 1, 1) and a.get_params()["order"] == (2, 1, 1)
    s = ml.SARIMAX(order=[0, 1, 1], seasonal_order=(0, 1, 1, 12))
    assert (s.seasonal_d, s.seasonal_q, s.s) == (1, 1, 12)
    t = ml.SARIMAX(p=0, d=1, q=1, seasonal_d=1, seasonal_q=1, s=12)
    assert np.array_equal(s.fit(y).params_, t.fit(y).params_)
    assert t.order == (0, 1, 1) and t.seasonal_order == (0, 1, 1, 12)
    c = clone(s)
    assert c.get_params() == s.get_params() and c.order == [0, 1, 1]
    s.set_params(q=0)  # a single order moves the tuple with it
    assert s.order == (0, 1, 0) and s.get_params()["order"] == (0, 1, 0)
    s.set_params(seasonal_order=(1, 0, 0, 4))
    assert (s.seasonal_p, s.seasonal_d, s.seasonal_q, s.s) == (1, 0, 0, 4)
    assert np.array_equal(clone(s).fit(y).params_, s.fit(y).params_)
    assert ml.ARIMA().order == (1, 0, 0)
    with pytest.raises(ValueError, match="order must be 3 integers"):
        ml.ARIMA(order=(1, 0))
    with pytest.raises(ValueError, match="seasonal_order must be 4 integers"):
        ml.SARIMAX(seasonal_order=(1, 0, 1.5, 12))
    with pytest.raises(TypeError):  # ARIMA has no seasonal part
        ml.ARIMA(seasonal_order=(1, 0, 0, 12))
