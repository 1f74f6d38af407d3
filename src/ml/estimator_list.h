// estimator_list.h: every estimator of the library, one line each, in registry order, grouped by the
// family folder that holds its code. BL_ML_ESTIMATOR(name) stands for the registry name "name"
// (`bitlearn fit --model name`) and its factory `std::unique_ptr<Estimator> make_name()`, defined in
// the family's .cpp. Included with BL_ML_ESTIMATOR defined: by ml/registry.h to declare the factories
// and by ml/registry.cpp to build the registry table (no include guard: each user expands it anew).
// Adding an estimator: its .cpp with make_NAME, and one line here.
#ifndef BL_ML_ESTIMATOR
#error "define BL_ML_ESTIMATOR(name) before including ml/estimator_list.h"
#endif

// src/ml/linear/
BL_ML_ESTIMATOR(linear_regression)
BL_ML_ESTIMATOR(ridge)
BL_ML_ESTIMATOR(lasso)
BL_ML_ESTIMATOR(elastic_net)
BL_ML_ESTIMATOR(logistic_regression)
BL_ML_ESTIMATOR(bayesian_ridge)
BL_ML_ESTIMATOR(isotonic_regression)
BL_ML_ESTIMATOR(sgd_classifier)
BL_ML_ESTIMATOR(sgd_regressor)
BL_ML_ESTIMATOR(huber_regressor)
BL_ML_ESTIMATOR(quantile_regressor)
BL_ML_ESTIMATOR(ard_regression)
BL_ML_ESTIMATOR(lars)
BL_ML_ESTIMATOR(lasso_lars)
BL_ML_ESTIMATOR(poisson_regressor)
BL_ML_ESTIMATOR(gamma_regressor)
BL_ML_ESTIMATOR(tweedie_regressor)

// src/ml/cluster/
BL_ML_ESTIMATOR(affinity_propagation)
BL_ML_ESTIMATOR(agglomerative_clustering)
BL_ML_ESTIMATOR(birch)
BL_ML_ESTIMATOR(bisecting_kmeans)
BL_ML_ESTIMATOR(dbscan)
BL_ML_ESTIMATOR(hdbscan)
BL_ML_ESTIMATOR(kmeans)
BL_ML_ESTIMATOR(mean_shift)
BL_ML_ESTIMATOR(minibatch_kmeans)
BL_ML_ESTIMATOR(optics)
BL_ML_ESTIMATOR(spectral_clustering)

// src/ml/neighbors/
BL_ML_ESTIMATOR(kneighbors_classifier)
BL_ML_ESTIMATOR(kneighbors_regressor)
BL_ML_ESTIMATOR(nearest_neighbors)
BL_ML_ESTIMATOR(nearest_centroid)
BL_ML_ESTIMATOR(radius_neighbors_classifier)
BL_ML_ESTIMATOR(radius_neighbors_regressor)
BL_ML_ESTIMATOR(local_outlier_factor)

// src/ml/decomposition/
BL_ML_ESTIMATOR(pca)
BL_ML_ESTIMATOR(truncated_svd)
BL_ML_ESTIMATOR(kernel_pca)
BL_ML_ESTIMATOR(factor_analysis)
BL_ML_ESTIMATOR(nmf)
BL_ML_ESTIMATOR(latent_dirichlet_allocation)
BL_ML_ESTIMATOR(incremental_pca)
BL_ML_ESTIMATOR(fast_ica)
BL_ML_ESTIMATOR(dictionary_learning)
BL_ML_ESTIMATOR(sparse_pca)

// src/ml/manifold/
BL_ML_ESTIMATOR(mds)
BL_ML_ESTIMATOR(isomap)
BL_ML_ESTIMATOR(spectral_embedding)
BL_ML_ESTIMATOR(locally_linear_embedding)
BL_ML_ESTIMATOR(tsne)
BL_ML_ESTIMATOR(umap)

// src/ml/tree/ (trees and forests)
BL_ML_ESTIMATOR(decision_tree_classifier)
BL_ML_ESTIMATOR(decision_tree_regressor)
BL_ML_ESTIMATOR(extra_tree_classifier)
BL_ML_ESTIMATOR(extra_tree_regressor)
BL_ML_ESTIMATOR(random_forest_classifier)
BL_ML_ESTIMATOR(random_forest_regressor)
BL_ML_ESTIMATOR(extra_trees_classifier)
BL_ML_ESTIMATOR(extra_trees_regressor)

// src/ml/ensemble/ (bagging, isolation forest, voting, stacking, AdaBoost)
BL_ML_ESTIMATOR(bagging_classifier)
BL_ML_ESTIMATOR(bagging_regressor)
BL_ML_ESTIMATOR(isolation_forest)
BL_ML_ESTIMATOR(voting_classifier)
BL_ML_ESTIMATOR(voting_regressor)
BL_ML_ESTIMATOR(stacking_classifier)
BL_ML_ESTIMATOR(stacking_regressor)
BL_ML_ESTIMATOR(adaboost_classifier)
BL_ML_ESTIMATOR(adaboost_regressor)

// src/ml/boosting/
BL_ML_ESTIMATOR(hist_gradient_boosting_classifier)
BL_ML_ESTIMATOR(hist_gradient_boosting_regressor)
BL_ML_ESTIMATOR(hist_gradient_boosting_ranker)
BL_ML_ESTIMATOR(xgboost_model)
BL_ML_ESTIMATOR(lightgbm_model)

// src/ml/naive_bayes/
BL_ML_ESTIMATOR(bernoulli_nb)
BL_ML_ESTIMATOR(categorical_nb)
BL_ML_ESTIMATOR(complement_nb)
BL_ML_ESTIMATOR(gaussian_nb)
BL_ML_ESTIMATOR(multinomial_nb)

// src/ml/discriminant/
BL_ML_ESTIMATOR(linear_discriminant_analysis)
BL_ML_ESTIMATOR(quadratic_discriminant_analysis)

// src/ml/kernel/
BL_ML_ESTIMATOR(kernel_ridge)

// src/ml/mixture/
BL_ML_ESTIMATOR(gaussian_mixture)
BL_ML_ESTIMATOR(bayesian_gaussian_mixture)

// src/ml/density/
BL_ML_ESTIMATOR(kernel_density)

// src/ml/kernel_approximation/
BL_ML_ESTIMATOR(nystroem)
BL_ML_ESTIMATOR(rbf_sampler)

// src/ml/svm/
BL_ML_ESTIMATOR(svc)
BL_ML_ESTIMATOR(svr)
BL_ML_ESTIMATOR(nu_svc)
BL_ML_ESTIMATOR(nu_svr)
BL_ML_ESTIMATOR(one_class_svm)
BL_ML_ESTIMATOR(linear_svc)
BL_ML_ESTIMATOR(linear_svr)

// src/ml/gaussian_process/
BL_ML_ESTIMATOR(gaussian_process_regressor)
BL_ML_ESTIMATOR(gaussian_process_classifier)

// src/ml/neural/ (multi-layer perceptrons)
BL_ML_ESTIMATOR(mlp_classifier)
BL_ML_ESTIMATOR(mlp_regressor)

// src/ml/preprocessing/
BL_ML_ESTIMATOR(standard_scaler)
BL_ML_ESTIMATOR(min_max_scaler)
BL_ML_ESTIMATOR(max_abs_scaler)
BL_ML_ESTIMATOR(robust_scaler)
BL_ML_ESTIMATOR(normalizer)
BL_ML_ESTIMATOR(polynomial_features)
BL_ML_ESTIMATOR(simple_imputer)
BL_ML_ESTIMATOR(ordinal_encoder)
BL_ML_ESTIMATOR(one_hot_encoder)
BL_ML_ESTIMATOR(quantile_transformer)
BL_ML_ESTIMATOR(power_transformer)
BL_ML_ESTIMATOR(knn_imputer)
BL_ML_ESTIMATOR(spline_transformer)
BL_ML_ESTIMATOR(target_encoder)

// src/ml/timeseries/ (forecasters: forecaster.h)
BL_ML_ESTIMATOR(exponential_smoothing)
BL_ML_ESTIMATOR(arima)
BL_ML_ESTIMATOR(sarimax)

// src/ml/model_selection/ (pipeline: transformers then a final estimator)
BL_ML_ESTIMATOR(pipeline)
