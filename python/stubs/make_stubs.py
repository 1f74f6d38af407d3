"""Writes the type stubs of the bitlearn package: bitlearn/_core.pyi (nanobind's stubgen over the
built module) and bitlearn/ml.pyi (the estimator classes, which bitlearn.ml makes from the
registry at import time, so editors cannot read them from ml.py).

Usage: PYTHONPATH=build/python python python/stubs/make_stubs.py [--check]
--check compares with the committed files instead of writing (exit 1 when they differ).
"""
import inspect
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parents[1] / "bitlearn"


def ml_stub():
    from bitlearn import ml
    kinds = {"classifier": "_ClassifierBase", "regressor": "_RegressorBase", "cluster": "_ClusterBase",
             "transformer": "_TransformerBase", "outlier": "_OutlierBase", "loader": "_LoaderBase",
             "mixture": "_MixtureBase", "density": "_DensityBase", "neighbors": "_NeighborsBase",
             "embedding": "_EmbeddingBase", "forecaster": "_ForecasterBase", "ranker": "_RankerBase"}
    out = ['"""Type stubs of bitlearn.ml (written by python/stubs/make_stubs.py)."""',
           "from typing import Any, Optional", "", "import numpy as np", "",
           "class BitlearnEstimator:",
           "    def fit(self, X: Any, y: Any = None) -> \"BitlearnEstimator\": ...",
           "    def predict(self, X: Any) -> np.ndarray: ...",
           "    def score(self, X: Any, y: Any = None) -> float: ...",
           "    def get_params(self, deep: bool = True) -> dict: ...",
           "    def set_params(self, **params: Any) -> \"BitlearnEstimator\": ...",
           "    def model_file_text(self, feature_names: Optional[list] = None, target: Optional[str] = None) -> str: ...",
           "    def save_model(self, path: str, feature_names: Optional[list] = None, target: Optional[str] = None) -> None: ...",
           "    n_features_in_: int", "",
           "class _ClassifierBase(BitlearnEstimator):",
           "    classes_: np.ndarray",
           "    def predict_proba(self, X: Any) -> np.ndarray: ...",
           "    def predict_log_proba(self, X: Any) -> np.ndarray: ...", "",
           "class _RegressorBase(BitlearnEstimator): ...", "",
           "class _ClusterBase(BitlearnEstimator):",
           "    labels_: np.ndarray",
           "    cluster_centers_: np.ndarray",
           "    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray: ...", "",
           "class _TransformerBase(BitlearnEstimator):",
           "    def transform(self, X: Any) -> np.ndarray: ...",
           "    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray: ...", "",
           "class _OutlierBase(BitlearnEstimator):",
           "    def score_samples(self, X: Any) -> np.ndarray: ...",
           "    def decision_function(self, X: Any) -> np.ndarray: ...",
           "    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray: ...", "",
           "class _LoaderBase(BitlearnEstimator): ...", "",
           "class _MixtureBase(BitlearnEstimator):",
           "    weights_: np.ndarray", "    means_: np.ndarray", "    covariances_: np.ndarray",
           "    precisions_: np.ndarray", "    precisions_cholesky_: np.ndarray",
           "    converged_: bool", "    n_iter_: int", "    lower_bound_: float",
           "    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray: ...",
           "    def predict_proba(self, X: Any) -> np.ndarray: ...",
           "    def bic(self, X: Any) -> float: ...", "    def aic(self, X: Any) -> float: ...",
           "    def sample(self, n_samples: int = 1) -> tuple: ...", "",
           "class _DensityBase(BitlearnEstimator):", "    bandwidth_: float",
           "    def score_samples(self, X: Any) -> np.ndarray: ...",
           "    def sample(self, n_samples: int = 1, random_state: Any = None) -> np.ndarray: ...", "",
           "class _NeighborsBase(BitlearnEstimator):", "    n_samples_fit_: int",
           "    def kneighbors(self, X: Any = None, n_neighbors: Optional[int] = None,",
           "                   return_distance: bool = True) -> Any: ...", "",
           "class _EmbeddingBase(BitlearnEstimator):", "    embedding_: np.ndarray", "    stress_: float",
           "    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray: ...", "",
           "class _ForecasterBase(BitlearnEstimator):", "    params_: Any", "    nobs_: int",
           "    def fit(self, y: Any, X: Any = None) -> \"_ForecasterBase\": ...",
           "    def predict(self, X: Any = None) -> np.ndarray: ...",
           "    def forecast(self, steps: int, exog: Any = None, alpha: float = 0.05) -> tuple: ...",
           "    def score(self, y: Any, X: Any = None) -> float: ...", "",
           "class _RankerBase(BitlearnEstimator):",
           "    def fit(self, X: Any, y: Any, group: Any = None, qid: Any = None,",
           "            sample_weight: Any = None) -> \"_RankerBase\": ...",
           "    def score(self, X: Any, y: Any, group: Any = None, qid: Any = None, sample_weight: Any = None) -> float: ...", "",
           "def estimator_class(name: str) -> type: ...",
           "def registry_name_of(cls_or_obj: Any) -> str: ...", ""]
    for name, cls in sorted(ml._REGISTRY.items(), key=lambda kv: kv[1].__name__):
        sig = inspect.signature(cls.__init__)
        params = []
        for p in list(sig.parameters.values())[1:]:
            # Numbers as float (an int is a valid float to a type checker): the registry's text
            # defaults do not say whether "1" is a count or a real.
            t = {bool: "bool", int: "float", float: "float", str: "str"}.get(type(p.default), "Any")
            if p.default is None:
                t = "Any"
            params.append(f"{p.name}: {t} = {p.default!r}")
        out.append(f"class {cls.__name__}({kinds[cls._kind]}):")
        out.append(f'    """registry name: {name}"""')
        out.append(f"    def __init__(self, *, {', '.join(params)}) -> None: ...")
        out.append("")
    return "\n".join(out)


def core_stub():
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "bitlearn._core", "-o",
                        f"{d}/_core.pyi"], check=True)
        return pathlib.Path(f"{d}/_core.pyi").read_text()


def main():
    check = "--check" in sys.argv
    stubs = {"ml.pyi": ml_stub(), "_core.pyi": core_stub()}
    bad = 0
    for fname, text in stubs.items():
        path = HERE / fname
        if check:
            if not path.exists() or path.read_text() != text:
                print(f"stale stub: {path} (run python/stubs/make_stubs.py)")
                bad = 1
        else:
            path.write_text(text)
            print(f"wrote {path}")
    sys.exit(bad)


if __name__ == "__main__":
    main()
