#!/usr/bin/env python3
"""Fit time and test NDCG@10 of bitlearn's hist_gradient_boosting_ranker (lambdarank) against
LightGBM's LGBMRanker on the same generated data, the same settings and the same thread count,
interleaved (ours, LightGBM, ours, ...) with repeats; prints the medians, the ratio
lightgbm_time / our_time (>= 1: ours as fast or faster) and the load average before and after.

    PYTHONPATH=build/python build/venv/bin/python bench/ranking_bench.py --queries 5000 --threads 2

Data: queries of 20 rows, 10 features of normals, relevance 0 .. 4 from a noisy nonlinear function
of four of them. Settings: 100 trees, learning rate 0.1, 31 leaves, 20 rows per leaf, no L2, 255
bins, truncation level 30, sigmoid 1.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))
from test_hgb_ranking_peer import COMMON, N_DOCS, mean_ndcg, ranking_data  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import lightgbm

    from bitlearn import ml

    (X, y, q), (Xt, yt, qt) = ranking_data(args.queries, 0), ranking_data(max(200, args.queries // 5), 1)
    print(f"rows {len(X)} ({args.queries} queries x {N_DOCS}), threads {args.threads}, "
          f"load before {os.getloadavg()[0]:.2f}")
    times = {"bitlearn": [], "lightgbm": []}
    ndcg = {}
    for _ in range(args.repeat):
        ours = ml.HistGradientBoostingRanker(**COMMON, loss="lambdarank", n_jobs=args.threads)
        t0 = time.perf_counter()
        ours.fit(X, y, group=q)
        times["bitlearn"].append(time.perf_counter() - t0)
        ndcg["bitlearn"] = mean_ndcg(ours.predict(Xt), yt, qt, 10)
        theirs = lightgbm.LGBMRanker(objective="lambdarank", n_estimators=100, learning_rate=0.1, num_leaves=31,
                                     min_child_samples=20, min_child_weight=1e-3, reg_lambda=0.0, max_bin=255,
                                     lambdarank_truncation_level=30, sigmoid=1.0, verbose=-1, n_jobs=args.threads)
        t0 = time.perf_counter()
        theirs.fit(X, y, group=np.full(args.queries, N_DOCS))
        times["lightgbm"].append(time.perf_counter() - t0)
        ndcg["lightgbm"] = mean_ndcg(theirs.predict(Xt), yt, qt, 10)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k in times:
        print(f"{k:9s} fit median {med[k]:.3f} s  (runs {', '.join(f'{t:.3f}' for t in times[k])})  "
              f"test NDCG@10 {ndcg[k]:.4f}")
    print(f"ratio lightgbm_time / our_time = {med['lightgbm'] / med['bitlearn']:.3f}; "
          f"load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
