"""hist_gradient_boosting_ranker against LightGBM's LGBMRanker (lambdarank) and XGBoost's
rank:pairwise (when installed): test-set NDCG@10 on a generated ranking data set with matched
settings, the query ids given as group= or as a column of X, and score() as the mean NDCG."""
import numpy as np
import pytest

from bitlearn import ml

lightgbm = pytest.importorskip("lightgbm")

N_DOCS = 20


def ranking_data(n_queries, seed):
    """n_queries queries of N_DOCS rows, 10 features; relevance 0 .. 4 from a noisy nonlinear
    function of the first four features (the rest are noise)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * N_DOCS, 10)).astype(np.float32)
    s = 1.2 * X[:, 0] - 0.8 * X[:, 1] ** 2 + 0.6 * X[:, 2] * (X[:, 3] > 0) + 0.5 * rng.normal(size=len(X))
    y = np.clip(np.floor(s + 1.5), 0, 4).astype(np.float32)
    qid = np.repeat(np.arange(n_queries), N_DOCS).astype(np.float32)
    return X, y, qid


def mean_ndcg(score, y, qid, k):
    """Mean NDCG@k over the queries: gain 2^rel - 1, discount 1 / log2(2 + rank), ties to the lower
    row, a query without relevant rows counts 1 (LightGBM's convention)."""
    out = []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        order = np.argsort(-score[rows], kind="stable")
        rel = y[rows]
        disc = 1.0 / np.log2(np.arange(len(rows)) + 2.0)
        dcg = np.sum((2.0 ** rel[order][:k] - 1.0) * disc[:k])
        ideal = np.sum((2.0 ** np.sort(rel)[::-1][:k] - 1.0) * disc[:k])
        out.append(dcg / ideal if ideal > 0 else 1.0)
    return float(np.mean(out))


COMMON = dict(learning_rate=0.1, max_iter=100, max_leaf_nodes=31, min_samples_leaf=20, l2_regularization=0.0)


def lightgbm_ranker():
    return lightgbm.LGBMRanker(objective="lambdarank", n_estimators=100, learning_rate=0.1, num_leaves=31,
                               min_child_samples=20, min_child_weight=1e-3, reg_lambda=0.0, max_bin=255,
                               lambdarank_truncation_level=30, sigmoid=1.0, verbose=-1, n_jobs=1)


@pytest.fixture(scope="module")
def data():
    return ranking_data(200, 0), ranking_data(200, 1)


def test_lambdarank_ndcg_matches_lightgbm(data):
    (X, y, q), (Xt, yt, qt) = data
    ours = ml.HistGradientBoostingRanker(**COMMON, loss="lambdarank").fit(X, y, group=q)
    theirs = lightgbm_ranker().fit(X, y, group=np.full(200, N_DOCS))
    n_ours = mean_ndcg(ours.predict(Xt), yt, qt, 10)
    n_theirs = mean_ndcg(theirs.predict(Xt), yt, qt, 10)
    print(f"test NDCG@10: bitlearn lambdarank {n_ours:.4f}, LightGBM {n_theirs:.4f}")
    assert n_ours > 0.7
    assert n_ours >= n_theirs - 0.015, (n_ours, n_theirs)
    # A ranking by noise scores far lower: the margin above is small against what is learned.
    assert mean_ndcg(Xt[:, 9], yt, qt, 10) < n_theirs - 0.2


def test_pairwise_ndcg_matches_lightgbm(data):
    (X, y, q), (Xt, yt, qt) = data
    ours = ml.HistGradientBoostingRanker(**COMMON, loss="pairwise").fit(X, y, qid=q)
    theirs = lightgbm_ranker().fit(X, y, group=np.full(200, N_DOCS))
    n_ours = mean_ndcg(ours.predict(Xt), yt, qt, 10)
    n_theirs = mean_ndcg(theirs.predict(Xt), yt, qt, 10)
    print(f"test NDCG@10: bitlearn pairwise {n_ours:.4f}, LightGBM lambdarank {n_theirs:.4f}")
    assert n_ours >= n_theirs - 0.03, (n_ours, n_theirs)


def test_pairwise_ndcg_matches_xgboost(data):
    xgboost = pytest.importorskip("xgboost")
    (X, y, q), (Xt, yt, qt) = data
    ours = ml.HistGradientBoostingRanker(**COMMON, loss="pairwise").fit(X, y, group=q)
    theirs = xgboost.XGBRanker(objective="rank:pairwise", n_estimators=100, learning_rate=0.1, max_leaves=31,
                               grow_policy="lossguide", tree_method="hist", reg_lambda=0.0, n_jobs=1)
    theirs.fit(X, y, qid=q)
    n_ours = mean_ndcg(ours.predict(Xt), yt, qt, 10)
    n_theirs = mean_ndcg(theirs.predict(Xt), yt, qt, 10)
    assert n_ours >= n_theirs - 0.03, (n_ours, n_theirs)


def test_group_column_and_score(data):
    (X, y, q), (Xt, yt, qt) = data
    # The query id as column 0 of X (the command line's --group) gives the model of group=.
    a = ml.HistGradientBoostingRanker(**dict(COMMON, max_iter=20)).fit(X, y, group=q)
    b = ml.HistGradientBoostingRanker(**dict(COMMON, max_iter=20), group_column=0).fit(np.column_stack([q, X]), y)
    np.testing.assert_array_equal(a.predict(Xt), b.predict(np.column_stack([qt, Xt])))
    want = mean_ndcg(a.predict(Xt), yt, qt, 5)  # eval_at defaults to 5
    assert a.score(Xt, yt, group=qt) == pytest.approx(want, abs=1e-12)
    assert b.score(np.column_stack([qt, Xt]), yt) == pytest.approx(want, abs=1e-12)


@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")
def test_early_stopping_on_held_out_queries(data):
    """Early stopping holds out whole queries and scores their mean NDCG@eval_at; LightGBM stops on
    ndcg@5 of a held-out set of the same share of queries (its own draw)."""
    (X, y, q), (Xt, yt, qt) = data
    params = dict(COMMON, max_iter=400, learning_rate=0.3, early_stopping=True, validation_fraction=0.2,
                  n_iter_no_change=10)
    ours = ml.HistGradientBoostingRanker(**params).fit(X, y, group=q)
    assert 10 < ours.n_iter_ < 400
    assert len(ours.validation_score_) == len(ours.train_score_) == ours.n_iter_ + 1
    held = np.isin(q, np.random.default_rng(3).permutation(200)[:40])
    theirs = lightgbm_ranker().set_params(n_estimators=400, learning_rate=0.3)
    theirs.fit(X[~held], y[~held], group=np.full(160, N_DOCS), eval_set=[(X[held], y[held])],
               eval_group=[np.full(40, N_DOCS)], eval_at=[5], callbacks=[lightgbm.early_stopping(10, verbose=False)])
    n_ours = mean_ndcg(ours.predict(Xt), yt, qt, 10)
    n_theirs = mean_ndcg(theirs.predict(Xt), yt, qt, 10)
    print(f"early stopping: bitlearn {ours.n_iter_} iterations, test NDCG@10 {n_ours:.4f}; "
          f"LightGBM best iteration {theirs.best_iteration_}, {n_theirs:.4f}")
    assert n_ours >= n_theirs - 0.03, (n_ours, n_theirs)
    # validation_fraction=None scores the training queries.
    own = ml.HistGradientBoostingRanker(**dict(params, validation_fraction=None)).fit(X, y, group=q)
    assert not hasattr(own, "validation_score_") and len(own.train_score_) == own.n_iter_ + 1


def test_weighted_early_stopping_score_is_lightgbm_weighted_ndcg():
    """With sample weights the early-stopping NDCG is LightGBM's weighted metric: each query weighs
    the mean of its rows' weights. LightGBM scores our predictions (its init_score; no split is
    allowed, so its one tree shifts every score alike) with the same weights."""
    X, y, q = ranking_data(60, 5)
    rng = np.random.default_rng(9)
    wq = rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], size=60)
    w = (np.repeat(wq, N_DOCS) * (0.5 + rng.random(len(y)))).astype(np.float32)  # uneven within a query
    ours = ml.HistGradientBoostingRanker(**dict(COMMON, max_iter=12, early_stopping=True, validation_fraction=None,
                                                 n_iter_no_change=50)).fit(X, y, group=q, sample_weight=w)
    assert ours.n_iter_ == 12

    def lightgbm_ndcg5(weight):
        ds = lightgbm.Dataset(X, label=y, group=np.full(60, N_DOCS), weight=weight,
                              init_score=ours.predict(X).astype(np.float64))
        res = {}
        lightgbm.train(dict(objective="lambdarank", metric="ndcg", eval_at=[5], min_data_in_leaf=10**6, verbose=-1,
                            num_threads=1), ds, num_boost_round=1, valid_sets=[ds], valid_names=["train"],
                       callbacks=[lightgbm.record_evaluation(res)])
        return res["train"]["ndcg@5"][0]

    theirs = lightgbm_ndcg5(w)
    # LightGBM keeps query weights in float32; ours are binary64.
    assert ours.train_score_[-1] == pytest.approx(theirs, abs=1e-8)
    assert abs(theirs - lightgbm_ndcg5(None)) > 1e-3  # the weights matter here


def test_bad_input(data):
    (X, y, q), _ = data
    est = ml.HistGradientBoostingRanker(max_iter=2)
    with pytest.raises(Exception, match="needs the query id column"):
        est.fit(X, y)
    with pytest.raises(Exception, match="relevance labels must be integers"):
        est.fit(X, y + 0.5, group=q)
    with pytest.raises(Exception, match="reappears"):
        est.fit(X, y, group=np.tile(np.arange(20), 200))
    with pytest.raises(ValueError, match="one per row"):
        est.fit(X, y, group=q[:-1])
