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

    --lightgbm      adds LightGBM (the same settings in its terms: num_leaves 63 with max_depth 6,
                    min_child_samples 1, min_sum_hessian_in_leaf 1, lambda_l2 1, max_bin 255) to
                    the rotation and a ratio lightgbm_time / our_time.
    --baseline BIN  adds a second build of our bench program (an older commit, say) to the
                    rotation, so before / after figures come from the same minutes of load.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from trees_vs_peers import make_data, run_ours, save  # noqa: E402


def fit_peer(make, params, Xtr, ytr, Xte, yte):
    est = make(**params)
    t0 = time.perf_counter()
    est.fit(Xtr, ytr)
    elapsed = time.perf_counter() - t0
    return elapsed, est.score(Xte, yte)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/tools/ml_trees_bench/bitlearn_ml_trees_bench")
    ap.add_argument("--baseline", default=None, help="a second bench program (e.g. an older build)")
    ap.add_argument("--lightgbm", action="store_true", help="add LightGBM to the rotation")
    ap.add_argument("--rows", type=int, nargs="+", default=[100000])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tasks", nargs="+", default=["regression", "classification"])
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import xgboost as xgb
    lgb = None
    if args.lightgbm:
        import lightgbm as lgb
    ours_params = {"grow_policy": "depthwise", "max_depth": "6", "max_leaf_nodes": "none", "max_iter": "100",
                   "learning_rate": "0.1", "min_samples_leaf": "1", "min_child_weight": "1",
                   "l2_regularization": "1", "max_bins": "255"}
    xgb_params = dict(tree_method="hist", max_depth=6, learning_rate=0.1, n_estimators=100, n_jobs=args.threads,
                      max_bin=256, reg_lambda=1.0, min_child_weight=1.0)
    lgb_params = dict(n_estimators=100, learning_rate=0.1, num_leaves=63, max_depth=6, min_child_samples=1,
                      min_sum_hessian_in_leaf=1.0, reg_lambda=1.0, max_bin=255, n_jobs=args.threads, verbose=-1)
    head = "| task | rows | threads | ours median s | xgboost median s | ratio xgb/ours |"
    if lgb:
        head += " lightgbm median s | ratio lgb/ours |"
    if args.baseline:
        head += " baseline median s | speed-up baseline/ours |"
    head += " ours runs | xgboost runs | our score | xgb score | load before / after |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    with tempfile.TemporaryDirectory() as tmp:
        for rows in args.rows:
            for task in args.tasks:
                Xtr, ytr, Xte, yte = make_data(rows, task)
                files = [save(tmp, k, a) for k, a in (("Xtr", Xtr), ("ytr", ytr), ("Xte", Xte), ("yte", yte))]
                model = "hist_gradient_boosting_regressor" if task == "regression" else "hist_gradient_boosting_classifier"
                make = xgb.XGBRegressor if task == "regression" else xgb.XGBClassifier
                load0 = os.getloadavg()[0]
                ours_t, peer_t, lgb_t, base_t = [], [], [], []
                ours = peer_score = None
                for _ in range(args.repeat):
                    ours = run_ours(args.bin, model, files, ours_params, args.threads)
                    ours_t.append(ours["fit_s"])
                    t, peer_score = fit_peer(make, xgb_params, Xtr, ytr, Xte, yte)
                    peer_t.append(t)
                    if lgb:
                        lmake = lgb.LGBMRegressor if task == "regression" else lgb.LGBMClassifier
                        lgb_t.append(fit_peer(lmake, lgb_params, Xtr, ytr, Xte, yte)[0])
                    if args.baseline:
                        base = run_ours(args.baseline, model, files, ours_params, args.threads)
                        base_t.append(base["fit_s"])
                        if base["model_sha256"] != ours["model_sha256"]:
                            print("WARNING: the baseline's model SHA-256 differs from ours")
                load1 = os.getloadavg()[0]
                mo, mp = statistics.median(ours_t), statistics.median(peer_t)
                line = "| %s | %d | %d | %.3f | %.3f | **%.2f** |" % (task, rows, args.threads, mo, mp, mp / mo)
                if lgb:
                    ml = statistics.median(lgb_t)
                    line += " %.3f | **%.2f** |" % (ml, ml / mo)
                if args.baseline:
                    mb = statistics.median(base_t)
                    line += " %.3f | %.2f |" % (mb, mb / mo)
                line += " %s | %s | %.4f | %.4f | %.1f / %.1f |" % (
                    " ".join("%.2f" % t for t in ours_t), " ".join("%.2f" % t for t in peer_t), ours["score"],
                    peer_score, load0, load1)
                print(line)
                sys.stdout.flush()


if __name__ == "__main__":
    main()
