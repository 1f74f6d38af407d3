"""scikit-learn-style estimators over bitlearn's registry (include/bitlearn/ml/estimator.h).

Every registry estimator has a class here under scikit-learn's name (``ridge`` -> ``Ridge``,
``hist_gradient_boosting_classifier`` -> ``HistGradientBoostingClassifier``, ...). The classes
follow scikit-learn's conventions: constructor parameters are stored as given, ``get_params`` /
``set_params`` come from ``sklearn.base.BaseEstimator``, ``fit`` returns self, fitted attributes
end with an underscore. The computation is the C++ estimator's: the same model file bytes and the
same predictions as ``bitlearn fit`` / ``bitlearn predict`` on the same data.

Data are converted to float32 C-contiguous arrays (bitlearn computes in float32); classifier
labels may be of any type scikit-learn accepts. ``device="cuda"`` fits on the GPU where the
estimator supports it; ``n_jobs`` sets the CPU thread count (the results do not depend on it).
Pickling goes through the model file text.
"""
import json
import os
import warnings

import numpy as np

from . import _core
from ._core import Tensor

try:
    from sklearn.base import (BaseEstimator, ClassifierMixin, ClusterMixin, DensityMixin, OutlierMixin,
                              RegressorMixin, TransformerMixin)
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.utils import TransformerTags
    from sklearn.utils.metaestimators import available_if
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data
except ImportError as e:  # pragma: no cover - the estimators need scikit-learn
    raise ImportError("bitlearn.ml needs scikit-learn >= 1.6 (pip install scikit-learn)") from e

__all__ = ["estimator_class", "registry_name_of"]

# Registry name -> scikit-learn class name, where the plain CamelCase spelling differs.
_CLASS_NAMES = {
    "kmeans": "KMeans", "minibatch_kmeans": "MiniBatchKMeans", "pca": "PCA",
    "sgd_classifier": "SGDClassifier", "sgd_regressor": "SGDRegressor",
    "ard_regression": "ARDRegression", "kneighbors_classifier": "KNeighborsClassifier",
    "kneighbors_regressor": "KNeighborsRegressor", "adaboost_classifier": "AdaBoostClassifier",
    "adaboost_regressor": "AdaBoostRegressor", "xgboost_model": "XGBoostModel", "lightgbm_model": "LightGBMModel",
    "gaussian_nb": "GaussianNB", "multinomial_nb": "MultinomialNB", "complement_nb": "ComplementNB",
    "bernoulli_nb": "BernoulliNB", "categorical_nb": "CategoricalNB",
    "linear_discriminant_analysis": "LinearDiscriminantAnalysis",
    "quadratic_discriminant_analysis": "QuadraticDiscriminantAnalysis",
    "kernel_ridge": "KernelRidge", "dbscan": "DBSCAN",
    "radius_neighbors_classifier": "RadiusNeighborsClassifier",
    "radius_neighbors_regressor": "RadiusNeighborsRegressor", "local_outlier_factor": "LocalOutlierFactor",
    "gaussian_mixture": "GaussianMixture",
    "svc": "SVC", "svr": "SVR", "nu_svc": "NuSVC", "nu_svr": "NuSVR", "one_class_svm": "OneClassSVM",
    "kernel_density": "KernelDensity", "bisecting_kmeans": "BisectingKMeans", "rbf_sampler": "RBFSampler",
    "nystroem": "Nystroem", "knn_imputer": "KNNImputer",
    "truncated_svd": "TruncatedSVD", "kernel_pca": "KernelPCA", "nmf": "NMF",
    "latent_dirichlet_allocation": "LatentDirichletAllocation",
    "incremental_pca": "IncrementalPCA", "fast_ica": "FastICA", "mds": "MDS",
    "dictionary_learning": "DictionaryLearning", "sparse_pca": "SparsePCA",
    "tsne": "TSNE", "umap": "UMAP",
    "gaussian_process_regressor": "GaussianProcessRegressor",
    "optics": "OPTICS", "hdbscan": "HDBSCAN", "affinity_propagation": "AffinityPropagation", "birch": "Birch",
    "gaussian_process_classifier": "GaussianProcessClassifier",
    "linear_svc": "LinearSVC", "linear_svr": "LinearSVR",
    "mlp_classifier": "MLPClassifier", "mlp_regressor": "MLPRegressor",
}
_CLUSTER = {"kmeans", "minibatch_kmeans", "dbscan", "bisecting_kmeans", "agglomerative_clustering",
            "mean_shift", "optics", "hdbscan", "affinity_propagation", "birch", "spectral_clustering"}
# Density estimators with predict / predict_proba / score (scikit-learn's mixture models).
_MIXTURE = {"gaussian_mixture", "bayesian_gaussian_mixture"}
# Unsupervised neighbors with kneighbors only (scikit-learn's NearestNeighbors).
_NEIGHBORS = {"nearest_neighbors"}
# Clusterers without predict or score (labels_ come from fit, as scikit-learn's DBSCAN).
_FIT_ONLY_CLUSTER = {"dbscan", "agglomerative_clustering", "optics", "hdbscan", "spectral_clustering"}
# Clusterers with predict but no score (scikit-learn's MeanShift).
_NO_SCORE_CLUSTER = {"mean_shift", "affinity_propagation", "birch"}
_TRANSFORMER = {"pca", "rbf_sampler", "nystroem", "truncated_svd", "kernel_pca", "factor_analysis", "nmf"}
_TRANSFORMER |= {"standard_scaler", "min_max_scaler", "max_abs_scaler", "robust_scaler", "normalizer",
                 "polynomial_features"}
_TRANSFORMER |= {"simple_imputer", "ordinal_encoder", "one_hot_encoder"}
_TRANSFORMER |= {"quantile_transformer", "power_transformer", "knn_imputer"}
_TRANSFORMER |= {"incremental_pca", "fast_ica", "isomap"}
_TRANSFORMER |= {"locally_linear_embedding"}
_TRANSFORMER |= {"latent_dirichlet_allocation"}
_TRANSFORMER |= {"dictionary_learning", "sparse_pca"}
# Transformers whose fit_transform is embedding_ (scikit-learn's LocallyLinearEmbedding).
_EMBEDDING_TRANSFORMER = {"locally_linear_embedding"}
# umap-learn's UMAP (exact neighbors, euclidean): fit_transform is embedding_, transform places new rows.
_TRANSFORMER |= {"umap"}
_EMBEDDING_TRANSFORMER |= {"umap"}
_TRANSFORMER |= {"spline_transformer", "target_encoder"}
# Transformers fitted on a target y (numeric; scikit-learn's TargetEncoder): fit(X, y), and fit_transform
# by cross fitting.
_TARGET_TRANSFORMER = {"target_encoder"}
# Embeddings of the training rows only: fit / fit_transform, embedding_ (scikit-learn's MDS and
# SpectralEmbedding).
_EMBEDDING = {"mds", "spectral_embedding"}
_EMBEDDING |= {"tsne"}  # scikit-learn's TSNE (method="exact" by default here, or "barnes_hut")
# Density estimators with score_samples, score and sample only (scikit-learn's KernelDensity).
_DENSITY = {"kernel_density"}
_OUTLIER = {"isolation_forest", "local_outlier_factor", "one_class_svm"}
_LOADER = {"xgboost_model", "lightgbm_model"}  # import a trained model file; fit(X) only checks X's width
_REGRESSORS = {"linear_regression", "ridge", "lasso", "elastic_net", "bayesian_ridge", "lars",
               "lasso_lars", "ard_regression", "isotonic_regression", "kernel_ridge",
               "svr", "gaussian_process_regressor", "nu_svr", "linear_svr"}
# Targets must be positive (Gamma: > 0, Poisson: >= 0).
_POSITIVE_Y = {"gamma_regressor", "poisson_regressor"}
# X must be non-negative (counts, NMF; categorical_nb: integer categories).
_POSITIVE_X = {"multinomial_nb", "complement_nb", "categorical_nb", "nmf", "latent_dirichlet_allocation"}
# Count models whose training score scikit-learn's checks do not hold to 0.83 (as its own).
_POOR_SCORE = {"multinomial_nb", "complement_nb", "bernoulli_nb", "categorical_nb"}
# Classifiers without predict_proba.
_NO_PROBA = {"nearest_centroid", "linear_svc"}
# The support vector machines (fitted attributes: _set_svm_attributes).
_SVM = {"svc", "nu_svc", "svr", "nu_svr", "one_class_svm"}
# Hist gradient boosting treats NaN as missing; every other estimator refuses NaN in X.
_ALLOW_NAN = {"hist_gradient_boosting_classifier", "hist_gradient_boosting_regressor", "hist_gradient_boosting_ranker"}
# Rankers: fit(X, y, group=None, sample_weight=None), y integer relevance labels (see _RankerBase).
_RANKER = {"hist_gradient_boosting_ranker"}
_ALLOW_NAN |= {"simple_imputer", "knn_imputer"}  # NaN marks the values they fill in
_ALLOW_NAN |= {"xgboost_model", "lightgbm_model"}  # imported tree models route NaN
# Parameters a C++ estimator lists only when set (so the model files of its defaults keep their
# bytes), with their Python defaults: the classes take them as any other parameter.
_HGB_COMMON = {"early_stopping": False, "scoring": "loss", "validation_fraction": 0.1, "n_iter_no_change": 10,
               "tol": 1e-7, "monotonic_cst": None, "interaction_cst": None,
               "categorical_features": None}
_OPTIONAL_PARAMS = {
    "hist_gradient_boosting_regressor": dict(_HGB_COMMON, loss="squared_error", quantile=None, power=1.5, alpha=0.9),
    "hist_gradient_boosting_classifier": dict(_HGB_COMMON, loss="log_loss"),
    "hist_gradient_boosting_ranker": dict(_HGB_COMMON),
}
# Time-series forecasters (src/ml/timeseries/forecaster.h): fit(y, X=None) on one series in row
# order, predict = in-sample one-step predictions, forecast(steps, exog=None, alpha=0.05).
_FORECASTER = {"exponential_smoothing"}
_FORECASTER |= {"arima", "sarimax"}
_CLASS_NAMES.update({"arima": "ARIMA", "sarimax": "SARIMAX"})
# statsmodels' spellings of the orders, as the command line reads them: order=(p, d, q) and (sarimax)
# seasonal_order=(P, D, Q, s). They are views of the single orders, which stay the parameters the C++
# estimator gets: setting one sets those, reading one gives them (the tuple as given while they agree),
# so get_params, set_params and clone keep both spellings in step.
_ORDER_ALIASES = {"arima": {"order": ("p", "d", "q")},
                  "sarimax": {"order": ("p", "d", "q"),
                              "seasonal_order": ("seasonal_p", "seasonal_d", "seasonal_q", "s")}}


def _order_alias(alias, names):
    def get(self):
        given = self.__dict__.get("_" + alias)
        now = tuple(getattr(self, k) for k in names)
        return given if given is not None and tuple(given) == now else now

    def set(self, value):
        if value is None:  # the constructor's default: the single orders stand
            return
        items = tuple(value) if isinstance(value, (tuple, list, np.ndarray)) else ()
        if len(items) != len(names) or any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer))
                                           for v in items):
            raise ValueError(f"{alias} must be {len(names)} integers ({', '.join(names)}), got {value!r}")
        for k, v in zip(names, items):
            if getattr(self, k, None) != v:
                setattr(self, k, int(v))
        self.__dict__["_" + alias] = value

    return property(get, set, doc=f"({', '.join(names)}) as one tuple (statsmodels' {alias}).")


def _class_name(name):
    return _CLASS_NAMES.get(name) or "".join(p.capitalize() for p in name.split("_"))


def _kind(name):
    if name in _FORECASTER:
        return "forecaster"
    if name in _CLUSTER:
        return "cluster"
    if name in _MIXTURE:
        return "mixture"
    if name in _NEIGHBORS:
        return "neighbors"
    if name in _DENSITY:
        return "density"
    if name in _TRANSFORMER:
        return "transformer"
    if name in _EMBEDDING:
        return "embedding"
    if name in _OUTLIER:
        return "outlier"
    if name in _LOADER:
        return "loader"
    if name in _RANKER:
        return "ranker"
    if name.endswith(("_classifier", "_nb", "_discriminant_analysis")) or name in ("logistic_regression",
                                                                                   "nearest_centroid", "svc", "nu_svc",
                                                                                   "linear_svc"):
        return "classifier"
    if name.endswith("_regressor") or name in _REGRESSORS:
        return "regressor"
    raise AssertionError(f"no estimator kind for {name}")


def _from_text(text):
    """A C++ parameter text as the Python value a scikit-learn user would write."""
    if text == "true":
        return True
    if text == "false":
        return False
    if text == "none":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        if text.lower() not in ("nan", "inf", "-inf", "infinity"):
            return float(text)
    except ValueError:
        pass
    return text


def _to_text(key, value):
    """A Python parameter value as the text the C++ estimator parses."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, BitlearnEstimator):
        return value._spec()
    if isinstance(value, (list, tuple)):
        # Sub-estimators as scikit-learn writes them: [(name, estimator), ...] or [estimator, ...];
        # weights as a list of numbers.
        parts = []
        for item in value:
            if isinstance(item, tuple) and len(item) == 2:
                item = item[1]
            parts.append(_to_text(key, item))
        sep = "," if all(isinstance(v, (int, float)) for v in value) else ";"
        return sep.join(parts)
    raise TypeError(f"parameter {key}={value!r}: expected a number, bool, None, str or a bitlearn "
                    f"estimator, got {type(value).__name__}")


def _threads(n_jobs):
    if n_jobs is None:
        return
    n = int(n_jobs)
    if n < 0:
        n = max(1, (os.cpu_count() or 1) + 1 + n)
    if n == 0:
        raise ValueError("n_jobs=0 is not valid (None, a positive count, or -1 for every CPU)")
    _core.set_num_threads(n)


def _hex_f32(text):
    return np.frombuffer(bytes.fromhex(text), dtype="<f4").copy()


class BitlearnEstimator(BaseEstimator):
    """Base of the estimator classes: the C++ estimator of registry name ``_registry_name``."""

    _registry_name = None
    _kind = None
    _extra = ("device", "n_jobs")  # Python-side parameters, not passed to the C++ estimator

    # ---- parameters ----
    def _cpp_params(self):
        out = {}
        for key in self._param_names:
            value = getattr(self, key)
            out[key] = _to_text(key, value)
        return out

    def _spec(self):
        """The sub-estimator text of this estimator: name(key=value,...) for meta-estimators."""
        params = self._cpp_params()
        defaults = _core.Estimator.make(self._registry_name).get_params()
        defaults.update({k: _to_text(k, v) for k, v in _OPTIONAL_PARAMS.get(self._registry_name, {}).items()})
        changed = [f"{k}={v}" for k, v in sorted(params.items()) if defaults.get(k) != v]
        return self._registry_name + (f"({','.join(changed)})" if changed else "")

    # ---- data ----
    def _check_X(self, X, reset):
        if self._registry_name == "isotonic_regression":
            X = np.asarray(X) if not hasattr(X, "ndim") else X
            if getattr(X, "ndim", 2) == 1:
                X = X.reshape(-1, 1)
        allow_nan = self._registry_name in _ALLOW_NAN
        X = validate_data(self, X, reset=reset, dtype=np.float32, order="C",
                          ensure_all_finite="allow-nan" if allow_nan else True)
        return self._positive_X(X)

    def _positive_X(self, X):
        """Count and category models: negative X is a ValueError (scikit-learn's wording);
        categorical_nb truncates X to integers as scikit-learn's CategoricalNB does."""
        if self._registry_name in _POSITIVE_X:
            if np.any(X < 0):
                raise ValueError(f"Negative values in data passed to {type(self).__name__} (input X)")
            if self._registry_name == "categorical_nb":
                X = np.ascontiguousarray(np.trunc(X), dtype=np.float32)
        return X

    def _to_device(self, arr):
        t = Tensor(np.ascontiguousarray(arr))
        if self.device not in (None, "cpu"):
            t = t.to(self.device)
        return t

    def _new(self):
        return _core.Estimator.make(self._registry_name, self._cpp_params())

    # ---- fit ----
    def fit(self, X, y=None):
        """Fits on X [n_samples, n_features] (and y for supervised estimators); returns self."""
        return self._fit(X, y, None)

    def _fit(self, X, y, sample_weight):
        _threads(self.n_jobs)
        kind = self._kind
        if self._registry_name == "isotonic_regression" and getattr(X, "ndim", 2) == 1:
            X = np.asarray(X).reshape(-1, 1)
        if kind in ("classifier", "regressor", "ranker") or self._registry_name in _TARGET_TRANSFORMER:
            if y is None:
                raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
            X, y = validate_data(self, X, y, dtype=np.float32, order="C",
                                 ensure_all_finite="allow-nan" if self._registry_name in _ALLOW_NAN else True,
                                 y_numeric=(kind != "classifier"), multi_output=False)
            X = self._positive_X(X)
        else:
            X = self._check_X(X, reset=True)
        if sample_weight is not None:  # scikit-learn's checks and messages (shape, sign, all zero)
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float32, ensure_non_negative=True)
        if self._registry_name == "isotonic_regression" and X.shape[1] != 1:
            raise ValueError("IsotonicRegression: X must have exactly one feature, got "
                             f"{X.shape[1]}")
        est = self._new()
        if kind == "classifier":
            check_classification_targets(y)
            classes, encoded = np.unique(y, return_inverse=True)
            if len(classes) < 2:
                raise ValueError(f"{type(self).__name__}: y holds 1 class ({classes[0]!r}); a "
                                 "classifier needs at least 2 classes")
            self.classes_ = classes
            # Numeric labels that float32 holds exactly go to the library as they are (so the model
            # file equals `bitlearn fit`'s); others are replaced by their index in classes_.
            as_f32 = None
            if classes.dtype.kind in "iuf":
                f = classes.astype(np.float32)
                if np.array_equal(f.astype(classes.dtype), classes) and np.all(np.isfinite(f)) \
                        and np.array_equal(f, np.round(f)):
                    as_f32 = f
            self._labels_as_values = as_f32 is not None
            y = np.asarray(y, dtype=np.float32) if as_f32 is not None else encoded.astype(np.float32)
            self._fit_cpp(est, X, y, sample_weight)
        elif kind in ("regressor", "ranker") or self._registry_name in _TARGET_TRANSFORMER:
            y = np.asarray(y, dtype=np.float32)
            if self._registry_name in _POSITIVE_Y and np.any(y < 0):
                raise ValueError(f"Negative values in data passed to {type(self).__name__} (y): "
                                 "the target must be positive")
            self._fit_cpp(est, X, y, sample_weight)
        else:
            self._fit_cpp(est, X, None, sample_weight)
        self._est = est
        self._set_fitted_attributes(X)
        if self._registry_name in _CART:  # mean decrease in impurity, from the training data
            w = None if sample_weight is None else Tensor(np.ascontiguousarray(sample_weight, np.float32))
            self.feature_importances_ = np.asarray(
                _core.tree_feature_importances(est, Tensor(X), Tensor(y), w), dtype=np.float64)
        return self

    def _set_density_cluster_attributes(self, state, d):
        """labels_ and the fitted arrays of optics, hdbscan, affinity_propagation and birch."""
        f64 = lambda key: np.frombuffer(bytes.fromhex(state[key]), dtype="<f8").copy()  # noqa: E731
        self.labels_ = np.asarray(state["labels"], dtype=np.int64)
        if self._registry_name == "optics":
            self.ordering_ = np.asarray(state["ordering"], dtype=np.int64)
            self.predecessor_ = np.asarray(state["predecessor"], dtype=np.int64)
            self.core_distances_ = f64("core_distances_f64")
            self.reachability_ = f64("reachability_f64")
            if self.cluster_method == "xi":
                self.cluster_hierarchy_ = np.asarray(state["cluster_hierarchy"], dtype=np.int64).reshape(-1, 2)
        elif self._registry_name == "hdbscan":
            self.probabilities_ = f64("probabilities_f64")
        elif self._registry_name == "affinity_propagation":
            self.cluster_centers_indices_ = np.asarray(state["cluster_centers_indices"], dtype=np.int64)
            self.cluster_centers_ = _hex_f32(state["cluster_centers"]).reshape(-1, d)
        elif self._registry_name == "birch":
            self.subcluster_centers_ = _hex_f32(state["subcluster_centers"]).reshape(-1, d)
            self.subcluster_labels_ = np.asarray(state["subcluster_labels"], dtype=np.int64)

    def _fit_cpp(self, est, X, y, w=None):
        try:
            messages = est.fit(self._to_device(X), None if y is None else self._to_device(y),
                               None if w is None else self._to_device(np.ascontiguousarray(w, np.float32)))
        except _core.Error as e:
            if X.shape[0] == 1:  # name the cause the way scikit-learn's checks look for it
                raise _core.Error(f"{e} (n_samples = 1)") from e
            raise
        for message in messages:  # a solver stopped by max_iter: the model is kept, as in scikit-learn
            warnings.warn(message, ConvergenceWarning, stacklevel=3)

    def _set_fitted_attributes(self, X):
        state = json.loads(self._est.state_json())
        d = X.shape[1]
        self.n_features_in_ = d
        if isinstance(state.get("n_iter"), int):
            self.n_iter_ = state["n_iter"]
        elif isinstance(state.get("trees"), list) and isinstance(state.get("n_groups"), int):
            self.n_iter_ = len(state["trees"]) // max(1, state["n_groups"])  # boosting rounds
        if isinstance(state.get("coef"), str):
            coef = _hex_f32(state["coef"])
            outputs = state.get("outputs")
            if self._kind == "classifier":
                coef = coef.reshape(-1, d)
            elif outputs:
                coef = coef.reshape(outputs, d)
            self.coef_ = coef
        if isinstance(state.get("intercept"), str):
            b = _hex_f32(state["intercept"])
            self.intercept_ = b if (self._kind == "classifier" or b.size != 1) else b[0]
        for key in ("cluster_centers", "components", "explained_variance", "explained_variance_ratio",
                    "mean", "singular_values"):
            if isinstance(state.get(key), str):
                v = _hex_f32(state[key])
                if key in ("cluster_centers", "components"):
                    v = v.reshape(-1, d)
                self.__dict__[key + "_"] = v
        if isinstance(state.get("train_score"), str):  # hist boosting with early stopping (binary64)
            self.train_score_ = np.frombuffer(bytes.fromhex(state["train_score"]), dtype="<f8").copy()
            if isinstance(state.get("validation_score"), str):
                self.validation_score_ = np.frombuffer(bytes.fromhex(state["validation_score"]), dtype="<f8").copy()
        if isinstance(state.get("inertia"), str):
            self.inertia_ = float(_hex_f32(state["inertia"])[0])
        if isinstance(state.get("loss_curve"), str):  # mlp_*: the training loss of the last and every epoch
            self.loss_ = float(_hex_f32(state["loss"])[0])
            self.loss_curve_ = [float(v) for v in _hex_f32(state["loss_curve"])]
        if isinstance(state.get("n_components"), int):
            self.n_components_ = state["n_components"]
        if isinstance(state.get("offset"), str):
            self.offset_ = float(_hex_f32(state["offset"])[0])
        if isinstance(state.get("negative_outlier_factor"), str):  # local_outlier_factor
            self.negative_outlier_factor_ = _hex_f32(state["negative_outlier_factor"]).astype(np.float64)
            self.n_neighbors_ = state["n_neighbors"]
            self.n_samples_fit_ = state["n_samples"]
        self._set_class_statistics(state, d)
        if self._registry_name in _SVM:
            self._set_svm_attributes(state, d)
        if isinstance(state.get("X_fit"), str):  # kernel_ridge
            self.dual_coef_ = _hex_f32(state["dual_coef"])
            self.X_fit_ = _hex_f32(state["X_fit"]).reshape(-1, d)
        if self._registry_name == "agglomerative_clustering":
            self.labels_ = np.asarray(state["labels"], dtype=np.int64)
            self.children_ = np.asarray(state["children"], dtype=np.int64).reshape(-1, 2)
            self.distances_ = np.frombuffer(bytes.fromhex(state["distances_f64"]), dtype="<f8").copy()
            self.n_leaves_ = state["n_leaves"]
            self.n_connected_components_ = state["n_connected_components"]
            self.n_clusters_ = state["n_clusters"]
        elif self._registry_name in ("mean_shift", "spectral_clustering"):  # labels_ from fit: -1 where cluster_all=False leaves a row out
            self.labels_ = np.asarray(state["labels"], dtype=np.int64)
        elif self._registry_name in ("optics", "hdbscan", "affinity_propagation", "birch"):
            self._set_density_cluster_attributes(state, d)
        elif self._registry_name in _FIT_ONLY_CLUSTER:
            self.labels_ = np.asarray(state["labels"], dtype=np.int64)
            self.core_sample_indices_ = np.asarray(state["core_sample_indices"], dtype=np.int64)
        elif self._kind == "cluster":
            self.labels_ = self._predict_raw(X).astype(np.int64)
        if self._kind == "mixture":
            self._set_mixture_attributes(state, d)
        if isinstance(state.get("dual_alpha"), str):  # gaussian_process_regressor
            self.X_train_ = _hex_f32(state["X_train"]).reshape(-1, d)
            self.y_train_ = _hex_f32(state["y_train"])
            self.alpha_ = np.frombuffer(bytes.fromhex(state["dual_alpha"]), dtype="<f8").copy()
            self.kernel_ = state["kernel"]
            self.log_marginal_likelihood_value_ = float(
                np.frombuffer(bytes.fromhex(state["log_marginal_likelihood"]), dtype="<f8")[0])
        if isinstance(state.get("log_marginal_likelihoods"), str):  # gaussian_process_classifier
            self.X_train_ = _hex_f32(state["X_train"]).reshape(-1, d)
            self.kernel_ = state["kernels"][0] if len(state["kernels"]) == 1 else list(state["kernels"])
            self.log_marginal_likelihood_value_ = float(
                np.frombuffer(bytes.fromhex(state["log_marginal_likelihood"]), dtype="<f8")[0])
        if self._kind == "density":  # kernel_density
            self.bandwidth_ = float(_hex_f32(state["bandwidth"])[0])
            self._X_fit = _hex_f32(state["X_train"]).reshape(-1, d)
        if isinstance(state.get("random_weights"), str):  # rbf_sampler
            self.random_weights_ = _hex_f32(state["random_weights"]).reshape(d, -1)
            self.random_offset_ = _hex_f32(state["random_offset"])
        if isinstance(state.get("normalization"), str):  # nystroem
            self.normalization_ = _hex_f32(state["normalization"]).reshape(state["n_components"], -1)
            self.component_indices_ = np.asarray(state["component_indices"], dtype=np.int64)
        if isinstance(state.get("scaled_eigenvectors"), str):  # kernel_pca
            self.eigenvalues_ = _hex_f32(state["eigenvalues"])
            self.eigenvectors_ = _hex_f32(state["eigenvectors"]).reshape(state["n_components"], -1).T
            self.X_fit_ = _hex_f32(state["training_rows"]).reshape(-1, d)
        if isinstance(state.get("noise_variance"), str):  # factor_analysis
            self.noise_variance_ = _hex_f32(state["noise_variance"])
            self.loglike_ = [float(v) for v in _hex_f32(state["loglike"])]
        if isinstance(state.get("reconstruction_err"), str):  # nmf
            self.reconstruction_err_ = float(_hex_f32(state["reconstruction_err"])[0])
        if isinstance(state.get("error"), str):  # dictionary_learning, sparse_pca (cost per iteration)
            self.error_ = [float(v) for v in _hex_f32(state["error"])]
            if self._registry_name == "sparse_pca":
                self.n_components_ = int(state["n_components"])
        if isinstance(state.get("exp_dirichlet_component"), str):  # latent_dirichlet_allocation
            self.exp_dirichlet_component_ = _hex_f32(state["exp_dirichlet_component"]).reshape(state["n_components"], -1)
            self.bound_ = float(_hex_f32(state["bound"])[0])
            self.n_batch_iter_ = state.get("n_batch_iter", state["n_iter"])
            self.doc_topic_prior_, self.topic_word_prior_ = (
                float(v) for v in np.frombuffer(bytes.fromhex(state["priors_f64"]), dtype="<f8"))
        if isinstance(state.get("noise_variance_value"), str):  # incremental_pca
            self.var_ = _hex_f32(state["var"])
            self.noise_variance_ = float(_hex_f32(state["noise_variance_value"])[0])
            self.n_samples_seen_ = state["n_samples_seen"]
            self.batch_size_ = state["batch_size_used"]
        if isinstance(state.get("embedding"), str):  # mds, isomap, spectral_embedding, locally_linear_embedding
            self.embedding_ = _hex_f32(state["embedding"]).reshape(state["n_samples"], -1)
        if isinstance(state.get("stress"), str):  # mds
            self.stress_ = float(_hex_f32(state["stress"])[0])
        if isinstance(state.get("reconstruction_error"), str):  # locally_linear_embedding
            self.reconstruction_error_ = float(_hex_f32(state["reconstruction_error"])[0])
        if isinstance(state.get("graph_data"), str):  # umap: umap-learn's graph_, _a and _b
            import scipy.sparse
            n_rows = state["n_samples"]
            self.graph_ = scipy.sparse.csr_matrix(
                (np.frombuffer(bytes.fromhex(state["graph_data"]), dtype="<f8"), np.asarray(state["graph_indices"]),
                 np.asarray(state["graph_indptr"])), shape=(n_rows, n_rows))
            self._a = float(np.frombuffer(bytes.fromhex(state["a"]), dtype="<f8")[0])
            self._b = float(np.frombuffer(bytes.fromhex(state["b"]), dtype="<f8")[0])
        if isinstance(state.get("kl_divergence"), str):  # tsne (n_iter_ above)
            self.kl_divergence_ = float(np.frombuffer(bytes.fromhex(state["kl_divergence"]), dtype="<f8")[0])
            self.learning_rate_ = float(np.frombuffer(bytes.fromhex(state["learning_rate_used"]), dtype="<f8")[0])
        if isinstance(state.get("encodings_f64"), str):  # target_encoder: scikit-learn's fitted attributes
            f64 = np.frombuffer(bytes.fromhex(state["encodings_f64"]), dtype="<f8")
            means = np.frombuffer(bytes.fromhex(state["target_mean_f64"]), dtype="<f8").copy()
            cats, at, self.categories_, self.encodings_ = _hex_f32(state["categories"]), 0, [], []
            for j, n in enumerate(state["n_categories"]):  # encodings_: column j, class c at j * K + c
                self.categories_.append(cats[sum(state["n_categories"][:j]):][:n].astype(np.float64))
                for _ in range(len(means)):
                    self.encodings_.append(f64[at:at + n].copy())
                    at += n
            self.target_type_ = state["target_type"]
            self.target_mean_ = means if self.target_type_ == "multiclass" else float(means[0])
            self.classes_ = _hex_f32(state["classes"]) if "classes" in state else None
        if isinstance(state.get("mixing"), str):  # fast_ica
            self.mixing_ = _hex_f32(state["mixing"]).reshape(d, -1)
            if isinstance(state.get("whitening"), str):
                self.whitening_ = _hex_f32(state["whitening"]).reshape(-1, d)

    def _set_mixture_attributes(self, state, d):
        """Gaussian mixture: weights_, means_, covariances_, precisions_cholesky_, precisions_,
        converged_, n_iter_, lower_bound_ in scikit-learn's shapes."""
        k, kind = state["n_components"], state["covariance_type"]
        shape = {"full": (k, d, d), "tied": (d, d), "diag": (k, d), "spherical": (k,)}[kind]
        self.weights_ = _hex_f32(state["weights"])
        self.means_ = _hex_f32(state["means"]).reshape(k, d)
        self.covariances_ = _hex_f32(state["covariances"]).reshape(shape)
        self.precisions_cholesky_ = _hex_f32(state["precisions_cholesky"]).reshape(shape)
        pc = self.precisions_cholesky_.astype(np.float64)
        if kind == "full":
            self.precisions_ = np.einsum("kij,klj->kil", pc, pc)
        elif kind == "tied":
            self.precisions_ = pc @ pc.T
        else:
            self.precisions_ = pc ** 2
        self.converged_ = bool(state["converged"])
        self.lower_bound_ = float(_hex_f32(state["lower_bound"])[0])
        if "weight_concentration" in state:  # bayesian_gaussian_mixture
            wc = _hex_f32(state["weight_concentration"])
            self.weight_concentration_ = (wc[:k], wc[k:]) if len(wc) == 2 * k else wc
            self.mean_precision_ = _hex_f32(state["mean_precision"])
            dof = _hex_f32(state["degrees_of_freedom"])
            self.degrees_of_freedom_ = float(dof[0]) if kind == "tied" else dof

    def _set_svm_attributes(self, state, d):
        """svc, nu_svc, svr, nu_svr, one_class_svm: support_, support_vectors_, dual_coef_,
        intercept_, n_support_, n_iter_ (probA_, probB_ with probability=True; offset_ one-class)."""
        self.support_ = np.asarray(state["support"], dtype=np.int32)
        self.n_support_ = np.asarray(state["n_support"], dtype=np.int32)
        self.n_iter_ = np.asarray(state["n_iter"], dtype=np.int32)
        self.support_vectors_ = _hex_f32(state["support_vectors"]).reshape(-1, d)
        rows = max(1, len(self.n_support_) - 1) if self._registry_name in ("svc", "nu_svc") else 1
        self.dual_coef_ = _hex_f32(state["dual_coef"]).reshape(rows, len(self.support_))
        self.intercept_ = _hex_f32(state["intercept"])
        if isinstance(state.get("prob_a"), str):
            self.probA_ = _hex_f32(state["prob_a"]).astype(np.float64)
            self.probB_ = _hex_f32(state["prob_b"]).astype(np.float64)
        self.fit_status_ = 0

    def _set_class_statistics(self, state, d):
        """Naive Bayes and nearest centroid: scikit-learn's fitted attributes from the model state
        (theta_, var_, class_count_, class_log_prior_, feature_count_, feature_log_prob_, centroids_)."""
        name = self._registry_name
        if isinstance(state.get("class_count"), str):
            self.class_count_ = _hex_f32(state["class_count"]).astype(np.float64)
            self.class_log_prior_ = _hex_f32(state["class_log_prior"])
            if name == "gaussian_nb":  # scikit-learn's GaussianNB keeps the prior itself
                self.class_prior_ = self.class_count_ / self.class_count_.sum()
        for key in ("theta", "var", "feature_count", "centroids"):
            if isinstance(state.get(key), str):
                self.__dict__[key + "_"] = _hex_f32(state[key]).reshape(-1, d)
        if "feature_count_" in self.__dict__:
            self.feature_count_ = self.feature_count_.astype(np.float64)
        if name in ("multinomial_nb", "complement_nb"):  # the weights of X in the joint log-likelihood
            self.feature_log_prob_ = _hex_f32(state["weight"]).reshape(-1, d)
        if name == "categorical_nb":
            counts = state["n_categories"]
            flp = _hex_f32(state["feature_log_prob"])
            c = state["n_classes"]
            self.n_categories_ = np.asarray(counts, dtype=np.int64)
            self.feature_log_prob_, at = [], 0
            for k in counts:
                self.feature_log_prob_.append(flp[at:at + c * k].reshape(c, k))
                at += c * k

    # ---- predictions ----
    def _predict_raw(self, X):
        return np.asarray(self._est.predict(self._to_device(X)).to("cpu"))

    def _checked(self, X):
        check_is_fitted(self)
        return self._check_X(X, reset=False)

    def _output(self, method, X, dtype=None):
        """The C++ estimator's `method` (predict_proba, score_samples, ...) on X, as a NumPy array."""
        _threads(self.n_jobs)
        X = self._checked(X)
        return np.asarray(getattr(self._est, method)(self._to_device(X)).to("cpu"), dtype=dtype)

    def _library_score(self, X):
        """The C++ estimator's score of X (no target)."""
        _threads(self.n_jobs)
        X = self._checked(X)
        return float(self._est.score(self._to_device(X), Tensor(np.zeros(len(X), np.float32))))

    def _labels(self, raw):
        if self._labels_as_values:
            f = self.classes_.astype(np.float32)
            idx = np.searchsorted(f, raw)
            if self._registry_name == "radius_neighbors_classifier":  # outlier_label may be no class
                at = np.minimum(idx, len(f) - 1)
                other = f[at] != raw
                out = self.classes_[at]
                out[other] = raw[other].astype(out.dtype)
                return out
        else:
            idx = raw.astype(np.int64)
        return self.classes_[idx]

    @available_if(lambda self: self._kind not in ("transformer", "density", "embedding")
                  and self._registry_name not in _FIT_ONLY_CLUSTER)
    def predict(self, X):
        """Predictions for X: labels (classifiers), values (regressors), cluster ids, or -1/1."""
        _threads(self.n_jobs)
        X = self._checked(X)
        raw = self._predict_raw(X)
        if self._kind == "classifier":
            return self._labels(raw)
        if self._kind == "cluster":
            return raw.astype(np.int64)
        if self._kind == "outlier":
            return raw.astype(np.int64)
        return raw

    # ---- pickling through the model file ----
    def __getstate__(self):
        state = dict(self.__dict__)
        est = state.pop("_est", None)
        if est is not None:
            state["_model_text"] = est.to_json_text()
        return state

    def __setstate__(self, state):
        state = dict(state)
        text = state.pop("_model_text", None)
        self.__dict__.update(state)
        if text is not None:
            self._est = _core.Estimator.from_json_text(text, "pickle")

    # ---- model files ----
    def model_file_text(self, feature_names=None, target=None):
        """The model file text; with feature_names and target it is the text `bitlearn fit` writes."""
        check_is_fitted(self)
        return self._est.model_file_text(feature_names, target)

    def save_model(self, path, feature_names=None, target=None):
        """Writes the model file (readable by `bitlearn predict` when feature names are given)."""
        text = self.model_file_text(feature_names, target)
        tmp = f"{path}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self._registry_name in _ALLOW_NAN
        if self._registry_name in _POSITIVE_Y:
            tags.target_tags.positive_only = True
        if self._registry_name in _POSITIVE_X:
            tags.input_tags.positive_only = True
        if self._registry_name == "isotonic_regression":
            tags.input_tags.one_d_array = True
            tags.input_tags.two_d_array = False
        return tags


# CART trees and forests: fit sets feature_importances_ (bitlearn/ml/tree.h).
_CART = {"decision_tree_classifier", "decision_tree_regressor", "extra_tree_classifier", "extra_tree_regressor",
         "random_forest_classifier", "random_forest_regressor", "extra_trees_classifier", "extra_trees_regressor"}
# The estimators with a decision_function (linear classifiers, discriminant analysis).
_DECISION = {"logistic_regression", "sgd_classifier", "linear_discriminant_analysis",
             "quadratic_discriminant_analysis", "svc", "nu_svc", "linear_svc"}


def _has_proba(self):
    name = self._registry_name
    if name in _NO_PROBA:
        return False
    if name == "sgd_classifier":
        return self.loss in ("log_loss", "modified_huber")
    if name == "voting_classifier":
        return self.voting == "soft"
    if name in ("svc", "nu_svc"):  # Platt scaling, fitted only with probability=True
        return self.probability
    return True


def _has_class_transform(self):
    """Classifiers that are also transformers: linear discriminant analysis (not with lsqr)."""
    return self._registry_name == "linear_discriminant_analysis" and self.solver != "lsqr"


class _ClassifierBase(ClassifierMixin, BitlearnEstimator):
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = self._registry_name in _POOR_SCORE
        if _has_class_transform(self):
            tags.transformer_tags = TransformerTags(preserves_dtype=["float32"])
        return tags

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities [n_samples, n_classes] in the order of classes_."""
        return self._output("predict_proba", X)

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        """log of predict_proba."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @available_if(lambda self: self._registry_name in _DECISION)
    def decision_function(self, X):
        """Scores X coef_^T + intercept_: [n_samples] for two classes (positive: classes_[1]),
        [n_samples, n_classes] for more; the library's bits, as predict thresholds them."""
        return self._output("decision_function", X)

    @available_if(_has_class_transform)
    def transform(self, X):
        """X projected onto the discriminant directions [n_samples, n_components]."""
        return self._output("transform", X)

    @available_if(_has_class_transform)
    def fit_transform(self, X, y):
        """fit, then transform of the same X."""
        return self.fit(X, y).transform(X)


class _RegressorBase(RegressorMixin, BitlearnEstimator):
    pass


class _GaussianProcessBase(_RegressorBase):
    def predict(self, X, return_std=False):
        """The predictive mean at X, and with return_std its standard deviation (float32 each)."""
        mean = super().predict(X)
        if not return_std:
            return mean
        X = self._checked(X)
        return mean, np.asarray(self._est.predict_std(self._to_device(X)).to("cpu"))


class _ClusterBase(ClusterMixin, BitlearnEstimator):
    def fit_predict(self, X, y=None):
        """Fits and returns the cluster of each row."""
        return self.fit(X).labels_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self._registry_name == "birch":  # Birch is also a transformer (distances to the centers)
            tags.transformer_tags = TransformerTags(preserves_dtype=["float32"])
        return tags

    @available_if(lambda self: self._registry_name == "birch")
    def transform(self, X):
        """Distances to the subcluster centers [n_samples, n_subclusters] (Birch)."""
        X = self._checked(X)
        return np.asarray(self._est.transform(self._to_device(X)).to("cpu"))

    @available_if(lambda self: self._registry_name == "birch")
    def fit_transform(self, X, y=None):
        """fit, then transform of the same X."""
        return self.fit(X).transform(X)

    @available_if(lambda self: self._registry_name not in _FIT_ONLY_CLUSTER | _NO_SCORE_CLUSTER)
    def score(self, X, y=None):
        """Minus the inertia of X (as scikit-learn's KMeans)."""
        return self._library_score(X)


class _MixtureBase(DensityMixin, BitlearnEstimator):
    """Gaussian mixture models: predict (component of largest weighted log probability),
    predict_proba (responsibilities), score (mean log-likelihood), bic / aic and sample."""

    def fit_predict(self, X, y=None):
        """Fits and returns the component of each row."""
        return self.fit(X).predict(X)

    def predict_proba(self, X):
        """Responsibilities [n_samples, n_components]."""
        return self._output("predict_proba", X)

    def score_samples(self, X):
        """Log-likelihood of each row under the mixture (float64 of the library's float32)."""
        return self._output("score_samples", X, np.float64)

    def score(self, X, y=None):
        """Mean log-likelihood of the rows of X under the mixture."""
        return self._library_score(X)

    def _n_parameters(self):
        k, d = self.means_.shape
        cov = {"full": k * d * (d + 1) / 2, "tied": d * (d + 1) / 2, "diag": k * d,
               "spherical": k}[self.covariance_type]
        return int(cov + k * d + k - 1)

    def bic(self, X):
        """Bayesian information criterion: -2 n score(X) + n_parameters log(n)."""
        n = np.asarray(X).shape[0]
        return -2 * self.score(X) * n + self._n_parameters() * np.log(n)

    def aic(self, X):
        """Akaike information criterion: -2 n score(X) + 2 n_parameters."""
        return -2 * self.score(X) * np.asarray(X).shape[0] + 2 * self._n_parameters()

    def sample(self, n_samples=1):
        """n_samples rows drawn from the fitted mixture with NumPy (RandomState(random_state)), and
        their components. Sampling is NumPy's and is not part of bitlearn's identity contract."""
        check_is_fitted(self)
        if n_samples < 1:
            raise ValueError(f"Invalid value for 'n_samples': {n_samples}. The sampling requires at "
                             "least one sample.")
        rng = np.random.RandomState(self.random_state)
        w = self.weights_.astype(np.float64)
        counts = rng.multinomial(n_samples, w / w.sum())
        means = self.means_.astype(np.float64)
        cov = self.covariances_.astype(np.float64)
        d = means.shape[1]
        parts = []
        for j, (mean, c) in enumerate(zip(means, counts)):
            if self.covariance_type == "full":
                parts.append(rng.multivariate_normal(mean, cov[j], c))
            elif self.covariance_type == "tied":
                parts.append(rng.multivariate_normal(mean, cov, c))
            else:
                scale = np.sqrt(cov[j]) if self.covariance_type == "diag" else np.full(d, np.sqrt(cov[j]))
                parts.append(mean + rng.standard_normal(size=(c, d)) * scale)
        y = np.concatenate([np.full(c, j, dtype=int) for j, c in enumerate(counts)])
        return np.vstack(parts), y


class _DensityBase(DensityMixin, BitlearnEstimator):
    """Kernel density estimation: score_samples (log density), score (their sum) and sample."""

    def score_samples(self, X):
        """Log density of each row (float64 of the library's float32)."""
        return self._output("score_samples", X, np.float64)

    def score(self, X, y=None):
        """Total log density of the rows of X."""
        return self._library_score(X)

    def sample(self, n_samples=1, random_state=None):
        """n_samples rows drawn from the fitted density with NumPy (gaussian and tophat kernels, as
        scikit-learn). Sampling is NumPy's and is not part of bitlearn's identity contract."""
        from scipy.special import gammainc
        from sklearn.utils import check_random_state

        check_is_fitted(self)
        if self.kernel not in ("gaussian", "tophat"):
            raise NotImplementedError()
        data = self._X_fit.astype(np.float64)
        rng = check_random_state(random_state)
        u = rng.uniform(0, 1, size=n_samples)
        i = (u * data.shape[0]).astype(np.int64)
        if self.kernel == "gaussian":
            return np.atleast_2d(rng.normal(data[i], self.bandwidth_))
        dim = data.shape[1]
        Z = rng.normal(size=(n_samples, dim))
        s_sq = np.einsum("ij,ij->i", Z, Z)
        correction = gammainc(0.5 * dim, 0.5 * s_sq) ** (1.0 / dim) * self.bandwidth_ / np.sqrt(s_sq)
        return data[i] + Z * correction[:, np.newaxis]


class _TransformerBase(TransformerMixin, BitlearnEstimator):
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float32"]  # bitlearn computes in float32
        return tags

    def transform(self, X):
        """X projected (PCA: onto the components)."""
        return self._output("transform", X)

    @available_if(lambda self: self._registry_name == "latent_dirichlet_allocation")
    def score(self, X, y=None):
        """The approximate variational bound of X (LatentDirichletAllocation)."""
        return self._library_score(X)

    @available_if(lambda self: self._registry_name == "latent_dirichlet_allocation")
    def perplexity(self, X):
        """exp(-score(X) / X.sum()) (LatentDirichletAllocation)."""
        return float(np.exp(-self.score(X) / np.asarray(X, dtype=np.float64).sum()))


class _EmbeddingBase(BitlearnEstimator):
    """Embeddings of the training rows (MDS, SpectralEmbedding): fit sets embedding_ (MDS: and stress_);
    no transform."""

    def fit_transform(self, X, y=None):
        """Fits and returns embedding_ [n_samples, n_components]."""
        return self.fit(X).embedding_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = getattr(self, "metric", None) == "precomputed"
        return tags


class _OutlierBase(OutlierMixin, BitlearnEstimator):
    # local_outlier_factor has only scikit-learn's novelty=True mode: no fit_predict.
    fit_predict = available_if(lambda self: self._registry_name != "local_outlier_factor")(
        OutlierMixin.fit_predict)

    def score_samples(self, X):
        """Anomaly score of each row (lower is more abnormal), as scikit-learn's (float64, exact:
        every float32 is a float64)."""
        return self._output("score_samples", X, np.float64)

    def decision_function(self, X):
        """score_samples minus offset_ (negative: outlier)."""
        return self._output("decision_function", X, np.float64)


class _LoaderBase(BitlearnEstimator):
    def pred_contribs(self, X):
        """SHAP values (exact TreeSHAP, path-dependent, from the trees' training cover) as float64
        [n_samples, n_groups * (n_features + 1)]: per output group one column per feature, then the
        expected value; each group's columns add up to its raw margin."""
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        return _core.shap_values(self._est.to_json_text(), Tensor(np.ascontiguousarray(X)))


class _ForecasterBase(BitlearnEstimator):
    """Time-series models (statsmodels-like): fit(y, X=None) on one series (row 0 the oldest), X the
    exogenous regressors [n, k] where the model takes some; predict(X=None) the in-sample one-step
    predictions; forecast(steps, exog=None, alpha=0.05) -> (mean, lower, upper) float64 arrays.
    scikit-learn's estimator checks do not apply (fit reads y as one ordered series)."""

    def fit(self, y, X=None):
        """Fits on the series y [n] (and regressors X [n, k]); returns self."""
        _threads(self.n_jobs)
        y = np.ascontiguousarray(np.asarray(y, dtype=np.float32).reshape(-1))
        X = np.zeros((len(y), 0), np.float32) if X is None else np.ascontiguousarray(X, dtype=np.float32)
        est = self._new()
        est.fit(self._to_device(X), self._to_device(y), None)
        self._est = est
        self.n_features_in_ = X.shape[1]
        self.nobs_ = len(y)
        state = json.loads(self._est.state_json())
        f64 = lambda key: np.frombuffer(bytes.fromhex(state[key]), dtype="<f8").copy()  # noqa: E731
        if "values_f64" in state and "stats_f64" in state:  # exponential_smoothing
            v = f64("values_f64")
            self.params_ = {"smoothing_level": v[0], "smoothing_trend": v[1], "smoothing_seasonal": v[2],
                            "damping_trend": v[3], "initial_level": v[4], "initial_trend": v[5],
                            "initial_seasons": v[6:]}
            self.sse_, self.aic_, self.aicc_, self.bic_ = (float(t) for t in f64("stats_f64"))
        if "params" in state and "sigma2" in state:  # arima, sarimax (statsmodels' parameter order)
            self.params_ = f64("params")
            self.sigma2_, self.llf_, self.aic_, self.bic_ = (float(f64(k)[0]) for k in ("sigma2", "llf", "aic", "bic"))
            self.n_iter_ = int(state["n_iter"])
        return self

    def predict(self, X=None):
        """The in-sample one-step predictions of the fitted series (float32 [n])."""
        check_is_fitted(self)
        X = np.zeros((self.nobs_, self.n_features_in_), np.float32) if X is None else \
            np.ascontiguousarray(X, dtype=np.float32)
        return np.asarray(self._est.predict(self._to_device(X)).to("cpu"))

    def forecast(self, steps, exog=None, alpha=0.05):
        """(mean, lower, upper): the steps after the fitted series with the 1 - alpha prediction
        interval (NaN bounds where the model has no closed form)."""
        check_is_fitted(self)
        ex = None if exog is None else Tensor(np.ascontiguousarray(exog, dtype=np.float32))
        mean, lower, upper = _core.forecast(self._est.to_json_text(), int(steps), ex, float(alpha))
        return np.asarray(mean), np.asarray(lower), np.asarray(upper)

    def score(self, y, X=None):
        """R^2 of the in-sample one-step predictions against y."""
        from sklearn.metrics import r2_score
        return r2_score(np.asarray(y, dtype=np.float64), self.predict(X).astype(np.float64))


class _NeighborsBase(BitlearnEstimator):
    """Unsupervised nearest neighbors: kneighbors (distances and indices, nearest first; equal
    distances in ascending training index)."""

    def fit(self, X, y=None):
        """Stores the training rows; returns self."""
        super().fit(X)
        state = json.loads(self._est.state_json())
        self._fit_X = _hex_f32(state["fit_X"]).reshape(-1, self.n_features_in_)
        self.n_samples_fit_ = self._fit_X.shape[0]
        return self

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """(distances, indices) [n_queries, n_neighbors] of the nearest training rows, or indices
        alone. X=None: the training rows, each without itself (as scikit-learn)."""
        check_is_fitted(self)
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        if k <= 0:
            raise ValueError(f"Expected n_neighbors > 0. Got {k}")
        query_is_train = X is None
        Xq = self._fit_X if query_is_train else self._checked(X)
        if query_is_train:
            k += 1
        if k > self.n_samples_fit_:
            raise ValueError(f"Expected n_neighbors <= n_samples_fit, but n_neighbors = {k}, n_samples_fit = "
                             f"{self.n_samples_fit_}, n_samples = {Xq.shape[0]}")
        _threads(self.n_jobs)
        est = self._est
        if k != self.n_neighbors:
            est = _core.Estimator.make(self._registry_name, {**self._cpp_params(), "n_neighbors": str(int(k))})
            est.fit(self._to_device(self._fit_X), None)
        T = self._to_device(Xq)
        ind = np.asarray(est.predict(T).to("cpu"), dtype=np.int64)
        dist = np.asarray(est.transform(T).to("cpu")) if return_distance else None
        if query_is_train:  # drop each row itself (the first column where duplicates hide it)
            mask = ind != np.arange(len(ind))[:, None]
            mask[mask.all(axis=1), 0] = False
            ind = ind[mask].reshape(len(ind), k - 1)
            dist = dist[mask].reshape(len(ind), k - 1) if return_distance else None
        return (dist, ind) if return_distance else ind


class _RankerBase(BitlearnEstimator):
    """Learning to rank. The query id of each row is either the column ``group_column`` of X (fit,
    predict and score then all take X with that column, as the command line's --group), or given to
    fit as ``group`` (alias ``qid``: one id per row, the rows of a query contiguous), which fit
    appends to X as its last column; predict(X) and score(X, y, group) then take X without it."""

    _appended_group = None  # the number of features when fit was given group=

    def _new(self):
        params = self._cpp_params()
        if self._appended_group is not None:
            params["group_column"] = str(self._appended_group)
        return _core.Estimator.make(self._registry_name, params)

    def _with_group(self, X, group):
        X = np.asarray(X, dtype=np.float32)
        group = np.asarray(group, dtype=np.float32).reshape(-1)
        if X.ndim != 2 or len(group) != X.shape[0]:
            raise ValueError(f"{type(self).__name__}: group holds {len(group)} query ids, expected one per row "
                             f"of X ({X.shape[0] if X.ndim == 2 else X.shape} rows)")
        return np.column_stack([X, group])

    def fit(self, X, y, group=None, qid=None, sample_weight=None):
        """Fits on X and relevance labels y (integers 0 .. 31); group / qid: a query id per row
        (None: X's column group_column); sample_weight: a weight per row. Returns self."""
        group = qid if group is None else group
        self._appended_group = None
        if group is not None:
            d = np.asarray(X).shape[1]
            self._appended_group = d
            self._fit(self._with_group(X, group), y, sample_weight)
            self.n_features_in_ = d  # predict and score take X without the query ids
            return self
        return self._fit(X, y, sample_weight)

    def predict(self, X):
        """Ranking scores of the rows of X (higher: more relevant)."""
        if self._appended_group is None:
            return super().predict(X)
        _threads(self.n_jobs)
        X = self._checked(X)
        return self._predict_raw(self._with_group(X, np.zeros(len(X), np.float32)))

    def score(self, X, y, group=None, qid=None, sample_weight=None):
        """The mean NDCG@eval_at over the queries (group / qid, or X's group_column); with
        sample_weight (one per row) the mean weighted per query by its rows' mean weight."""
        _threads(self.n_jobs)
        group = qid if group is None else group
        X = self._checked(X)
        if self._appended_group is not None:
            if group is None:
                raise ValueError(f"{type(self).__name__}: fit was given group=; score needs group= too")
            X = self._with_group(X, group)
        y = self._to_device(np.asarray(y, dtype=np.float32))
        w = None
        if sample_weight is not None:  # scikit-learn's checks and messages (shape, sign)
            w = _check_sample_weight(sample_weight, X, dtype=np.float32, ensure_non_negative=True)
            w = self._to_device(np.ascontiguousarray(w, np.float32))
        return float(self._est.score(self._to_device(X), y, w))


_BASES = {"classifier": _ClassifierBase, "ranker": _RankerBase, "regressor": _RegressorBase, "cluster": _ClusterBase,
          "transformer": _TransformerBase, "outlier": _OutlierBase, "loader": _LoaderBase,
          "mixture": _MixtureBase, "density": _DensityBase, "neighbors": _NeighborsBase,
          "embedding": _EmbeddingBase, "forecaster": _ForecasterBase}


def _fit_weighted(self, X, y=None, sample_weight=None):
    """Fits on X and y, with sample_weight [n_samples] (row i counts w_i times; None: unweighted);
    returns self."""
    return self._fit(X, y, sample_weight)


def _cross_fit_transform(self, X, y):
    """fit, then the training rows encoded by cross fitting (scikit-learn's TargetEncoder.fit_transform):
    each row with the encodings fitted on the other cv folds. Without shuffle the folds are
    scikit-learn's (KFold; StratifiedKFold for class targets); with shuffle they come from the
    library's Philox permutation of random_state, not from NumPy's generator."""
    self.fit(X, y)
    X, y = validate_data(self, X, y, reset=False, dtype=np.float32, order="C", y_numeric=True)
    _threads(self.n_jobs)
    out = self._est.target_encoder_cross_fit(self._to_device(X), self._to_device(np.asarray(y, np.float32)))
    return np.asarray(out.to("cpu"))


def _target_tags(self):
    tags = _TransformerBase.__sklearn_tags__(self)
    tags.target_tags.required = True
    tags.input_tags.categorical = True  # X's values are categories (scikit-learn's checks then round X)
    return tags


def _make_class(name):
    made = _core.Estimator.make(name)
    defaults = {k: _from_text(v) for k, v in sorted(made.get_params().items())}
    defaults.update(_OPTIONAL_PARAMS.get(name, {}))
    kind = _kind(name)
    params = list(defaults)
    # An explicit __init__ signature: scikit-learn reads the parameter names from it.
    aliases = _ORDER_ALIASES.get(name, {})  # set after the single orders, which they then replace
    args = ", ".join([f"{k}={defaults[k]!r}" for k in params] + [f"{a}=None" for a in aliases]
                     + ["device='cpu'", "n_jobs=None"])
    body = "".join(f"    self.{k} = {k}\n" for k in params + list(aliases) + ["device", "n_jobs"])
    src = f"def __init__(self, *, {args}):\n{body}"
    ns = {}
    exec(src, {}, ns)  # noqa: S102 - generated from the registry's own parameter names
    cls_name = _class_name(name)
    doc = (f"bitlearn's ``{name}`` (registry name) with scikit-learn's interface.\n\n"
           f"Parameters (defaults of the C++ estimator): "
           + ", ".join(f"{k}={defaults[k]!r}" for k in params)
           + "".join(f"; {a}=({', '.join(n)}) sets those at once" for a, n in aliases.items())
           + "; device ('cpu' or 'cuda[:N]'), n_jobs (CPU threads; results do not depend on it).")
    members = {"__init__": ns["__init__"], "__doc__": doc, "__module__": __name__,
               "_registry_name": name, "_kind": kind, "_param_names": tuple(params)}
    members.update({a: _order_alias(a, names) for a, names in aliases.items()})
    if made.supports_sample_weight and kind != "ranker":  # fit(X, y, sample_weight=None), as scikit-learn's signature
        members["fit"] = _fit_weighted
    if name.startswith(_OWN_TREE_MODELS) and kind != "ranker":  # TreeSHAP from the recorded training cover
        members["pred_contribs"] = _LoaderBase.pred_contribs
    if name in _TARGET_TRANSFORMER:
        members["fit_transform"] = _cross_fit_transform
        members["__sklearn_tags__"] = _target_tags
    if name in _EMBEDDING_TRANSFORMER:  # fit_transform gives embedding_, as scikit-learn's
        members["fit_transform"] = _EmbeddingBase.fit_transform
    cls = type(cls_name, (_GaussianProcessBase if name == "gaussian_process_regressor" else _BASES[kind],), members)
    return cls


# bitlearn's own tree models, whose model files record each node's training cover: their
# pred_contribs(X) is the imported models' (exact TreeSHAP, docs/ml-trees.md).
_OWN_TREE_MODELS = ("decision_tree_", "extra_tree_", "random_forest_", "extra_trees_", "hist_gradient_boosting_")

_REGISTRY = {}
for _name in _core.estimator_names():
    if _name == "pipeline":  # chain these classes with sklearn.pipeline.Pipeline instead (docs/ml.md)
        continue
    _cls = _make_class(_name)
    _REGISTRY[_name] = _cls
    globals()[_cls.__name__] = _cls
    __all__.append(_cls.__name__)


def estimator_class(name):
    """The class of a registry name ("ridge" -> Ridge); ValueError listing the names otherwise."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown estimator {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def registry_name_of(cls_or_obj):
    """The registry name behind a class or instance of this module."""
    return cls_or_obj._registry_name
