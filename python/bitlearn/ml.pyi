"""Type stubs of bitlearn.ml (written by python/stubs/make_stubs.py)."""
from typing import Any, Optional

import numpy as np

class BitlearnEstimator:
    def fit(self, X: Any, y: Any = None) -> "BitlearnEstimator": ...
    def predict(self, X: Any) -> np.ndarray: ...
    def score(self, X: Any, y: Any = None) -> float: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params: Any) -> "BitlearnEstimator": ...
    def model_file_text(self, feature_names: Optional[list] = None, target: Optional[str] = None) -> str: ...
    def save_model(self, path: str, feature_names: Optional[list] = None, target: Optional[str] = None) -> None: ...
    n_features_in_: int

class _ClassifierBase(BitlearnEstimator):
    classes_: np.ndarray
    def predict_proba(self, X: Any) -> np.ndarray: ...
    def predict_log_proba(self, X: Any) -> np.ndarray: ...

class _RegressorBase(BitlearnEstimator): ...

class _ClusterBase(BitlearnEstimator):
    labels_: np.ndarray
    cluster_centers_: np.ndarray
    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray: ...

class _TransformerBase(BitlearnEstimator):
    def transform(self, X: Any) -> np.ndarray: ...
    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray: ...

class _OutlierBase(BitlearnEstimator):
    def score_samples(self, X: Any) -> np.ndarray: ...
    def decision_function(self, X: Any) -> np.ndarray: ...
    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray: ...

class _LoaderBase(BitlearnEstimator): ...

class _MixtureBase(BitlearnEstimator):
    weights_: np.ndarray
    means_: np.ndarray
    covariances_: np.ndarray
    precisions_: np.ndarray
    precisions_cholesky_: np.ndarray
    converged_: bool
    n_iter_: int
    lower_bound_: float
    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray: ...
    def predict_proba(self, X: Any) -> np.ndarray: ...
    def bic(self, X: Any) -> float: ...
    def aic(self, X: Any) -> float: ...
    def sample(self, n_samples: int = 1) -> tuple: ...

class _DensityBase(BitlearnEstimator):
    bandwidth_: float
    def score_samples(self, X: Any) -> np.ndarray: ...
    def sample(self, n_samples: int = 1, random_state: Any = None) -> np.ndarray: ...

class _NeighborsBase(BitlearnEstimator):
    n_samples_fit_: int
    def kneighbors(self, X: Any = None, n_neighbors: Optional[int] = None,
                   return_distance: bool = True) -> Any: ...

class _EmbeddingBase(BitlearnEstimator):
    embedding_: np.ndarray
    stress_: float
    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray: ...

class _ForecasterBase(BitlearnEstimator):
    params_: Any
    nobs_: int
    def fit(self, y: Any, X: Any = None) -> "_ForecasterBase": ...
    def predict(self, X: Any = None) -> np.ndarray: ...
    def forecast(self, steps: int, exog: Any = None, alpha: float = 0.05) -> tuple: ...
    def score(self, y: Any, X: Any = None) -> float: ...

class _RankerBase(BitlearnEstimator):
    def fit(self, X: Any, y: Any, group: Any = None, qid: Any = None,
            sample_weight: Any = None) -> "_RankerBase": ...
    def score(self, X: Any, y: Any, group: Any = None, qid: Any = None, sample_weight: Any = None) -> float: ...

def estimator_class(name: str) -> type: ...
def registry_name_of(cls_or_obj: Any) -> str: ...

class ARDRegression(_RegressorBase):
    """registry name: ard_regression"""
    def __init__(self, *, alpha_1: float = 1e-06, alpha_2: float = 1e-06, fit_intercept: bool = True, lambda_1: float = 1e-06, lambda_2: float = 1e-06, max_iter: float = 300, threshold_lambda: float = 10000.0, tol: float = 0.001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class ARIMA(_ForecasterBase):
    """registry name: arima"""
    def __init__(self, *, d: float = 0, enforce_invertibility: bool = True, enforce_stationarity: bool = True, max_iter: float = 200, p: float = 1, q: float = 0, tol: float = 1e-08, trend: str = 'n', order: Any = None, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class AdaBoostClassifier(_ClassifierBase):
    """registry name: adaboost_classifier"""
    def __init__(self, *, estimator: str = 'decision_tree_classifier(max_depth=1)', learning_rate: float = 1, n_estimators: float = 50, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class AdaBoostRegressor(_RegressorBase):
    """registry name: adaboost_regressor"""
    def __init__(self, *, estimator: str = 'decision_tree_regressor(max_depth=3)', learning_rate: float = 1, loss: str = 'linear', n_estimators: float = 50, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class AffinityPropagation(_ClusterBase):
    """registry name: affinity_propagation"""
    def __init__(self, *, affinity: str = 'euclidean', convergence_iter: float = 15, damping: float = 0.5, max_iter: float = 200, preference: Any = None, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class AgglomerativeClustering(_ClusterBase):
    """registry name: agglomerative_clustering"""
    def __init__(self, *, distance_threshold: Any = None, linkage: str = 'ward', metric: str = 'euclidean', n_clusters: float = 2, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class BaggingClassifier(_ClassifierBase):
    """registry name: bagging_classifier"""
    def __init__(self, *, bootstrap: bool = True, bootstrap_features: bool = False, estimator: str = 'decision_tree_classifier', max_features: float = 1.0, max_samples: float = 1.0, n_estimators: float = 10, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class BaggingRegressor(_RegressorBase):
    """registry name: bagging_regressor"""
    def __init__(self, *, bootstrap: bool = True, bootstrap_features: bool = False, estimator: str = 'decision_tree_regressor', max_features: float = 1.0, max_samples: float = 1.0, n_estimators: float = 10, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class BayesianGaussianMixture(_MixtureBase):
    """registry name: bayesian_gaussian_mixture"""
    def __init__(self, *, covariance_prior: Any = None, covariance_type: str = 'full', degrees_of_freedom_prior: Any = None, init_params: str = 'kmeans', max_iter: float = 100, mean_precision_prior: Any = None, mean_prior: Any = None, n_components: float = 1, n_init: float = 1, random_state: float = 0, reg_covar: float = 1e-06, tol: float = 0.001, weight_concentration_prior: Any = None, weight_concentration_prior_type: str = 'dirichlet_process', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class BayesianRidge(_RegressorBase):
    """registry name: bayesian_ridge"""
    def __init__(self, *, alpha_1: float = 1e-06, alpha_2: float = 1e-06, fit_intercept: bool = True, lambda_1: float = 1e-06, lambda_2: float = 1e-06, max_iter: float = 300, tol: float = 0.001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class BernoulliNB(_ClassifierBase):
    """registry name: bernoulli_nb"""
    def __init__(self, *, alpha: float = 1, binarize: float = 0, fit_prior: bool = True, force_alpha: bool = True, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class Birch(_ClusterBase):
    """registry name: birch"""
    def __init__(self, *, branching_factor: float = 50, compute_labels: bool = True, n_clusters: float = 3, threshold: float = 0.5, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class BisectingKMeans(_ClusterBase):
    """registry name: bisecting_kmeans"""
    def __init__(self, *, bisecting_strategy: str = 'biggest_inertia', init: str = 'random', max_iter: float = 300, n_clusters: float = 8, n_init: float = 1, random_state: float = 0, tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class CategoricalNB(_ClassifierBase):
    """registry name: categorical_nb"""
    def __init__(self, *, alpha: float = 1, fit_prior: bool = True, force_alpha: bool = True, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class ComplementNB(_ClassifierBase):
    """registry name: complement_nb"""
    def __init__(self, *, alpha: float = 1, fit_prior: bool = True, force_alpha: bool = True, norm: bool = False, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class DBSCAN(_ClusterBase):
    """registry name: dbscan"""
    def __init__(self, *, eps: float = 0.5, metric: str = 'euclidean', min_samples: float = 5, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class DecisionTreeClassifier(_ClassifierBase):
    """registry name: decision_tree_classifier"""
    def __init__(self, *, criterion: str = 'gini', max_depth: Any = None, max_features: str = 'all', min_samples_leaf: float = 1, min_samples_split: float = 2, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class DecisionTreeRegressor(_RegressorBase):
    """registry name: decision_tree_regressor"""
    def __init__(self, *, criterion: str = 'squared_error', max_depth: Any = None, max_features: str = 'all', min_samples_leaf: float = 1, min_samples_split: float = 2, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class DictionaryLearning(_TransformerBase):
    """registry name: dictionary_learning"""
    def __init__(self, *, alpha: float = 1, fit_algorithm: str = 'cd', max_iter: float = 1000, n_components: Any = None, positive_code: bool = False, positive_dict: bool = False, random_state: float = 0, split_sign: bool = False, tol: float = 1e-08, transform_algorithm: str = 'omp', transform_alpha: Any = None, transform_max_iter: float = 1000, transform_n_nonzero_coefs: Any = None, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class ElasticNet(_RegressorBase):
    """registry name: elastic_net"""
    def __init__(self, *, alpha: float = 1, fit_intercept: bool = True, l1_ratio: float = 0.5, max_iter: float = 1000, tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class ExponentialSmoothing(_ForecasterBase):
    """registry name: exponential_smoothing"""
    def __init__(self, *, damped_trend: bool = False, damping_trend: Any = None, initialization_method: str = 'estimated', max_iter: float = 1000, seasonal: Any = None, seasonal_periods: float = 0, smoothing_level: Any = None, smoothing_seasonal: Any = None, smoothing_trend: Any = None, trend: Any = None, use_brute: bool = True, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class ExtraTreeClassifier(_ClassifierBase):
    """registry name: extra_tree_classifier"""
    def __init__(self, *, criterion: str = 'gini', max_depth: Any = None, max_features: str = 'sqrt', min_samples_leaf: float = 1, min_samples_split: float = 2, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class ExtraTreeRegressor(_RegressorBase):
    """registry name: extra_tree_regressor"""
    def __init__(self, *, criterion: str = 'squared_error', max_depth: Any = None, max_features: str = 'all', min_samples_leaf: float = 1, min_samples_split: float = 2, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class ExtraTreesClassifier(_ClassifierBase):
    """registry name: extra_trees_classifier"""
    def __init__(self, *, bootstrap: bool = False, criterion: str = 'gini', max_depth: Any = None, max_features: str = 'sqrt', min_samples_leaf: float = 1, min_samples_split: float = 2, n_estimators: float = 100, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class ExtraTreesRegressor(_RegressorBase):
    """registry name: extra_trees_regressor"""
    def __init__(self, *, bootstrap: bool = False, criterion: str = 'squared_error', max_depth: Any = None, max_features: str = 'all', min_samples_leaf: float = 1, min_samples_split: float = 2, n_estimators: float = 100, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class FactorAnalysis(_TransformerBase):
    """registry name: factor_analysis"""
    def __init__(self, *, max_iter: float = 1000, n_components: Any = None, tol: float = 0.01, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class FastICA(_TransformerBase):
    """registry name: fast_ica"""
    def __init__(self, *, algorithm: str = 'parallel', fun: str = 'logcosh', max_iter: float = 200, n_components: Any = None, random_state: float = 0, tol: float = 0.0001, whiten: str = 'unit-variance', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class GammaRegressor(_RegressorBase):
    """registry name: gamma_regressor"""
    def __init__(self, *, alpha: float = 1, fit_intercept: bool = True, max_iter: float = 100, tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class GaussianMixture(_MixtureBase):
    """registry name: gaussian_mixture"""
    def __init__(self, *, covariance_type: str = 'full', init_params: str = 'kmeans', max_iter: float = 100, n_components: float = 1, n_init: float = 1, random_state: float = 0, reg_covar: float = 1e-06, tol: float = 0.001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class GaussianNB(_ClassifierBase):
    """registry name: gaussian_nb"""
    def __init__(self, *, var_smoothing: float = 1e-09, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class GaussianProcessClassifier(_ClassifierBase):
    """registry name: gaussian_process_classifier"""
    def __init__(self, *, kernel: Any = None, max_iter_predict: float = 100, multi_class: str = 'one_vs_rest', n_restarts_optimizer: float = 0, optimizer: str = 'fmin_l_bfgs_b', random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class GaussianProcessRegressor(_RegressorBase):
    """registry name: gaussian_process_regressor"""
    def __init__(self, *, alpha: float = 1e-10, kernel: Any = None, n_restarts_optimizer: float = 0, normalize_y: bool = False, optimizer: str = 'fmin_l_bfgs_b', random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class HDBSCAN(_ClusterBase):
    """registry name: hdbscan"""
    def __init__(self, *, allow_single_cluster: bool = False, alpha: float = 1, cluster_selection_epsilon: float = 0, cluster_selection_method: str = 'eom', max_cluster_size: Any = None, metric: str = 'euclidean', min_cluster_size: float = 5, min_samples: Any = None, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class HistGradientBoostingClassifier(_ClassifierBase):
    """registry name: hist_gradient_boosting_classifier"""
    def __init__(self, *, colsample_bytree: float = 1, grow_policy: str = 'lossguide', l1_regularization: float = 0, l2_regularization: float = 0, learning_rate: float = 0.1, max_bins: float = 255, max_depth: Any = None, max_iter: float = 100, max_leaf_nodes: float = 31, min_child_weight: float = 0.001, min_samples_leaf: float = 20, min_split_gain: float = 0, random_state: float = 0, subsample: float = 1, early_stopping: bool = False, scoring: str = 'loss', validation_fraction: float = 0.1, n_iter_no_change: float = 10, tol: float = 1e-07, monotonic_cst: Any = None, interaction_cst: Any = None, categorical_features: Any = None, loss: str = 'log_loss', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class HistGradientBoostingRanker(_RankerBase):
    """registry name: hist_gradient_boosting_ranker"""
    def __init__(self, *, colsample_bytree: float = 1, eval_at: float = 5, group_column: Any = None, grow_policy: str = 'lossguide', l1_regularization: float = 0, l2_regularization: float = 0, lambdarank_norm: bool = True, lambdarank_truncation_level: float = 30, learning_rate: float = 0.1, loss: str = 'lambdarank', max_bins: float = 255, max_depth: Any = None, max_iter: float = 100, max_leaf_nodes: float = 31, min_child_weight: float = 0.001, min_samples_leaf: float = 20, min_split_gain: float = 0, random_state: float = 0, sigmoid: float = 1, subsample: float = 1, early_stopping: bool = False, scoring: str = 'loss', validation_fraction: float = 0.1, n_iter_no_change: float = 10, tol: float = 1e-07, monotonic_cst: Any = None, interaction_cst: Any = None, categorical_features: Any = None, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class HistGradientBoostingRegressor(_RegressorBase):
    """registry name: hist_gradient_boosting_regressor"""
    def __init__(self, *, colsample_bytree: float = 1, grow_policy: str = 'lossguide', l1_regularization: float = 0, l2_regularization: float = 0, learning_rate: float = 0.1, max_bins: float = 255, max_depth: Any = None, max_iter: float = 100, max_leaf_nodes: float = 31, min_child_weight: float = 0.001, min_samples_leaf: float = 20, min_split_gain: float = 0, random_state: float = 0, subsample: float = 1, early_stopping: bool = False, scoring: str = 'loss', validation_fraction: float = 0.1, n_iter_no_change: float = 10, tol: float = 1e-07, monotonic_cst: Any = None, interaction_cst: Any = None, categorical_features: Any = None, loss: str = 'squared_error', quantile: Any = None, power: float = 1.5, alpha: float = 0.9, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class HuberRegressor(_RegressorBase):
    """registry name: huber_regressor"""
    def __init__(self, *, alpha: float = 0.0001, epsilon: float = 1.35, fit_intercept: bool = True, max_iter: float = 100, tol: float = 1e-05, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class IncrementalPCA(_TransformerBase):
    """registry name: incremental_pca"""
    def __init__(self, *, batch_size: Any = None, n_components: Any = None, whiten: bool = False, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class IsolationForest(_OutlierBase):
    """registry name: isolation_forest"""
    def __init__(self, *, bootstrap: bool = False, contamination: str = 'auto', max_features: float = 1.0, max_samples: str = 'auto', n_estimators: float = 100, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class Isomap(_TransformerBase):
    """registry name: isomap"""
    def __init__(self, *, n_components: float = 2, n_neighbors: float = 5, path_method: str = 'auto', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class IsotonicRegression(_RegressorBase):
    """registry name: isotonic_regression"""
    def __init__(self, *, increasing: bool = True, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class KMeans(_ClusterBase):
    """registry name: kmeans"""
    def __init__(self, *, init: str = 'k-means++', max_iter: float = 300, n_clusters: float = 8, random_state: float = 0, tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class KNNImputer(_TransformerBase):
    """registry name: knn_imputer"""
    def __init__(self, *, metric: str = 'nan_euclidean', n_neighbors: float = 5, weights: str = 'uniform', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class KNeighborsClassifier(_ClassifierBase):
    """registry name: kneighbors_classifier"""
    def __init__(self, *, algorithm: str = 'auto', leaf_size: float = 30, metric: str = 'minkowski', n_neighbors: float = 5, p: float = 2, weights: str = 'uniform', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class KNeighborsRegressor(_RegressorBase):
    """registry name: kneighbors_regressor"""
    def __init__(self, *, algorithm: str = 'auto', leaf_size: float = 30, metric: str = 'minkowski', n_neighbors: float = 5, p: float = 2, weights: str = 'uniform', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class KernelDensity(_DensityBase):
    """registry name: kernel_density"""
    def __init__(self, *, bandwidth: float = 1, kernel: str = 'gaussian', metric: str = 'euclidean', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class KernelPCA(_TransformerBase):
    """registry name: kernel_pca"""
    def __init__(self, *, coef0: float = 1, degree: float = 3, gamma: Any = None, kernel: str = 'linear', n_components: Any = None, remove_zero_eig: bool = False, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class KernelRidge(_RegressorBase):
    """registry name: kernel_ridge"""
    def __init__(self, *, alpha: float = 1, coef0: float = 1, degree: float = 3, gamma: Any = None, kernel: str = 'linear', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class Lars(_RegressorBase):
    """registry name: lars"""
    def __init__(self, *, fit_intercept: bool = True, n_nonzero_coefs: float = 500, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class Lasso(_RegressorBase):
    """registry name: lasso"""
    def __init__(self, *, alpha: float = 1, fit_intercept: bool = True, max_iter: float = 1000, tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class LassoLars(_RegressorBase):
    """registry name: lasso_lars"""
    def __init__(self, *, alpha: float = 1, fit_intercept: bool = True, max_iter: float = 500, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class LatentDirichletAllocation(_TransformerBase):
    """registry name: latent_dirichlet_allocation"""
    def __init__(self, *, batch_size: float = 128, doc_topic_prior: Any = None, evaluate_every: float = -1, learning_decay: float = 0.7, learning_method: str = 'batch', learning_offset: float = 10.0, max_doc_update_iter: float = 100, max_iter: float = 10, mean_change_tol: float = 0.001, n_components: float = 10, perp_tol: float = 0.1, random_state: float = 0, topic_word_prior: Any = None, total_samples: float = 1000000.0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class LightGBMModel(_LoaderBase):
    """registry name: lightgbm_model"""
    def __init__(self, *, model_file: str = '', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class LinearDiscriminantAnalysis(_ClassifierBase):
    """registry name: linear_discriminant_analysis"""
    def __init__(self, *, n_components: float = 0, shrinkage: Any = None, solver: str = 'svd', tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class LinearRegression(_RegressorBase):
    """registry name: linear_regression"""
    def __init__(self, *, fit_intercept: bool = True, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class LinearSVC(_ClassifierBase):
    """registry name: linear_svc"""
    def __init__(self, *, C: float = 1, dual: str = 'auto', fit_intercept: bool = True, intercept_scaling: float = 1, loss: str = 'squared_hinge', max_iter: float = 1000, multi_class: str = 'ovr', penalty: str = 'l2', random_state: float = 0, tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class LinearSVR(_RegressorBase):
    """registry name: linear_svr"""
    def __init__(self, *, C: float = 1, dual: str = 'auto', epsilon: float = 0, fit_intercept: bool = True, intercept_scaling: float = 1, loss: str = 'epsilon_insensitive', max_iter: float = 1000, random_state: float = 0, tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class LocalOutlierFactor(_OutlierBase):
    """registry name: local_outlier_factor"""
    def __init__(self, *, algorithm: str = 'auto', contamination: str = 'auto', leaf_size: float = 30, n_neighbors: float = 20, novelty: bool = True, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class LocallyLinearEmbedding(_TransformerBase):
    """registry name: locally_linear_embedding"""
    def __init__(self, *, method: str = 'standard', n_components: float = 2, n_neighbors: float = 5, reg: float = 0.001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class LogisticRegression(_ClassifierBase):
    """registry name: logistic_regression"""
    def __init__(self, *, C: float = 1, fit_intercept: bool = True, max_iter: float = 100, penalty: str = 'l2', tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class MDS(_EmbeddingBase):
    """registry name: mds"""
    def __init__(self, *, eps: float = 1e-06, init: str = 'random', max_iter: float = 300, metric: str = 'euclidean', n_components: float = 2, n_init: float = 1, normalized_stress: bool = False, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class MLPClassifier(_ClassifierBase):
    """registry name: mlp_classifier"""
    def __init__(self, *, activation: str = 'relu', alpha: float = 0.0001, batch_size: str = 'auto', beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-08, hidden_layer_sizes: float = 100, learning_rate_init: float = 0.001, max_iter: float = 200, momentum: float = 0.9, n_iter_no_change: float = 10, nesterovs_momentum: bool = True, random_state: float = 0, shuffle: bool = True, solver: str = 'adam', tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class MLPRegressor(_RegressorBase):
    """registry name: mlp_regressor"""
    def __init__(self, *, activation: str = 'relu', alpha: float = 0.0001, batch_size: str = 'auto', beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-08, hidden_layer_sizes: float = 100, learning_rate_init: float = 0.001, max_iter: float = 200, momentum: float = 0.9, n_iter_no_change: float = 10, nesterovs_momentum: bool = True, random_state: float = 0, shuffle: bool = True, solver: str = 'adam', tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class MaxAbsScaler(_TransformerBase):
    """registry name: max_abs_scaler"""
    def __init__(self, *, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class MeanShift(_ClusterBase):
    """registry name: mean_shift"""
    def __init__(self, *, bandwidth: Any = None, bin_seeding: bool = False, cluster_all: bool = True, max_iter: float = 300, min_bin_freq: float = 1, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class MinMaxScaler(_TransformerBase):
    """registry name: min_max_scaler"""
    def __init__(self, *, clip: bool = False, feature_range: str = '0,1', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class MiniBatchKMeans(_ClusterBase):
    """registry name: minibatch_kmeans"""
    def __init__(self, *, batch_size: float = 1024, max_iter: float = 100, max_no_improvement: float = 10, n_clusters: float = 8, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class MultinomialNB(_ClassifierBase):
    """registry name: multinomial_nb"""
    def __init__(self, *, alpha: float = 1, fit_prior: bool = True, force_alpha: bool = True, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class NMF(_TransformerBase):
    """registry name: nmf"""
    def __init__(self, *, init: Any = None, max_iter: float = 200, n_components: str = 'auto', random_state: float = 0, solver: str = 'cd', tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class NearestCentroid(_ClassifierBase):
    """registry name: nearest_centroid"""
    def __init__(self, *, metric: str = 'euclidean', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class NearestNeighbors(_NeighborsBase):
    """registry name: nearest_neighbors"""
    def __init__(self, *, algorithm: str = 'auto', leaf_size: float = 30, metric: str = 'minkowski', n_neighbors: float = 5, p: float = 2, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class Normalizer(_TransformerBase):
    """registry name: normalizer"""
    def __init__(self, *, norm: str = 'l2', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class NuSVC(_ClassifierBase):
    """registry name: nu_svc"""
    def __init__(self, *, coef0: float = 0, decision_function_shape: str = 'ovr', degree: float = 3, gamma: str = 'scale', kernel: str = 'rbf', max_iter: float = -1, nu: float = 0.5, probability: bool = False, random_state: float = 0, tol: float = 0.001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class NuSVR(_RegressorBase):
    """registry name: nu_svr"""
    def __init__(self, *, C: float = 1, coef0: float = 0, degree: float = 3, gamma: str = 'scale', kernel: str = 'rbf', max_iter: float = -1, nu: float = 0.5, tol: float = 0.001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class Nystroem(_TransformerBase):
    """registry name: nystroem"""
    def __init__(self, *, coef0: Any = None, degree: Any = None, gamma: Any = None, kernel: str = 'rbf', n_components: float = 100, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class OPTICS(_ClusterBase):
    """registry name: optics"""
    def __init__(self, *, cluster_method: str = 'xi', eps: Any = None, max_eps: str = 'inf', metric: str = 'euclidean', min_cluster_size: Any = None, min_samples: float = 5, predecessor_correction: bool = True, xi: float = 0.05, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class OneClassSVM(_OutlierBase):
    """registry name: one_class_svm"""
    def __init__(self, *, coef0: float = 0, degree: float = 3, gamma: str = 'scale', kernel: str = 'rbf', max_iter: float = -1, nu: float = 0.5, tol: float = 0.001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class OneHotEncoder(_TransformerBase):
    """registry name: one_hot_encoder"""
    def __init__(self, *, drop: Any = None, handle_unknown: str = 'error', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class OrdinalEncoder(_TransformerBase):
    """registry name: ordinal_encoder"""
    def __init__(self, *, handle_unknown: str = 'error', unknown_value: Any = None, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class PCA(_TransformerBase):
    """registry name: pca"""
    def __init__(self, *, n_components: float = 0, whiten: bool = False, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class PoissonRegressor(_RegressorBase):
    """registry name: poisson_regressor"""
    def __init__(self, *, alpha: float = 1, fit_intercept: bool = True, max_iter: float = 100, tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class PolynomialFeatures(_TransformerBase):
    """registry name: polynomial_features"""
    def __init__(self, *, degree: float = 2, include_bias: bool = True, interaction_only: bool = False, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class PowerTransformer(_TransformerBase):
    """registry name: power_transformer"""
    def __init__(self, *, method: str = 'yeo-johnson', standardize: bool = True, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class QuadraticDiscriminantAnalysis(_ClassifierBase):
    """registry name: quadratic_discriminant_analysis"""
    def __init__(self, *, reg_param: float = 0, tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class QuantileRegressor(_RegressorBase):
    """registry name: quantile_regressor"""
    def __init__(self, *, alpha: float = 1, fit_intercept: bool = True, max_iter: float = 100, quantile: float = 0.5, tol: float = 1e-06, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class QuantileTransformer(_TransformerBase):
    """registry name: quantile_transformer"""
    def __init__(self, *, n_quantiles: float = 1000, output_distribution: str = 'uniform', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class RBFSampler(_TransformerBase):
    """registry name: rbf_sampler"""
    def __init__(self, *, gamma: float = 1, n_components: float = 100, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class RadiusNeighborsClassifier(_ClassifierBase):
    """registry name: radius_neighbors_classifier"""
    def __init__(self, *, algorithm: str = 'auto', leaf_size: float = 30, outlier_label: Any = None, radius: float = 1, weights: str = 'uniform', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class RadiusNeighborsRegressor(_RegressorBase):
    """registry name: radius_neighbors_regressor"""
    def __init__(self, *, algorithm: str = 'auto', leaf_size: float = 30, radius: float = 1, weights: str = 'uniform', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class RandomForestClassifier(_ClassifierBase):
    """registry name: random_forest_classifier"""
    def __init__(self, *, bootstrap: bool = True, criterion: str = 'gini', max_depth: Any = None, max_features: str = 'sqrt', min_samples_leaf: float = 1, min_samples_split: float = 2, n_estimators: float = 100, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class RandomForestRegressor(_RegressorBase):
    """registry name: random_forest_regressor"""
    def __init__(self, *, bootstrap: bool = True, criterion: str = 'squared_error', max_depth: Any = None, max_features: str = 'all', min_samples_leaf: float = 1, min_samples_split: float = 2, n_estimators: float = 100, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class Ridge(_RegressorBase):
    """registry name: ridge"""
    def __init__(self, *, alpha: float = 1, fit_intercept: bool = True, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class RobustScaler(_TransformerBase):
    """registry name: robust_scaler"""
    def __init__(self, *, quantile_range: str = '25,75', with_centering: bool = True, with_scaling: bool = True, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class SARIMAX(_ForecasterBase):
    """registry name: sarimax"""
    def __init__(self, *, d: float = 0, enforce_invertibility: bool = True, enforce_stationarity: bool = True, max_iter: float = 200, p: float = 1, q: float = 0, s: float = 0, seasonal_d: float = 0, seasonal_p: float = 0, seasonal_q: float = 0, tol: float = 1e-08, trend: str = 'n', order: Any = None, seasonal_order: Any = None, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class SGDClassifier(_ClassifierBase):
    """registry name: sgd_classifier"""
    def __init__(self, *, alpha: float = 0.0001, epsilon: float = 0.1, eta0: float = 0.01, fit_intercept: bool = True, l1_ratio: float = 0.15, learning_rate: str = 'optimal', loss: str = 'hinge', max_iter: float = 1000, n_iter_no_change: float = 5, penalty: str = 'l2', power_t: float = 0.5, random_state: float = 0, shuffle: bool = True, tol: float = 0.001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class SGDRegressor(_RegressorBase):
    """registry name: sgd_regressor"""
    def __init__(self, *, alpha: float = 0.0001, epsilon: float = 0.1, eta0: float = 0.01, fit_intercept: bool = True, l1_ratio: float = 0.15, learning_rate: str = 'invscaling', loss: str = 'squared_error', max_iter: float = 1000, n_iter_no_change: float = 5, penalty: str = 'l2', power_t: float = 0.25, random_state: float = 0, shuffle: bool = True, tol: float = 0.001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class SVC(_ClassifierBase):
    """registry name: svc"""
    def __init__(self, *, C: float = 1, coef0: float = 0, decision_function_shape: str = 'ovr', degree: float = 3, gamma: str = 'scale', kernel: str = 'rbf', max_iter: float = -1, probability: bool = False, random_state: float = 0, tol: float = 0.001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class SVR(_RegressorBase):
    """registry name: svr"""
    def __init__(self, *, C: float = 1, coef0: float = 0, degree: float = 3, epsilon: float = 0.1, gamma: str = 'scale', kernel: str = 'rbf', max_iter: float = -1, tol: float = 0.001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class SimpleImputer(_TransformerBase):
    """registry name: simple_imputer"""
    def __init__(self, *, fill_value: Any = None, strategy: str = 'mean', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class SparsePCA(_TransformerBase):
    """registry name: sparse_pca"""
    def __init__(self, *, alpha: float = 1, max_iter: float = 1000, method: str = 'cd', n_components: Any = None, random_state: float = 0, ridge_alpha: float = 0.01, tol: float = 1e-08, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class SpectralClustering(_ClusterBase):
    """registry name: spectral_clustering"""
    def __init__(self, *, affinity: str = 'rbf', assign_labels: str = 'kmeans', gamma: float = 1, n_clusters: float = 8, n_neighbors: float = 10, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class SpectralEmbedding(_EmbeddingBase):
    """registry name: spectral_embedding"""
    def __init__(self, *, affinity: str = 'nearest_neighbors', gamma: Any = None, n_components: float = 2, n_neighbors: Any = None, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class SplineTransformer(_TransformerBase):
    """registry name: spline_transformer"""
    def __init__(self, *, degree: float = 3, extrapolation: str = 'constant', include_bias: bool = True, knots: str = 'uniform', n_knots: float = 5, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class StackingClassifier(_ClassifierBase):
    """registry name: stacking_classifier"""
    def __init__(self, *, cv: float = 5, estimators: str = '', final_estimator: str = 'logistic_regression', passthrough: bool = False, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class StackingRegressor(_RegressorBase):
    """registry name: stacking_regressor"""
    def __init__(self, *, cv: float = 5, estimators: str = '', final_estimator: str = 'ridge', passthrough: bool = False, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class StandardScaler(_TransformerBase):
    """registry name: standard_scaler"""
    def __init__(self, *, with_mean: bool = True, with_std: bool = True, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class TSNE(_EmbeddingBase):
    """registry name: tsne"""
    def __init__(self, *, angle: float = 0.5, early_exaggeration: float = 12, init: str = 'pca', learning_rate: str = 'auto', max_iter: float = 1000, method: str = 'exact', metric: str = 'euclidean', min_grad_norm: float = 1e-07, n_components: float = 2, n_iter_without_progress: float = 300, perplexity: float = 30.0, random_state: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class TargetEncoder(_TransformerBase):
    """registry name: target_encoder"""
    def __init__(self, *, cv: float = 5, random_state: float = 0, shuffle: bool = True, smooth: str = 'auto', target_type: str = 'auto', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class TruncatedSVD(_TransformerBase):
    """registry name: truncated_svd"""
    def __init__(self, *, algorithm: str = 'randomized', n_components: float = 2, n_iter: float = 5, n_oversamples: float = 10, random_state: float = 0, tol: float = 0, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class TweedieRegressor(_RegressorBase):
    """registry name: tweedie_regressor"""
    def __init__(self, *, alpha: float = 1, fit_intercept: bool = True, link: str = 'auto', max_iter: float = 100, power: float = 0, tol: float = 0.0001, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class UMAP(_TransformerBase):
    """registry name: umap"""
    def __init__(self, *, init: str = 'spectral', learning_rate: float = 1, metric: str = 'euclidean', min_dist: float = 0.1, n_components: float = 2, n_epochs: Any = None, n_neighbors: float = 15, negative_sample_rate: float = 5, random_state: float = 0, spread: float = 1, device: str = 'cpu', n_jobs: Any = None) -> None: ...

class VotingClassifier(_ClassifierBase):
    """registry name: voting_classifier"""
    def __init__(self, *, estimators: str = '', voting: str = 'hard', weights: str = '', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class VotingRegressor(_RegressorBase):
    """registry name: voting_regressor"""
    def __init__(self, *, estimators: str = '', weights: str = '', device: str = 'cpu', n_jobs: Any = None) -> None: ...

class XGBoostModel(_LoaderBase):
    """registry name: xgboost_model"""
    def __init__(self, *, model_file: str = '', device: str = 'cpu', n_jobs: Any = None) -> None: ...
