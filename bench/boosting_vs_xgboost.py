#!/usr/bin/env python3
"""Fit time of bitlearn's histogram boosting against XGBoost (tree_method=hist) on the same data,
the same settings and the same thread count, **interleaved** (ours, XGBoost, ours, XGBoost, ...)
with repeats; prints the median of each side, the ratio xgboost_time / our_time (>= 1: ours as fast
or faster) and the load average before and after, so figures from a shared host can be judged.

    python3 bench/boosting_vs_xgboost.py --bin build/tools/ml_trees_bench/bitlearn_ml_trees_bench \\
        --rows 100000 1000000 --threads 1 --repeat 5

Settings on both sides: depth-wise growth, max depth 6, learning rate 0.1, 100 trees, L2 1,
min child weight 1, 256 bins (ours: 255 value bins + one for NaN); data make_classification /
make_regression (20 features, 10 informative, seed 0). Our time is the fit alone as timed inside
the bench program (data loading excluded); XGBoost's is fit() including its DMatrix construction
and quantile sketch, which is what a user of XGBClassifier pays (ours includes binning too).
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from trees_vs_peers import make_data, run_ours, save  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/tools/ml_trees_bench/bitlearn_ml_trees_bench")
    ap.add_argument("--rows", type=int, nargs="+", default=[100000])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tasks", nargs="+", default=["regression", "classification"])
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import xgboost as xgb
    ours_params = {"grow_policy": "depthwise", "max_depth": "6", "max_leaf_nodes": "none", "max_iter": "100",
                   "learning_rate": "0.1", "min_samples_leaf": "1", "min_child_weight": "1",
                   "l2_regularization": "1", "max_bins": "255"}
    xgb_params = dict(tree_method="hist", max_depth=6, learning_rate=0.1, n_estimators=100, n_jobs=args.threads,
                      max_bin=256, reg_lambda=1.0, min_child_weight=1.0)
    print("| task | rows | threads | ours median s | xgboost median s | ratio xgb/ours | ours runs | xgboost runs "
          "| our score | xgb score | load before / after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in args.rows:
            for task in args.tasks:
                Xtr, ytr, Xte, yte = make_data(rows, task)
                files = [save(tmp, k, a) for k, a in (("Xtr", Xtr), ("ytr", ytr), ("Xte", Xte), ("yte", yte))]
                model = "hist_gradient_boosting_regressor" if task == "regression" else "hist_gradient_boosting_classifier"
                make = xgb.XGBRegressor if task == "regression" else xgb.XGBClassifier
                load0 = os.getloadavg()[0]
                ours_t, peer_t = [], []
                ours = peer_score = None
                for _ in range(args.repeat):
                    ours = run_ours(args.bin, model, files, ours_params, args.threads)
                    ours_t.append(ours["fit_s"])
                    est = make(**xgb_params)
                    t0 = time.perf_counter()
                    est.fit(Xtr, ytr)
                    peer_t.append(time.perf_counter() - t0)
                    peer_score = est.score(Xte, yte)
                load1 = os.getloadavg()[0]
                mo, mp = statistics.median(ours_t), statistics.median(peer_t)
                print("| %s | %d | %d | %.3f | %.3f | **%.2f** | %s | %s | %.4f | %.4f | %.1f / %.1f |" % (
                    task, rows, args.threads, mo, mp, mp / mo, " ".join("%.2f" % t for t in ours_t),
                    " ".join("%.2f" % t for t in peer_t), ours["score"], peer_score, load0, load1))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
