#!/usr/bin/env python3
"""Fit time of bitlearn's linear (both waves) / cluster / neighbors / decomposition / naive Bayes estimators against
scikit-learn on the same data and the same number of threads; prints the ratio
sklearn_time / bitlearn_time (>= 1 means bitlearn is as fast or faster) and each side's test metric.

    python3 bench/ml_vs_sklearn.py --bin build/bitlearn --rows 100000 1000000 --threads 2 [--only kmeans]

bitlearn's time is the fit alone (the `fit ... in X s` line of `bitlearn fit`, CSV parsing
excluded); scikit-learn's is model.fit under threadpoolctl's limit. k-NN and radius neighbors have no real fit in either
library, so its row times predict of 10^4 query rows (bitlearn through `bitlearn predict`, whose
time then includes reading the CSV; reported as such). The two libraries run interleaved (ours,
theirs, ours, ...) --repeat times; each figure is the median.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn import (cluster, datasets, decomposition, discriminant_analysis, gaussian_process,
                     kernel_approximation, kernel_ridge, linear_model, manifold, mixture, naive_bayes, neighbors,
                     neural_network, preprocessing, svm)
from sklearn.metrics import accuracy_score, d2_tweedie_score, mean_pinball_loss, r2_score
from threadpoolctl import threadpool_limits

D = 20


def data(kind, n, seed=0):
    if kind == "reg":
        X, y = datasets.make_regression(n_samples=n, n_features=D, n_informative=10, noise=10.0, random_state=seed)
    elif kind == "bin":
        X, y = datasets.make_classification(n_samples=n, n_features=D, n_informative=10, random_state=seed)
    elif kind == "multi":
        X, y = datasets.make_classification(n_samples=n, n_features=D, n_informative=10, n_classes=3,
                                            random_state=seed)
    elif kind == "multi6":  # low dimension, where the kd-tree searches pay
        X, y = datasets.make_classification(n_samples=n, n_features=6, n_informative=4, n_classes=3,
                                            random_state=seed)
    elif kind in ("word_counts", "categories"):  # three classes with their own Poisson rates per feature
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 3, size=n)
        X = rng.poisson(rng.gamma(1.0, 1.5, size=(3, D))[y])
        if kind == "categories":  # categories 0..5, each seen in training
            X = np.minimum(X, 5)
    elif kind in ("counts", "positive"):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, D))
        mu = np.exp(X @ rng.normal(scale=0.15, size=D) + 0.5)
        y = rng.poisson(mu) if kind == "counts" else rng.gamma(shape=2.0, scale=mu / 2.0)
    else:
        X, y = datasets.make_blobs(n_samples=n, n_features=D, centers=8, random_state=seed)
    return X.astype(np.float32), y.astype(np.float32)


CASES = {
    # name: (data kind, bitlearn estimator, params, sklearn model factory, metric)
    "linear_regression": ("reg", "linear_regression", {}, lambda: linear_model.LinearRegression(), "r2"),
    "ridge": ("reg", "ridge", {"alpha": "1"}, lambda: linear_model.Ridge(alpha=1.0), "r2"),
    "lasso": ("reg", "lasso", {"alpha": "0.1"}, lambda: linear_model.Lasso(alpha=0.1), "r2"),
    "elastic_net": ("reg", "elastic_net", {"alpha": "0.1", "l1_ratio": "0.5"},
                    lambda: linear_model.ElasticNet(alpha=0.1, l1_ratio=0.5), "r2"),
    "logistic_binary": ("bin", "logistic_regression", {"C": "1"},
                        lambda: linear_model.LogisticRegression(C=1.0), "accuracy"),
    "logistic_multinomial": ("multi", "logistic_regression", {"C": "1"},
                             lambda: linear_model.LogisticRegression(C=1.0), "accuracy"),
    "sgd_classifier": ("bin", "sgd_classifier", {}, lambda: linear_model.SGDClassifier(random_state=0), "accuracy"),
    "sgd_classifier_log": ("multi", "sgd_classifier", {"loss": "log_loss"},
                           lambda: linear_model.SGDClassifier(loss="log_loss", random_state=0), "accuracy"),
    "sgd_regressor": ("reg", "sgd_regressor", {}, lambda: linear_model.SGDRegressor(random_state=0), "r2"),
    "huber_regressor": ("reg", "huber_regressor", {}, lambda: linear_model.HuberRegressor(), "r2"),
    "quantile_regressor": ("reg", "quantile_regressor", {"quantile": "0.8", "alpha": "0.01"},
                           lambda: linear_model.QuantileRegressor(quantile=0.8, alpha=0.01), "pinball"),
    "poisson_regressor": ("counts", "poisson_regressor", {"alpha": "0.01"},
                          lambda: linear_model.PoissonRegressor(alpha=0.01), "d2"),
    "gamma_regressor": ("positive", "gamma_regressor", {"alpha": "0.01"},
                        lambda: linear_model.GammaRegressor(alpha=0.01), "d2"),
    "tweedie_regressor": ("counts", "tweedie_regressor", {"power": "1.5", "alpha": "0.01"},
                          lambda: linear_model.TweedieRegressor(power=1.5, alpha=0.01), "d2"),
    "ard_regression": ("reg", "ard_regression", {}, lambda: linear_model.ARDRegression(), "r2"),
    "lars": ("reg", "lars", {}, lambda: linear_model.Lars(), "r2"),
    "lasso_lars": ("reg", "lasso_lars", {"alpha": "0.1"}, lambda: linear_model.LassoLars(alpha=0.1), "r2"),
    "kmeans": ("blobs", "kmeans", {"n_clusters": "8"},
               lambda: cluster.KMeans(n_clusters=8, n_init=1, random_state=0), "inertia"),
    "minibatch_kmeans": ("blobs", "minibatch_kmeans", {"n_clusters": "8"},
                         lambda: cluster.MiniBatchKMeans(n_clusters=8, n_init=1, random_state=0), "inertia"),
    "pca": ("reg", "pca", {}, lambda: decomposition.PCA(), "none"),
    "truncated_svd": ("reg", "truncated_svd", {"n_components": "5"},
                      lambda: decomposition.TruncatedSVD(n_components=5, random_state=0), "none"),
    "truncated_svd_arpack": ("reg", "truncated_svd", {"n_components": "5", "algorithm": "arpack"},
                             lambda: decomposition.TruncatedSVD(n_components=5, algorithm="arpack"), "none"),
    "kernel_pca": ("reg", "kernel_pca", {"kernel": "rbf", "gamma": "0.05", "n_components": "5"},
                   lambda: decomposition.KernelPCA(kernel="rbf", gamma=0.05, n_components=5), "none"),
    "factor_analysis": ("reg", "factor_analysis", {"n_components": "5"},
                        lambda: decomposition.FactorAnalysis(n_components=5, svd_method="lapack"), "none"),
    "incremental_pca": ("reg", "incremental_pca", {"n_components": "5"},
                        lambda: decomposition.IncrementalPCA(n_components=5), "none"),
    # fast_ica: 50 iterations in both (tol=0; the two start from other random numbers, so their
    # convergence counts would differ).
    "fast_ica": ("reg", "fast_ica", {"n_components": "5", "max_iter": "50", "tol": "0"},
                 lambda: decomposition.FastICA(n_components=5, max_iter=50, tol=0.0, random_state=0), "none"),
    "isomap": ("reg", "isomap", {"n_neighbors": "10"},
               lambda: manifold.Isomap(n_neighbors=10), "none"),
    "mds": ("reg", "mds", {"init": "classical_mds"},
            lambda: manifold.MDS(init="classical_mds", n_init=1), "none"),
    "spectral_embedding": ("reg", "spectral_embedding", {"n_neighbors": "10"},
                           lambda: manifold.SpectralEmbedding(n_neighbors=10, random_state=0), "none"),
    "locally_linear_embedding": ("reg", "locally_linear_embedding", {"n_neighbors": "10"},
                                 lambda: manifold.LocallyLinearEmbedding(n_neighbors=10, random_state=0), "none"),
    # tsne: method="exact" in both (bitlearn's default), 1000 iterations of n^2 work.
    "tsne": ("reg", "tsne", {}, lambda: manifold.TSNE(method="exact", random_state=0), "none"),
    # tsne_barnes_hut: method="barnes_hut" (angle=0.5) in both, 1000 iterations of n log n tree work;
    # bitlearn's neighbors are exact (n^2 distances), scikit-learn's from its ball tree.
    "tsne_barnes_hut": ("blobs", "tsne", {"method": "barnes_hut"},
                        lambda: manifold.TSNE(method="barnes_hut", random_state=0), "none"),
    # umap: against umap-learn's UMAP (random_state=0 in both: its single-threaded layout, as
    # bitlearn's); umap-learn's numba functions are compiled once beforehand (_umap_learn).
    "umap": ("blobs", "umap", {}, lambda: _umap_learn(), "none"),
    "nmf_cd": ("word_counts", "nmf", {"n_components": "5"},
               lambda: decomposition.NMF(n_components=5, random_state=0), "none"),
    "nmf_mu": ("word_counts", "nmf", {"n_components": "5", "solver": "mu"},
               lambda: decomposition.NMF(n_components=5, solver="mu", random_state=0), "none"),
    # dictionary_learning / sparse_pca: coordinate descent in both, 20 iterations (tol=0; scikit-learn
    # codes each row by its own Lasso fit, minutes at 10^4 rows to convergence).
    "dictionary_learning": ("reg", "dictionary_learning",
                            {"n_components": "5", "max_iter": "20", "tol": "0", "transform_algorithm": "lasso_cd"},
                            lambda: decomposition.DictionaryLearning(n_components=5, fit_algorithm="cd", max_iter=20,
                                                                     tol=0.0, transform_algorithm="lasso_cd",
                                                                     random_state=0), "none"),
    "sparse_pca": ("reg", "sparse_pca", {"n_components": "5", "max_iter": "20", "tol": "0"},
                   lambda: decomposition.SparsePCA(n_components=5, method="cd", max_iter=20, tol=0.0, random_state=0),
                   "none"),
    "latent_dirichlet_allocation": ("word_counts", "latent_dirichlet_allocation", {"n_components": "5"},
                                    lambda: decomposition.LatentDirichletAllocation(
                                        n_components=5, learning_method="batch", random_state=0), "none"),
    "latent_dirichlet_allocation_online": ("word_counts", "latent_dirichlet_allocation",
                                           {"n_components": "5", "learning_method": "online"},
                                           lambda: decomposition.LatentDirichletAllocation(
                                               n_components=5, learning_method="online", random_state=0), "none"),
    "kneighbors_classifier": ("multi", "kneighbors_classifier", {"n_neighbors": "5"},
                              lambda: neighbors.KNeighborsClassifier(n_neighbors=5, algorithm="brute"),
                              "accuracy"),
    "kneighbors_manhattan": ("multi", "kneighbors_classifier", {"n_neighbors": "5", "metric": "manhattan"},
                             lambda: neighbors.KNeighborsClassifier(n_neighbors=5, metric="manhattan",
                                                                    algorithm="brute"), "accuracy"),
    "kneighbors_cosine": ("multi", "kneighbors_classifier", {"n_neighbors": "5", "metric": "cosine"},
                          lambda: neighbors.KNeighborsClassifier(n_neighbors=5, metric="cosine",
                                                                 algorithm="brute"), "accuracy"),
    # 6 features: the kd-tree on both sides (bitlearn's gives the brute force's bits), and our
    # brute force against scikit-learn's kd-tree for our kd-tree / brute ratio.
    "kneighbors_kd_tree": ("multi6", "kneighbors_classifier", {"n_neighbors": "5", "algorithm": "kd_tree"},
                           lambda: neighbors.KNeighborsClassifier(n_neighbors=5, algorithm="kd_tree"), "accuracy"),
    "kneighbors_brute_6d": ("multi6", "kneighbors_classifier", {"n_neighbors": "5", "algorithm": "brute"},
                            lambda: neighbors.KNeighborsClassifier(n_neighbors=5, algorithm="kd_tree"), "accuracy"),
    "gaussian_nb": ("multi", "gaussian_nb", {}, lambda: naive_bayes.GaussianNB(), "accuracy"),
    "multinomial_nb": ("word_counts", "multinomial_nb", {}, lambda: naive_bayes.MultinomialNB(), "accuracy"),
    "complement_nb": ("word_counts", "complement_nb", {}, lambda: naive_bayes.ComplementNB(), "accuracy"),
    "bernoulli_nb": ("word_counts", "bernoulli_nb", {"binarize": "1"},
                     lambda: naive_bayes.BernoulliNB(binarize=1.0), "accuracy"),
    "categorical_nb": ("categories", "categorical_nb", {}, lambda: naive_bayes.CategoricalNB(), "accuracy"),
    "nearest_centroid": ("multi", "nearest_centroid", {}, lambda: neighbors.NearestCentroid(), "accuracy"),
    "linear_discriminant_analysis": ("multi", "linear_discriminant_analysis", {},
                                     lambda: discriminant_analysis.LinearDiscriminantAnalysis(), "accuracy"),
    # make_classification's redundant features are collinear: reg_param keeps the covariances regular.
    "quadratic_discriminant_analysis": ("multi", "quadratic_discriminant_analysis", {"reg_param": "0.01"},
                                        lambda: discriminant_analysis.QuadraticDiscriminantAnalysis(reg_param=0.01),
                                        "accuracy"),
    "kernel_ridge": ("reg", "kernel_ridge", {"kernel": "rbf", "alpha": "1"},
                     lambda: kernel_ridge.KernelRidge(kernel="rbf", alpha=1.0), "r2"),
    "dbscan": ("blobs", "dbscan", {"eps": "3", "min_samples": "5"},
               lambda: cluster.DBSCAN(eps=3.0, min_samples=5), "none"),
    "gaussian_mixture_full": ("blobs", "gaussian_mixture", {"n_components": "8"},
                              lambda: mixture.GaussianMixture(n_components=8, random_state=0), "none"),
    "gaussian_mixture_diag": ("blobs", "gaussian_mixture", {"n_components": "8", "covariance_type": "diag"},
                              lambda: mixture.GaussianMixture(n_components=8, covariance_type="diag",
                                                              random_state=0), "none"),
    "spectral_clustering": ("blobs", "spectral_clustering", {"n_clusters": "8", "gamma": "0.01"},
                            lambda: cluster.SpectralClustering(n_clusters=8, gamma=0.01, random_state=0), "none"),
    "bayesian_gaussian_mixture": ("blobs", "bayesian_gaussian_mixture", {"n_components": "8"},
                                  lambda: mixture.BayesianGaussianMixture(n_components=8, random_state=0), "none"),
    "radius_neighbors_classifier": ("multi", "radius_neighbors_classifier",
                                    {"radius": "6", "outlier_label": "most_frequent"},
                                    lambda: neighbors.RadiusNeighborsClassifier(
                                        radius=6.0, outlier_label="most_frequent", algorithm="brute"),
                                    "accuracy"),
    "local_outlier_factor": ("blobs", "local_outlier_factor", {"n_neighbors": "20"},
                             lambda: neighbors.LocalOutlierFactor(n_neighbors=20, novelty=True), "none"),
    "svc": ("multi", "svc", {}, lambda: svm.SVC(), "accuracy"),
    "svr": ("reg", "svr", {"C": "100"}, lambda: svm.SVR(C=100.0), "r2"),
    "linear_svc": ("multi", "linear_svc", {}, lambda: svm.LinearSVC(dual=True), "accuracy"),
    "linear_svr": ("reg", "linear_svr", {"C": "10"}, lambda: svm.LinearSVR(C=10.0, dual=True), "r2"),
    "gaussian_process_classifier": ("bin", "gaussian_process_classifier", {"kernel": "1.0 * RBF(3.0)"},
                                    lambda: gaussian_process.GaussianProcessClassifier(
                                        gaussian_process.kernels.ConstantKernel(1.0)
                                        * gaussian_process.kernels.RBF(3.0), random_state=0), "accuracy"),
    "bisecting_kmeans": ("blobs", "bisecting_kmeans", {"n_clusters": "8"},
                         lambda: cluster.BisectingKMeans(n_clusters=8, random_state=0), "none"),
    "rbf_sampler": ("reg", "rbf_sampler", {"gamma": "0.05", "n_components": "500"},
                    lambda: kernel_approximation.RBFSampler(gamma=0.05, n_components=500, random_state=0), "none"),
    "agglomerative_ward": ("blobs", "agglomerative_clustering", {"n_clusters": "8"},
                           lambda: cluster.AgglomerativeClustering(n_clusters=8), "none"),
    "agglomerative_single": ("blobs", "agglomerative_clustering", {"n_clusters": "8", "linkage": "single"},
                             lambda: cluster.AgglomerativeClustering(n_clusters=8, linkage="single"), "none"),
    "mean_shift": ("blobs", "mean_shift", {"bandwidth": "5"}, lambda: cluster.MeanShift(bandwidth=5.0), "none"),
    "optics": ("blobs", "optics", {"min_samples": "10"}, lambda: cluster.OPTICS(min_samples=10), "none"),
    "hdbscan": ("blobs", "hdbscan", {"min_cluster_size": "20"},
                lambda: cluster.HDBSCAN(min_cluster_size=20, copy=True), "none"),
    "affinity_propagation": ("blobs", "affinity_propagation", {},
                             lambda: cluster.AffinityPropagation(random_state=0), "none"),
    "birch": ("blobs", "birch", {"threshold": "3", "n_clusters": "8"},
              lambda: cluster.Birch(threshold=3.0, n_clusters=8), "none"),
    "one_class_svm": ("blobs", "one_class_svm", {"nu": "0.1"}, lambda: svm.OneClassSVM(nu=0.1), "none"),
    "nystroem": ("reg", "nystroem", {"gamma": "0.05", "n_components": "500"},
                 lambda: kernel_approximation.Nystroem(gamma=0.05, n_components=500, random_state=0), "none"),
    # 20 epochs each (n_iter_no_change = max_iter: no early stop), batches of 200.
    "mlp_classifier": ("multi", "mlp_classifier", {"hidden_layer_sizes": "64", "max_iter": "20", "n_iter_no_change": "20"},
                       lambda: neural_network.MLPClassifier(hidden_layer_sizes=(64,), max_iter=20, n_iter_no_change=20,
                                                            random_state=0), "accuracy"),
    "mlp_regressor": ("reg", "mlp_regressor", {"hidden_layer_sizes": "64", "max_iter": "20", "n_iter_no_change": "20",
                                               "learning_rate_init": "0.01"},
                      lambda: neural_network.MLPRegressor(hidden_layer_sizes=(64,), max_iter=20, n_iter_no_change=20,
                                                          learning_rate_init=0.01, random_state=0), "r2"),
    # Preprocessing: the fit computes the column statistics (robust_scaler: sorts every column).
    "standard_scaler": ("reg", "standard_scaler", {}, lambda: preprocessing.StandardScaler(), "none"),
    "min_max_scaler": ("reg", "min_max_scaler", {}, lambda: preprocessing.MinMaxScaler(), "none"),
    "max_abs_scaler": ("reg", "max_abs_scaler", {}, lambda: preprocessing.MaxAbsScaler(), "none"),
    "robust_scaler": ("reg", "robust_scaler", {}, lambda: preprocessing.RobustScaler(), "none"),
    # quantile_transformer: every column sorted (no subsampling on either side); power_transformer: a
    # bounded Brent search of lambda per column (yeo-johnson).
    "quantile_transformer": ("reg", "quantile_transformer", {},
                             lambda: preprocessing.QuantileTransformer(subsample=None), "none"),
    "power_transformer": ("reg", "power_transformer", {}, lambda: preprocessing.PowerTransformer(), "none"),
    # spline_transformer: the fit finds each column's knots (uniform: its range); target_encoder: the
    # per-category target statistics of 20 category columns (fitted with the target, "fit" metric).
    "spline_transformer": ("reg", "spline_transformer", {}, lambda: preprocessing.SplineTransformer(), "none"),
    "target_encoder": ("categories", "target_encoder", {"target_type": "continuous"},
                       lambda: preprocessing.TargetEncoder(target_type="continuous"), "fit"),
}


# Cases skipped above this many rows: scikit-learn's QuantileRegressor (HiGHS LP: 4.5 min at 2*10^4
# rows on the 2-core machine) and ARDRegression take minutes there.
MAX_ROWS = {"quantile_regressor": 5000, "ard_regression": 200000,
            # kernel_ridge: an [n, n] kernel matrix (bitlearn fits at most 8192 rows); dbscan,
            # radius neighbors, LOF: all pairs (brute force) against scikit-learn's tree search.
            "kernel_ridge": 5000, "dbscan": 100000, "radius_neighbors_classifier": 100000,
            "local_outlier_factor": 100000,
            # latent_dirichlet_allocation: scikit-learn's batch E-step takes about 2 s per 1000 rows.
            "latent_dirichlet_allocation": 10000, "latent_dirichlet_allocation_online": 10000,
            # svc / svr: the full kernel matrix on the host (bitlearn fits at most 16384 rows).
            "svc": 10000, "svr": 10000, "one_class_svm": 10000,
            # gaussian_process_classifier: O(n^3) Laplace steps per likelihood evaluation in both (length
            # scale started at 3: from 1, on these 20 features, the gradient leads both optimizers
            # towards a flat region of vanishing constant, where they can stop apart).
            "gaussian_process_classifier": 1000,
            # agglomerative, mean shift: all pairs or all seeds (scikit-learn's too: minutes beyond).
            "agglomerative_ward": 10000, "agglomerative_single": 10000, "mean_shift": 10000,
            # optics: scikit-learn's takes about 40 s at 2000 rows (a radius query per row); hdbscan:
            # all pairs on the host; affinity propagation: n x n messages (bitlearn fits at most
            # 4096 rows).
            "optics": 2000, "hdbscan": 10000, "affinity_propagation": 4000,
            # spectral_clustering: a dense n x n eigen-decomposition (bitlearn's at most 4096 rows).
            "spectral_clustering": 1000,
            # kernel_pca: a dense n x n eigen-decomposition (bitlearn's at most 4096 rows).
            "kernel_pca": 2000,
            # mds: n x n dissimilarities, 300 SMACOF iterations of n^2 work in both (bitlearn's at most
            # 4096 rows).
            "mds": 2000,
            # isomap: n x n geodesic distances (bitlearn's at most 4096 rows).
            "isomap": 4000,
            # spectral_embedding, locally_linear_embedding: a dense n x n eigen-decomposition
            # (bitlearn's at most 4096 rows).
            "spectral_embedding": 4000, "locally_linear_embedding": 4000,
            # tsne (exact): n x n probabilities and 1000 gradient steps of n^2 work in both.
            "tsne": 1000,
            # tsne (barnes_hut): exact neighbors here (n^2 distances), 1000 tree iterations in both.
            "tsne_barnes_hut": 10000,
            # mlp: 20 epochs of mini-batches; a million rows takes minutes in both.
            "mlp_classifier": 100000, "mlp_regressor": 100000}


_UMAP_WARM = []


def _umap_learn():
    """umap-learn's UMAP(random_state=0), after one fit of 300 rows that compiles its numba code."""
    import umap
    if not _UMAP_WARM:
        umap.UMAP(random_state=0).fit(datasets.make_blobs(300, n_features=D, random_state=1)[0])
        _UMAP_WARM.append(True)
    return umap.UMAP(random_state=0)


def write_csv(path, X, y=None):
    cols = [f"f{j}" for j in range(X.shape[1])]
    M = X if y is None else np.column_stack([X, y])
    if y is not None:
        cols.append("target")
    np.savetxt(path, M, delimiter=",", header=",".join(cols), comments="", fmt="%.9g")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(" ".join(cmd) + "\n" + r.stderr)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bitlearn")
    ap.add_argument("--rows", type=int, nargs="+", default=[100000, 1000000])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bl_mlbench_")
    print(f"threads {args.threads}, {D} features, median of {args.repeat} interleaved runs; ratio = sklearn / bitlearn")
    print(f"{'case':32s} {'rows':>8s} {'bitlearn s':>10s} {'sklearn s':>10s} {'ratio':>6s}  metric (bitlearn / sklearn)")
    for n in args.rows:
        for name, (kind, est, params, factory, metric) in CASES.items():
            if args.only and name not in args.only:
                continue
            if n > MAX_ROWS.get(name, n):
                print(f"{name:32s} {n:8d} skipped (scikit-learn takes minutes beyond {MAX_ROWS[name]} rows)", flush=True)
                continue
            X, y = data(kind, n + 10000)
            Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
            unsup = metric in ("inertia", "none")
            train = os.path.join(tmp, f"{kind}_{n}.csv")
            test = os.path.join(tmp, f"{kind}_{n}_test.csv")
            if not os.path.exists(train):
                write_csv(train, Xtr, ytr)
                write_csv(test, Xte, yte)
            model_path = os.path.join(tmp, "model.json")
            pred_path = os.path.join(tmp, "pred.csv")
            cmd = [args.bin, "fit", "--model", est, "--data", train, "--out", model_path,
                   "--threads", str(args.threads)]
            cmd += [] if unsup else ["--target", "target"]
            for k, v in params.items():
                cmd += ["--param", f"{k}={v}"]
            knn = name.startswith(("kneighbors", "radius_neighbors"))
            ours, theirs = [], []
            for _ in range(args.repeat):  # interleaved: ours, then scikit-learn, --repeat times
                if knn:
                    run(cmd)
                    t0 = time.perf_counter()
                    run([args.bin, "predict", "--model", model_path, "--data", test, "--out", pred_path,
                         "--threads", str(args.threads)])
                    ours.append(time.perf_counter() - t0)
                else:
                    r = run(cmd)
                    ours.append(float(re.search(r" in ([0-9.]+) s", r.stderr).group(1)))
                with threadpool_limits(args.threads):
                    m = factory()
                    if knn:
                        m.fit(Xtr.astype(np.float64), ytr)
                        t0 = time.perf_counter()
                        sk_pred = m.predict(Xte.astype(np.float64))
                    else:
                        t0 = time.perf_counter()
                        if unsup:
                            m.fit(Xtr)
                        else:
                            m.fit(Xtr, ytr)
                    theirs.append(time.perf_counter() - t0)
            metric_text = ""
            if metric in ("r2", "accuracy", "d2", "pinball"):
                if not knn:
                    run([args.bin, "predict", "--model", model_path, "--data", test, "--out", pred_path])
                    sk_pred = m.predict(Xte)
                ours_pred = np.loadtxt(pred_path, delimiter=",", skiprows=1)
                if metric == "d2":
                    power = {"poisson_regressor": 1.0, "gamma_regressor": 2.0}.get(est, getattr(m, "power", 0.0))
                    f = lambda a, b: d2_tweedie_score(a, b, power=power)
                elif metric == "pinball":
                    f = lambda a, b: mean_pinball_loss(a, b, alpha=m.quantile)
                else:
                    f = r2_score if metric == "r2" else accuracy_score
                metric_text = f"{metric} {f(yte, ours_pred):.4f} / {f(yte, sk_pred):.4f}"
            elif metric == "inertia":
                import json
                with open(model_path) as fh:
                    st = json.load(fh)["state"]
                ours_inertia = np.frombuffer(bytes.fromhex(st["inertia"]), dtype="<f4")[0]
                metric_text = f"inertia {ours_inertia:.5g} / {m.inertia_:.5g}"
            label = name + (" (predict 1e4)" if knn else "")
            mo, mt = float(np.median(ours)), float(np.median(theirs))
            # A fit below the timer's resolution has no meaningful ratio.
            ratio = f"{mt / mo:6.2f}" if mo > 0 else f"{'-':>6s}"
            print(f"{label:32s} {n:8d} {mo:10.3f} {mt:10.3f} {ratio}  {metric_text}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
