"""exponential_smoothing and the time-series statistics against statsmodels 0.15.

ExponentialSmoothing: on the airline series (Box and Jenkins' series G) and statsmodels' Nile data,
every trend / damping / seasonal combination: bitlearn's SSE is never larger than statsmodels' (both
minimize it; ours by a binary64 projected L-BFGS from statsmodels' grid start), and where the two
reach the same minimum (SSE within 1e-6) the parameters agree to 1e-3 and the forecasts to 1e-4
relative, except at the steps m, 2m, ... of a seasonal model (statsmodels' ExponentialSmoothing uses
an older seasonal estimate there; bitlearn's forecast is its ETSModel's). With the initial states
given by the heuristic and the smoothing parameters fixed, everything agrees to 1e-9. The prediction
intervals of the additive models equal those of statsmodels' ETSModel with the same parameters and
initial states (1e-8 relative). acf, pacf, adfuller and kpss agree with statsmodels' to 1e-10 on
the statistics and p-values (1e-9 for adfuller's regression "ctt"). The `bitlearn forecast` and `bitlearn tsa` programs print the same
values.
"""
import io
import pathlib
import subprocess
import warnings

import numpy as np
import pytest

sm = pytest.importorskip("statsmodels.api")
from statsmodels.tsa.exponential_smoothing.ets import ETSModel  # noqa: E402
from statsmodels.tsa.holtwinters import ExponentialSmoothing as SmES  # noqa: E402
from statsmodels.tsa import stattools  # noqa: E402

from bitlearn import _core, ml  # noqa: E402

# The monthly airline passenger totals 1949-1960 (Box and Jenkins' series G; 144 values, period 12).
AIRLINE = np.loadtxt(pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "timeseries" / "airline.csv",
                     skiprows=1)


def nile():
    return sm.datasets.nile.load_pandas().data["volume"].values.astype(np.float32).astype(np.float64)


CASES = [
    ("airline", dict(trend="add", seasonal="mul", seasonal_periods=12)),
    ("airline", dict(trend="add", seasonal="add", seasonal_periods=12)),
    ("airline", dict(trend="add", damped_trend=True, seasonal="add", seasonal_periods=12)),
    ("airline", dict(trend="mul", seasonal="mul", seasonal_periods=12)),
    ("airline", dict(trend="add", damped_trend=True, seasonal="mul", seasonal_periods=12)),
    ("airline", dict(seasonal="add", seasonal_periods=12)),
    ("nile", dict()),
    ("nile", dict(trend="add")),
    ("nile", dict(trend="add", damped_trend=True)),
    ("nile", dict(trend="mul")),
]


def series(name):
    return AIRLINE if name == "airline" else nile()


def sm_model(y, kw, init="estimated"):
    return SmES(y, trend=kw.get("trend"), seasonal=kw.get("seasonal"), seasonal_periods=kw.get("seasonal_periods"),
                damped_trend=kw.get("damped_trend", False), initialization_method=init)


@pytest.mark.parametrize("data,kw", CASES, ids=[f"{d}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for d, kw in CASES])
def test_exponential_smoothing_vs_statsmodels(data, kw):
    y = series(data)
    ours = ml.ExponentialSmoothing(**kw).fit(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sm_model(y, kw).fit()
    assert ours.sse_ <= ref.sse * (1 + 1e-9), (ours.sse_, ref.sse)
    if (ref.sse - ours.sse_) / ref.sse > 1e-6:
        return  # bitlearn found a lower minimum (e.g. Nile, damped): parameters differ
    p = ref.params
    assert abs(ours.params_["smoothing_level"] - p["smoothing_level"]) < 1e-3
    if kw.get("trend"):
        assert abs(ours.params_["smoothing_trend"] - p["smoothing_trend"]) < 1e-3
    if kw.get("seasonal"):
        assert abs(ours.params_["smoothing_seasonal"] - p["smoothing_seasonal"]) < 1e-3
    np.testing.assert_allclose(ours.aic_, ref.aic, rtol=1e-6)
    mean, lower, upper = ours.forecast(24)
    want = np.asarray(ref.forecast(24))
    steps = np.arange(1, 25)
    keep = (steps % kw["seasonal_periods"] != 0) if kw.get("seasonal") else np.ones(24, bool)
    np.testing.assert_allclose(mean[keep], want[keep], rtol=1e-4)
    # (the first rows depend on the weakly determined initial states)
    np.testing.assert_allclose(ours.predict(), np.asarray(ref.fittedvalues), rtol=1e-3)


@pytest.mark.parametrize("kw", [dict(), dict(trend="add"), dict(trend="add", seasonal="add", seasonal_periods=12),
                                dict(trend="mul", seasonal="mul", seasonal_periods=12),
                                dict(trend="add", damped_trend=True, damping_trend=0.9)])
def test_given_parameters_and_heuristic_states_agree_to_1e9(kw):
    fixed = dict(smoothing_level=0.35)
    if kw.get("trend"):
        fixed["smoothing_trend"] = 0.1
    if kw.get("seasonal"):
        fixed["smoothing_seasonal"] = 0.2
    ours = ml.ExponentialSmoothing(initialization_method="heuristic", **kw, **fixed).fit(AIRLINE)
    kw2 = {k: v for k, v in kw.items() if k != "damping_trend"}
    if "damping_trend" in kw:
        fixed["damping_trend"] = kw["damping_trend"]
    ref = sm_model(AIRLINE, kw2, init="heuristic").fit(optimized=False, **fixed)
    np.testing.assert_allclose(ours.sse_, ref.sse, rtol=1e-9)
    np.testing.assert_allclose(ours.predict(), np.asarray(ref.fittedvalues, np.float32), rtol=1e-6)
    steps = np.arange(1, 31)
    keep = (steps % 12 != 0) if kw.get("seasonal") else np.ones(30, bool)
    np.testing.assert_allclose(ours.forecast(30)[0][keep], np.asarray(ref.forecast(30))[keep], rtol=1e-9)


@pytest.mark.parametrize("kw", [dict(), dict(trend="add"), dict(trend="add", damped_trend=True),
                                dict(seasonal="add", seasonal_periods=12),
                                dict(trend="add", seasonal="add", seasonal_periods=12),
                                dict(trend="add", damped_trend=True, seasonal="add", seasonal_periods=12)])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_intervals_equal_ets_model(kw, alpha):
    import pandas as pd
    y = pd.Series(AIRLINE, index=pd.date_range("1949-01", periods=144, freq="MS"))
    ours = ml.ExponentialSmoothing(**kw).fit(AIRLINE)
    p = ours.params_
    damped = kw.get("damped_trend", False)
    ets = ETSModel(y, error="add", trend=kw.get("trend"), seasonal=kw.get("seasonal"),
                   seasonal_periods=kw.get("seasonal_periods"), damped_trend=damped, initialization_method="known",
                   initial_level=p["initial_level"], initial_trend=p["initial_trend"] if kw.get("trend") else None,
                   initial_seasonal=p["initial_seasons"] if kw.get("seasonal") else None)
    params = [p["smoothing_level"]]
    if kw.get("trend"):
        params.append(p["smoothing_level"] * p["smoothing_trend"])  # ETS beta = alpha beta*
    if kw.get("seasonal"):
        params.append(p["smoothing_seasonal"])
    if damped:
        params.append(p["damping_trend"])
    res = ets.smooth(params)
    np.testing.assert_allclose(res.mse, ours.sse_ / 144, rtol=1e-9)
    frame = res.get_prediction(start=144, end=144 + 29).summary_frame(alpha=alpha)
    mean, lower, upper = ours.forecast(30, alpha=alpha)
    np.testing.assert_allclose(mean, frame["mean"].values, rtol=1e-8)
    np.testing.assert_allclose(lower, frame["pi_lower"].values, rtol=1e-8)
    np.testing.assert_allclose(upper, frame["pi_upper"].values, rtol=1e-8)


def _stat_series():
    rng = np.random.default_rng(7)
    e = rng.standard_normal(400)
    ar = np.zeros(400)
    for t in range(1, 400):
        ar[t] = 0.6 * ar[t - 1] + e[t]
    return {"airline": AIRLINE, "log_airline_diff": np.diff(np.log(AIRLINE)), "ar1": ar, "walk": np.cumsum(e),
            "short_noise": e[:40], "trend_noise": 0.05 * np.arange(200) + e[:200]}


@pytest.mark.parametrize("name", list(_stat_series()))
def test_stat_tests_vs_statsmodels(name):
    x = _stat_series()[name]
    np.testing.assert_allclose(_core.tsa_acf(list(x)), stattools.acf(x, fft=False), rtol=0, atol=1e-10)
    np.testing.assert_allclose(_core.tsa_pacf(list(x)), stattools.pacf(x), rtol=0, atol=1e-10)
    np.testing.assert_allclose(_core.tsa_pacf(list(x), -1, "ywmle"), stattools.pacf(x, method="ywm"), atol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for reg in ("c", "ct", "ctt", "n"):
            for autolag in ("aic", "bic", "none"):
                ref = stattools.adfuller(x, regression=reg, autolag=None if autolag == "none" else autolag.upper())
                got = _core.tsa_adfuller(list(x), -1, reg, autolag)
                assert got["used_lag"] == ref[2] and got["nobs"] == ref[3], (reg, autolag)
                # ctt's trend^2 column (up to n^2) makes that regression ill-conditioned: 1e-9 there.
                tol = 1e-9 if reg == "ctt" else 1e-10
                np.testing.assert_allclose(got["statistic"], ref[0], rtol=tol, atol=tol)
                np.testing.assert_allclose(got["pvalue"], ref[1], rtol=tol, atol=1e-12)
                np.testing.assert_allclose(got["critical_values"], [ref[4][k] for k in ("1%", "5%", "10%")],
                                           rtol=1e-12)
                if autolag != "none":
                    np.testing.assert_allclose(got["icbest"], ref[5], rtol=1e-10)
        for reg in ("c", "ct"):
            for nlags, arg in ((-1, "auto"), (-2, "legacy"), (3, 3)):
                ref = stattools.kpss(x, regression=reg, nlags=arg)
                got = _core.tsa_kpss(list(x), reg, nlags)
                assert got["lags"] == ref[2]
                np.testing.assert_allclose(got["statistic"], ref[0], rtol=1e-10)
                np.testing.assert_allclose(got["pvalue"], ref[1], rtol=1e-10)


def test_cli_fit_forecast_and_tsa(cli, tmp_path):
    data = tmp_path / "air.csv"
    data.write_text("y\n" + "".join(f"{v:g}\n" for v in AIRLINE))
    model = tmp_path / "m.json"
    subprocess.run([cli, "fit", "--model", "exponential_smoothing", "--data", str(data), "--target", "y", "--param",
                    "trend=add", "--param", "seasonal=add", "--param", "seasonal_periods=12", "--out", str(model),
                    "--quiet"], check=True, capture_output=True)
    out = subprocess.run([cli, "forecast", "--model", str(model), "--steps", "18", "--alpha", "0.1"], check=True,
                         capture_output=True, text=True).stdout
    table = np.genfromtxt(io.StringIO(out), delimiter=",", names=True)
    ours = ml.ExponentialSmoothing(trend="add", seasonal="add", seasonal_periods=12).fit(AIRLINE)
    mean, lower, upper = ours.forecast(18, alpha=0.1)
    assert list(table["step"]) == list(range(1, 19))
    assert np.array_equal(table["mean"], mean) and np.array_equal(table["lower"], lower)  # 17 digits: exact
    assert np.array_equal(table["upper"], upper)
    pred = tmp_path / "p.csv"
    subprocess.run([cli, "predict", "--model", str(model), "--data", str(data), "--out", str(pred)], check=True,
                   capture_output=True)
    assert np.array_equal(np.loadtxt(pred, skiprows=1, dtype=np.float32), ours.predict())
    for test in ("adfuller", "kpss", "acf", "pacf"):
        r = subprocess.run([cli, "tsa", "--data", str(data), "--column", "y", "--test", test], check=True,
                           capture_output=True, text=True).stdout
        assert r.splitlines()[0] in ("name,value", "lag,value")
    r = subprocess.run([cli, "forecast", "--model", str(model), "--steps", "0"], capture_output=True, text=True)
    assert r.returncode == 2 and "steps" in r.stderr
    r = subprocess.run([cli, "forecast", "--model", str(model), "--steps", "3", "--alpha", "1.5"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "alpha" in r.stderr
