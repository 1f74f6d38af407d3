"""scikit-learn's own estimator checks over every bitlearn.ml class."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from check_instances import expected_failed_checks, instances


@parametrize_with_checks(instances(), expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
