"""`bitlearn cv --group COLUMN` for hist_gradient_boosting_ranker: the folds deal whole queries as
KFold deals rows (consecutive blocks of queries; --shuffle permutes the queries), each fold's score
equals a fit / score by hand on the same split (and a numpy NDCG of its predictions), and the
errors (no ranker, unknown column, queries not contiguous, too few queries) are clear."""
import json
import subprocess

import numpy as np
import pytest
from sklearn.model_selection import KFold

from bitlearn import Tensor, _core

from _peer_common import query_ndcg

PARAMS = {"max_iter": "8", "min_samples_leaf": "3", "eval_at": "5"}


def _write(path, qid, X, y, header=None):
    header = header or ["f0", "qid", "f1", "f2", "rel"]
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for i in range(len(y)):
            f.write(f"{float(X[i, 0])!r},{qid[i]:g},{float(X[i, 1])!r},{float(X[i, 2])!r},{y[i]:g}\n")


def _data(nq, seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, 11, size=nq)  # uneven queries
    qid = np.repeat(np.arange(100, 100 + nq), sizes).astype(np.float32)
    n = len(qid)
    X = rng.normal(size=(n, 3)).astype(np.float32)
    y = np.clip(np.floor(X[:, 0] - 0.6 * X[:, 2] + 0.5 * rng.normal(size=n) + 1.5), 0, 3).astype(np.float32)
    return qid, X, y


def _cv(cli, tmp_path, *args, ok=True):
    params = [a for k, v in PARAMS.items() for a in ("--param", f"{k}={v}")]
    r = subprocess.run([cli, "cv", "--model", "hist_gradient_boosting_ranker", *params, *map(str, args)],
                       capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


@pytest.mark.parametrize("shuffle", [False, True])
def test_cv_group_folds_keep_queries_whole_and_scores_match_manual(cli, tmp_path, shuffle):
    qid, X, y = _data(17, 1)
    path = tmp_path / "rank.csv"
    _write(path, qid, X, y)
    extra = ["--shuffle", "--seed", "5"] if shuffle else []
    r = _cv(cli, tmp_path, "--data", path, "--target", "rel", "--group", "qid", "--folds", 4, *extra,
            "--json", tmp_path / "cv.json")
    got = json.loads((tmp_path / "cv.json").read_text())
    assert got["metric"] == "ndcg@5" and got["n_queries"] == 17 and got["group_column"] == "qid"
    assert "queries: 17 (column qid), each held out whole" in r.stdout
    assert "ndcg@5" in r.stdout
    fold = np.array(got["test_fold"])
    queries = np.unique(qid)
    for q in queries:  # every query whole in one fold
        assert len(set(fold[qid == q])) == 1
    qfold = np.array([fold[qid == q][0] for q in queries])
    if not shuffle:  # KFold over the queries: consecutive blocks, the first 17 % 4 one longer
        expect = np.empty(17, int)
        for f, (_, test) in enumerate(KFold(4).split(queries)):
            expect[test] = f
        assert qfold.tolist() == expect.tolist()
    else:
        assert qfold.tolist() != sorted(qfold.tolist())
    assert sorted(set(qfold.tolist())) == [0, 1, 2, 3]
    for t in (1, 3):  # the same scores at every thread count
        _cv(cli, tmp_path, "--data", path, "--target", "rel", "--group", "qid", "--folds", 4, *extra, "--threads", t,
            "--json", tmp_path / f"cv{t}.json")
        assert json.loads((tmp_path / f"cv{t}.json").read_text())["scores"] == got["scores"]
    # Each fold's score: a fit / score by hand on the same split (X's columns: f0, qid, f1, f2).
    Xfull = np.column_stack([X[:, 0], qid, X[:, 1], X[:, 2]]).astype(np.float32)
    for f in range(4):
        tr, te = fold != f, fold == f
        est = _core.Estimator.make("hist_gradient_boosting_ranker", {**PARAMS, "group_column": "1"})
        est.fit(Tensor(np.ascontiguousarray(Xfull[tr])), Tensor(np.ascontiguousarray(y[tr])))
        manual = est.score(Tensor(np.ascontiguousarray(Xfull[te])), Tensor(np.ascontiguousarray(y[te])))
        assert got["scores"][f] == manual
        pred = np.asarray(est.predict(Tensor(np.ascontiguousarray(Xfull[te]))))
        assert manual == pytest.approx(query_ndcg(pred, y[te], qid[te], 5), abs=1e-12)


def test_cv_group_errors_are_clear(cli, tmp_path):
    qid, X, y = _data(6, 2)
    path = tmp_path / "rank.csv"
    _write(path, qid, X, y)

    def err(*args, model=None):
        if model:
            r = subprocess.run([cli, "cv", "--model", model, *map(str, args)], capture_output=True, text=True)
        else:
            r = _cv(cli, tmp_path, *args, ok=False)
        assert r.returncode != 0
        return r.stderr

    assert "--group: ridge takes no query groups" in err("--data", path, "--target", "rel", "--group", "qid",
                                                         model="ridge")
    assert "--group names column 'nope'" in err("--data", path, "--target", "rel", "--group", "nope")
    assert "give --group COLUMN" in err("--data", path, "--target", "rel")
    assert "holds 6 queries, fewer than --folds 7" in err("--data", path, "--target", "rel", "--group", "qid",
                                                          "--folds", 7)
    assert "a ranker is scored by its own score" in err("--data", path, "--target", "rel", "--group", "qid",
                                                         "--scoring", "r2")
    # A query whose rows are split by another query.
    bad = qid.copy()
    bad[-1] = qid[0]
    _write(tmp_path / "bad.csv", bad, X, y)
    msg = err("--data", tmp_path / "bad.csv", "--target", "rel", "--group", "qid")
    assert f"query id 100 reappears at data row {len(y)} after other queries" in msg
    assert "must be contiguous" in msg
