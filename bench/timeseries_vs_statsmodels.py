"""Time-series models and statistics: bitlearn against statsmodels, wall time per call.

Fits ExponentialSmoothing (airline series, 144 values, and a longer seasonal series) for several
trend / seasonal combinations, and runs acf, pacf, adfuller and kpss, each `repeat` times in both
libraries; prints the best time of each and the ratio statsmodels / bitlearn (> 1: bitlearn is
faster). Usage: PYTHONPATH=build/python build/venv/bin/python bench/timeseries_vs_statsmodels.py
"""
import pathlib
import time
import warnings

import numpy as np
from statsmodels.tsa import stattools
from statsmodels.tsa.holtwinters import ExponentialSmoothing as SmES

from bitlearn import _core, ml

# The monthly airline passenger totals 1949-1960 (Box and Jenkins' series G; 144 values).
AIRLINE = np.loadtxt(pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "timeseries" / "airline.csv",
                     skiprows=1)


def best(f, repeat):
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t)


def main(repeat=3):
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    n = 2000
    long = 100 + 0.05 * np.arange(n) + 10 * np.sin(2 * np.pi * np.arange(n) / 12) + rng.standard_normal(n)
    rows = []
    for label, y in (("airline", AIRLINE), ("seasonal n=2000", long)):
        for kw in (dict(), dict(trend="add"), dict(trend="add", seasonal="add", seasonal_periods=12),
                   dict(trend="add", damped_trend=True, seasonal="mul", seasonal_periods=12)):
            ours = best(lambda: ml.ExponentialSmoothing(**kw).fit(y).forecast(24), repeat)
            ref = best(lambda: SmES(y, trend=kw.get("trend"), seasonal=kw.get("seasonal"),
                                    seasonal_periods=kw.get("seasonal_periods"),
                                    damped_trend=kw.get("damped_trend", False)).fit().forecast(24), repeat)
            rows.append((f"exponential_smoothing {label} {kw}", ours, ref))
    # arima / sarimax: maximum likelihood and 24 forecasts; statsmodels' SARIMAX with the same explicit
    # differencing and the constant as a regression column, its default optimizer without the
    # parameter covariance (cov_type="none": bitlearn computes none).
    from statsmodels.tsa.statespace.sarimax import SARIMAX
    e = rng.standard_normal(n + 50)
    arma = np.zeros(n + 50)
    for t in range(2, n + 50):
        arma[t] = 0.5 * arma[t - 1] - 0.3 * arma[t - 2] + e[t] + 0.4 * e[t - 1]
    arma = 3.0 + arma[50:]
    for label, y, kw, order, sorder in (
            ("arima(2,0,1) c n=2000", arma, dict(p=2, q=1, trend="c"), (2, 0, 1), (0, 0, 0, 0)),
            ("sarimax(0,1,1)(0,1,1,12) log airline", np.log(AIRLINE),
             dict(p=0, d=1, q=1, seasonal_d=1, seasonal_q=1, s=12), (0, 1, 1), (0, 1, 1, 12)),
            ("sarimax(1,0,1)(1,0,1,12) c n=2000", long - long.mean(),
             dict(p=1, q=1, seasonal_p=1, seasonal_q=1, s=12, trend="c"), (1, 0, 1), (1, 0, 1, 12))):
        cls = ml.SARIMAX if "s" in kw else ml.ARIMA
        Z = np.ones((len(y), 1)) if kw.get("trend") == "c" else None
        Zf = np.ones((24, 1)) if Z is not None else None
        ours = best(lambda: cls(**kw).fit(y).forecast(24), repeat)
        ref = best(lambda: SARIMAX(y, exog=Z, order=order, seasonal_order=sorder, simple_differencing=True)
                   .fit(disp=False, cov_type="none").forecast(24, exog=Zf), repeat)
        rows.append((label, ours, ref))
    x = list(long)
    rows.append(("acf n=2000", best(lambda: _core.tsa_acf(x, 40), repeat),
                 best(lambda: stattools.acf(long, nlags=40), repeat)))
    rows.append(("pacf n=2000", best(lambda: _core.tsa_pacf(x, 40), repeat),
                 best(lambda: stattools.pacf(long, nlags=40), repeat)))
    rows.append(("adfuller n=2000", best(lambda: _core.tsa_adfuller(x), repeat),
                 best(lambda: stattools.adfuller(long), repeat)))
    rows.append(("kpss n=2000", best(lambda: _core.tsa_kpss(x), repeat),
                 best(lambda: stattools.kpss(long), repeat)))
    print(f"{'case':70s} {'bitlearn s':>11s} {'statsmodels s':>14s} {'ratio':>7s}")
    for name, a, b in rows:
        print(f"{name:70s} {a:11.4f} {b:14.4f} {b / a:7.2f}")


if __name__ == "__main__":
    main()
