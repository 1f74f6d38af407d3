"""bitlearn.nn: the neural-network classifiers of ``bitlearn train`` (MLP, CNN, LSTM) from Python.

``MLP``, ``CNN`` and ``LSTM`` build the networks ``bitlearn train --model mlp|cnn|lstm`` builds,
with the same defaults (width, depth, optimizer, learning rate, batch size, steps, warmup,
gradient clipping), and ``fit`` runs the library's training loop in the command's order. The same
settings on the same data give the same per-step losses and the same checkpoint bytes as the
command, on every device and thread count::

    import bitlearn.nn as bnn
    X, y, X_test, y_test = bnn.load_fashion_mnist()
    net = bnn.MLP(width=128, seed=7).fit(X[:5000], y[:5000], steps=300, checkpoint="mlp.safetensors")
    net.loss_history_        # the loss of every step (float32)
    net.score(X_test, y_test)  # accuracy, as the command's "test accuracy"
    again = bnn.load("mlp.safetensors")

equals ``bitlearn train --model mlp --width 128 --seed 7 --steps 300 --train-subset 5000
--checkpoint mlp.safetensors`` byte for byte.
"""
import inspect as _inspect
import json as _json
import math as _math
import os as _os
import struct as _struct

import numpy as _np

from . import _core

__all__ = ["MLP", "CNN", "LSTM", "load", "load_fashion_mnist", "load_idx", "load_image_folder",
           "OPTIMIZERS"]

#: The optimizers of ``bitlearn train --optimizer``: plain SGD, SGD with Nesterov momentum 0.9 and
#: weight decay 5e-4, Adam, and AdamW with weight decay 1e-4.
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")

_DEFAULT_FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def _path(p):
    return "" if p is None else _os.fspath(p)


def _positive_int(name, value, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _features(X, what="X"):
    """X as a float32 array of at least two dimensions with finite values (a copy when needed)."""
    try:
        a = _np.asarray(X)
    except Exception as e:  # ragged lists and the like
        raise ValueError(f"{what} is not an array: {e}") from None
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{what} must hold numbers (bool, integer or floating point), got dtype {a.dtype}")
    if a.ndim < 2:
        raise ValueError(f"{what} must have a row per sample (at least 2 dimensions), got shape {a.shape}")
    if a.shape[0] == 0:
        raise ValueError(f"{what} has no rows")
    a = _np.ascontiguousarray(a, dtype=_np.float32)
    if not _np.isfinite(a).all():
        raise ValueError(f"{what} holds NaN or infinite values")
    return a


def _square_side(d, what, kind):
    side = _math.isqrt(d)
    if side * side != d:
        raise ValueError(f"{kind} takes images; {what} has {d} values per row, not a square image "
                         "(pass [n, height, width]" + (", 1]" if kind == "CNN" else "]") + ")")
    return side


def _cnn_dims(width, side, channels):
    """The CNN's sizes for _NnNetwork and the input geometry predict checks: grey images keep the
    two-number form (and the geometry (side, side)); others add their channel count (channels last),
    as `bitlearn train --data FOLDER` builds make_cnn with the folder's channels."""
    if channels == 1:
        return [width, side], (side, side)
    return [width, side, channels], (side, side, channels)


class _Network:
    """The part of MLP, CNN and LSTM they share: training, prediction and checkpoints."""

    _kind = ""
    _default_width = 0
    _default_optimizer = ""
    _default_batch = 0
    _clip = 0.0

    def __init__(self, *, width=None, steps=2000, epochs=None, batch_size=None, optimizer=None,
                 lr=None, warmup=50, seed=1, device="cpu", classes=None):
        self.width = width
        self.steps = steps
        self.epochs = epochs
        self.batch_size = batch_size
        self.optimizer = optimizer
        self.lr = lr
        self.warmup = warmup
        self.seed = seed
        self.device = device
        self.classes = classes

    # ---- scikit-learn style parameters -------------------------------------------------------
    @classmethod
    def _param_names(cls):
        names = []
        for klass in cls.__mro__:
            if issubclass(klass, _Network) and "__init__" in vars(klass):
                for p in _inspect.signature(klass.__init__).parameters.values():
                    if p.name not in ("self", "kwargs") and p.name not in names:
                        names.append(p.name)
        return names

    def get_params(self, deep=True):
        """The constructor's parameters as a dict (scikit-learn's convention)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Sets constructor parameters by name; returns self."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"{type(self).__name__} has no parameter '{name}' (it takes {', '.join(valid)})")
            setattr(self, name, value)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # ---- the pieces each network defines -------------------------------------------------------
    def _shape(self, X):  # -> (rows [n, d] float32, dims for _NnNetwork, geometry kept for predict)
        raise NotImplementedError

    def _resolved_width(self):
        w = self._default_width if self.width is None else self.width
        return _positive_int("width", w)

    def _default_lr(self, optimizer):
        return float(_core._nn_default_lr(optimizer))

    # ---- training ------------------------------------------------------------------------------
    def _labels(self, y, n):
        try:
            t = _np.asarray(y)
        except Exception as e:
            raise ValueError(f"y is not an array: {e}") from None
        if t.ndim != 1:
            raise ValueError(f"y must be one label per row (1 dimension), got shape {t.shape}")
        if t.shape[0] != n:
            raise ValueError(f"X has {n} rows but y has {t.shape[0]} labels")
        if t.dtype.kind == "f" and _np.isnan(t).any():
            raise ValueError("y holds NaN labels (missing targets); drop those rows first")
        if t.dtype.kind in "cOV":
            if any(v is None or (isinstance(v, float) and _math.isnan(v)) for v in t.ravel().tolist()):
                raise ValueError("y holds missing labels (None or NaN); drop those rows first")
        if self.classes is not None:
            classes = _np.asarray(list(self.classes))
        else:
            try:
                classes = _np.unique(t)
            except TypeError as e:
                raise TypeError(f"y's labels cannot be ordered: {e}") from None
        if classes.shape[0] < 2:
            raise ValueError(f"a classifier needs at least 2 classes, y has {classes.shape[0]}")
        return classes, self._indices(classes, t, strict=True)

    @staticmethod
    def _indices(classes, t, strict):
        order = _np.argsort(classes, kind="stable")
        sorted_classes = classes[order]
        pos = _np.searchsorted(sorted_classes, t)
        pos = _np.clip(pos, 0, len(classes) - 1)
        found = sorted_classes[pos] == t
        if strict and not found.all():
            bad = t[~found][0]
            bad = bad.item() if hasattr(bad, "item") else bad
            raise ValueError(f"label {bad!r} of y is not among the classes {classes.tolist()}")
        return _np.ascontiguousarray(_np.where(found, order[pos], -1), dtype=_np.int64)

    def fit(self, X, y, *, steps=None, epochs=None, batch_size=None, optimizer=None, lr=None,
            warmup=None, seed=None, device=None, checkpoint=None, checkpoint_every=0, resume=False,
            callback=None):
        """Trains a fresh network on X, y and returns self.

        X: the inputs (see the class); y: one label per row (any sortable labels; ``classes_``
        holds them in ascending order unless ``classes`` was given). The keyword arguments replace
        the constructor's parameters of the same names (and are kept): steps (or epochs, passes of
        ``len(X) // batch_size`` steps), batch_size (at most the number of rows), optimizer (one of
        ``OPTIMIZERS``), lr (the peak of the schedule: ``warmup`` linear steps, then a cosine to
        0), seed (initialization and batch order), device ("cpu", "cuda", "cuda:N").

        checkpoint: a safetensors file written every ``checkpoint_every`` steps and at the end
        (``bitlearn train --checkpoint``); resume: continue from it when it exists (a run of the
        same data and seed). callback(step, loss) is called after every step; an exception it
        raises stops the run and reaches the caller. After fit: ``loss_history_`` (float32, the
        loss of each step run here), ``first_step_`` (0, or the step resumed from).
        """
        self._keep(steps=steps, epochs=epochs, batch_size=batch_size, optimizer=optimizer, lr=lr,
                   warmup=warmup, seed=seed, device=device)
        Xf, dims, geometry = self._shape(_features(X))
        classes, yi = self._labels(y, Xf.shape[0])
        return self._train(Xf, yi, dims, geometry, classes, self._default_batch, lambda total: self.warmup,
                           checkpoint, checkpoint_every, resume, callback, None)

    def _keep(self, **settings):
        for name, value in settings.items():
            if value is not None:
                setattr(self, name, value)

    def _train(self, Xf, yi, dims, geometry, classes, default_batch, warmup_of, checkpoint, checkpoint_every,
               resume, callback, describe):
        """Trains a fresh network on float32 rows Xf and label indices yi; warmup_of(total steps) is the
        schedule's warmup, describe(optimizer, dims) the checkpoint's data description (or None)."""
        n = Xf.shape[0]
        opt = self._default_optimizer if self.optimizer is None else self.optimizer
        if opt not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, got {opt!r}")
        rate = self._default_lr(opt) if self.lr is None else self.lr
        if isinstance(rate, bool) or not isinstance(rate, (int, float, _np.floating, _np.integer)) \
                or not _math.isfinite(rate) or rate <= 0:
            raise ValueError(f"lr must be a finite number > 0, got {rate!r}")
        batch = _positive_int("batch_size", default_batch if self.batch_size is None else self.batch_size)
        batch = min(batch, n)
        if self.epochs is not None:
            total = _positive_int("epochs", self.epochs) * (n // batch)
        else:
            total = _positive_int("steps", self.steps)
        warm = warmup_of(total)
        if isinstance(warm, bool) or not isinstance(warm, (int, _np.integer)) or warm < 0:
            raise ValueError(f"warmup must be an integer >= 0, got {warm!r}")
        s = self.seed
        if isinstance(s, bool) or not isinstance(s, (int, _np.integer)) or not 0 <= s < 2 ** 64:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {s!r}")
        every = checkpoint_every
        if isinstance(every, bool) or not isinstance(every, (int, _np.integer)) or every < 0:
            raise ValueError(f"checkpoint_every must be an integer >= 0, got {every!r}")
        if callback is not None and not callable(callback):
            raise TypeError("callback must be callable as callback(step, loss)")
        if resume and checkpoint is None:
            raise ValueError("resume=True needs checkpoint= (the file to continue from)")
        metadata = {} if describe is None else {"train.data": describe(opt, dims)}
        net = _core._NnNetwork(self._kind, dims, int(len(classes)), int(s), opt, float(rate),
                               str(self.device))
        first, losses = net.fit(Xf, yi, int(total), int(batch), int(warm), float(self._clip),
                                _path(checkpoint), int(every), bool(resume), metadata, callback)
        self.net_ = net
        self.classes_ = classes
        self.n_features_in_ = int(Xf.shape[1])
        self.input_geometry_ = geometry
        self.optimizer_ = opt
        self.first_step_ = int(first)
        self.loss_history_ = _np.asarray(losses, dtype=_np.float32)
        return self

    def fit_files(self, data, labels=None, *, test=None, val_fraction=0.2, steps=None, epochs=None,
                  batch_size=None, optimizer=None, lr=None, seed=None, device=None, checkpoint=None,
                  checkpoint_every=0, resume=False, callback=None):
        """Trains on image files as ``bitlearn train --data DATA [--labels LABELS] [--test TEST]``
        does (MLP and CNN), with the program's bytes: data an IDX images file with its ``labels``
        file, or a folder of class subfolders (``test``: a held-out folder); without ``test``, the
        rows the seed draws (``val_fraction``, default 0.2) are held out. The program's rules for
        these runs apply: batch_size at most the training rows, ``warmup`` min(50, steps // 10),
        the data description in the checkpoint. After it, besides fit's attributes:
        ``validation_score_`` (the held-out accuracy the program reports), ``classes_`` (the folder
        names, or 0..k-1 for IDX labels)."""
        if self._kind == "lstm":
            raise ValueError("fit_files trains MLP and CNN (as `bitlearn train --data`); an LSTM takes arrays")
        self._keep(steps=steps, epochs=epochs, batch_size=batch_size, optimizer=optimizer, lr=lr, seed=seed,
                   device=device)
        fraction = float(_np.float32(val_fraction))
        if not 0 < fraction < 1:
            raise ValueError(f"val_fraction must lie strictly between 0 and 1, got {val_fraction!r}")
        data = _path(data)
        if labels is not None:
            if test is not None:
                raise ValueError("test= is read for image folders; IDX files take val_fraction")
            (X, y, h, w), channels = _core._nn_load_idx(data, _path(labels)), 1
            k = int(y.max()) + 1
            if k < 2:
                raise ValueError(f"{_path(labels)}: every label is 0; a classifier needs at least two classes")
            source, names, classes = "idx", [str(c) for c in range(k)], _np.arange(k)
        else:
            if not _os.path.isdir(data):
                raise ValueError(f"{data}: not a folder of class subfolders (IDX images take labels=)")
            (X, y, h, w), channels, names = _core._nn_load_image_folder(data, [])
            source, classes = "images", _np.asarray(names)
        if self._kind == "cnn" and not (h == w and h % 4 == 0):
            raise ValueError(f"CNN takes square images (grey or colour) whose side is a multiple of 4; these are "
                             f"{w}x{h}x{channels} (width x height x channels)")
        if test is None:
            s = self.seed
            if isinstance(s, bool) or not isinstance(s, (int, _np.integer)) or not 0 <= s < 2 ** 64:
                raise ValueError(f"seed must be an integer in [0, 2**64), got {s!r}")
            n = X.shape[0]
            n_val = int(_math.floor(fraction * n + 0.5))
            if not 1 <= n_val < n:
                raise ValueError(f"val_fraction {val_fraction} of {n} rows leaves {n_val} validation rows and "
                                 f"{n - n_val} training rows; each part needs at least one")
            perm = _np.asarray(_core._nn_shuffled_indices(n, int(s), 2 ** 64 - 1), dtype=_np.int64)
            val_rows, train_rows = _np.sort(perm[:n_val]), _np.sort(perm[n_val:])
            X_val, y_val, X, y = X[val_rows], y[val_rows], X[train_rows], y[train_rows]
        else:
            (X_val, y_val, hv, wv), cv, _ = _core._nn_load_image_folder(_path(test), list(names))
            if (hv, wv, cv) != (h, w, channels):
                raise ValueError(f"test {_path(test)} holds {wv}x{hv}x{cv} images but data {data} holds "
                                 f"{w}x{h}x{channels}")
        X = _np.ascontiguousarray(X)
        inputs = X.shape[1]
        if self._kind == "cnn":  # colour images: the first convolution reads `channels` planes
            dims, geometry = _cnn_dims(self._resolved_width(), h, channels)
        else:
            dims, geometry = [inputs] + self.hidden_widths(), (inputs,)

        def describe(opt, dims):
            spec = {"source": source, "task": "classification", "model": self._kind, "optimizer": opt}
            if self._kind == "mlp":
                spec["hidden"] = dims[1:]
            else:
                spec["channels"] = dims[0]
            spec.update({"inputs": inputs, "image": [h, w, channels], "classes": names})
            return _json.dumps(spec, ensure_ascii=False, separators=(",", ":"))

        default_batch = 64 if self._kind == "cnn" else 128
        self._train(X, _np.ascontiguousarray(y, dtype=_np.int64), dims, geometry, classes, default_batch,
                    lambda total: min(50, total // 10), checkpoint, checkpoint_every, resume, callback, describe)
        self.validation_score_ = float(self.net_.accuracy(_np.ascontiguousarray(X_val), y_val, 512))
        return self

    # ---- inference -----------------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "net_"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet: call fit(X, y) or load(path)")

    def _rows(self, X):
        self._check_fitted()
        Xf, _, geometry = self._shape(_features(X))
        if geometry != self.input_geometry_:
            raise ValueError(f"X has the input shape {geometry} per row but the network takes {self.input_geometry_}")
        return Xf

    def decision_function(self, X, batch_size=500):
        """The logits [n, classes] (float32) in evaluation mode."""
        rows = self._rows(X)
        return self.net_.logits(rows, _positive_int("batch_size", batch_size))

    def predict_proba(self, X, batch_size=500):
        """Class probabilities [n, classes] (float32): the softmax of the logits."""
        rows = self._rows(X)
        return self.net_.proba(rows, _positive_int("batch_size", batch_size))

    def predict(self, X, batch_size=500):
        """The class of each row (from ``classes_``): the largest logit, the first on a tie."""
        logits = self.decision_function(X, batch_size)
        return self.classes_[_np.argmax(logits, axis=1)]

    def score(self, X, y, batch_size=500):
        """Accuracy on X, y (the library's evaluate_accuracy, which prints as the command's test
        accuracy with batch_size 500); a label outside ``classes_`` counts as wrong."""
        Xf = self._rows(X)
        t = _np.asarray(y)
        if t.ndim != 1 or t.shape[0] != Xf.shape[0]:
            raise ValueError(f"y must hold one label per row of X ({Xf.shape[0]}), got shape {t.shape}")
        if t.dtype.kind == "f" and _np.isnan(t).any():
            raise ValueError("y holds NaN labels")
        yi = self._indices(self.classes_, t, strict=False)
        return float(self.net_.accuracy(Xf, yi, _positive_int("batch_size", batch_size)))

    # ---- state -----------------------------------------------------------------------------------
    @property
    def n_parameters_(self):
        """The number of trainable values."""
        self._check_fitted()
        return int(self.net_.num_parameters)

    def state_dict(self):
        """Copies of the parameters and buffers as NumPy arrays, keyed as in the checkpoint
        ("param.<name>", "buffer.<name>")."""
        self._check_fitted()
        return dict(self.net_.state())

    def save(self, path):
        """Writes the checkpoint (weights, optimizer state, step, data seed) the training run
        writes: right after fit, the same bytes as fit's (or the command's) final checkpoint."""
        self._check_fitted()
        self.net_.save(_path(path))
        return self

    @classmethod
    def load(cls, path, device="cpu"):
        """A network from a checkpoint of ``save``, ``fit(checkpoint=...)`` or ``bitlearn train``
        (Fashion-MNIST-sized or any other size): its kind and sizes are read from the tensors'
        shapes. Labels are the class indices 0..k-1, or the folder names for a checkpoint of an image
        folder run (a checkpoint keeps no other label names)."""
        return load(path, device=device, expect=None if cls is _Network else cls)


class MLP(_Network):
    """``bitlearn train --model mlp``: Linear + ReLU per hidden layer, then Linear to the classes.

    width (default 256) and depth (default 2): hidden widths width, width/2, width/4, ...;
    hidden: an explicit list of hidden widths instead. Defaults: optimizer "adamw" (lr 1e-3),
    batch_size 128, 2000 steps, 50 warmup steps. X: [n, features] (more dimensions are flattened,
    so [n, 28, 28] images work).
    """

    _kind = "mlp"
    _default_width = 256
    _default_optimizer = "adamw"
    _default_batch = 128

    def __init__(self, width=None, depth=2, *, hidden=None, steps=2000, epochs=None, batch_size=None,
                 optimizer=None, lr=None, warmup=50, seed=1, device="cpu", classes=None):
        super().__init__(width=width, steps=steps, epochs=epochs, batch_size=batch_size, optimizer=optimizer,
                         lr=lr, warmup=warmup, seed=seed, device=device, classes=classes)
        self.depth = depth
        self.hidden = hidden

    def hidden_widths(self):
        """The hidden layer widths this network gets."""
        if self.hidden is not None:
            return [_positive_int("hidden width", h) for h in self.hidden]
        return list(_core._nn_hidden_widths(self._resolved_width(), _positive_int("depth", self.depth)))

    def _shape(self, X):
        rows = X.reshape(X.shape[0], -1)
        return rows, [rows.shape[1]] + self.hidden_widths(), (rows.shape[1],)


class _OneWidth(_Network):
    """The constructor CNN and LSTM share: one width (the first stage's channels, the hidden size)."""

    def __init__(self, width=None, *, steps=2000, epochs=None, batch_size=None, optimizer=None, lr=None,
                 warmup=50, seed=1, device="cpu", classes=None):
        super().__init__(width=width, steps=steps, epochs=epochs, batch_size=batch_size, optimizer=optimizer,
                         lr=lr, warmup=warmup, seed=seed, device=device, classes=classes)


class CNN(_OneWidth):
    """``bitlearn train --model cnn``: conv3x3 + BatchNorm + ReLU + max-pool, a residual block, a
    second conv stage with twice the channels, then Linear to the classes.

    width: the first stage's channels (default 16). Defaults: optimizer "momentum" (lr 0.05),
    batch_size 64, 2000 steps, 50 warmup steps, gradient norm clipped to 5. X: square images, side a
    multiple of 4: grey [n, side, side], [n, side, side, 1] or [n, side * side]; colour (channels
    last) [n, side, side, channels] or [n, side * side * 3].
    """

    _kind = "cnn"
    _default_width = 16
    _default_optimizer = "momentum"
    _default_batch = 64
    _clip = 5.0

    def _shape(self, X):
        channels = 1
        if X.ndim == 2:
            d = X.shape[1]
            colour = _math.isqrt(d // 3) if d % 3 == 0 else 0
            if colour % 4 == 0 and colour and colour * colour * 3 == d:  # 3 * side**2 is never a square
                side, channels = colour, 3
            else:
                side = _square_side(d, "X", "CNN")
        elif X.ndim in (3, 4):
            if X.shape[1] != X.shape[2]:
                raise ValueError(f"CNN takes square images [n, side, side] or [n, side, side, channels], "
                                 f"got shape {X.shape}")
            side = X.shape[1]
            channels = X.shape[3] if X.ndim == 4 else 1
            if channels < 1:
                raise ValueError(f"CNN takes images with at least one channel, got shape {X.shape}")
        else:
            raise ValueError(f"CNN takes images [n, side, side(, channels)], got shape {X.shape}")
        if side % 4:
            raise ValueError(f"CNN takes images whose side is a multiple of 4, got {side}")
        dims, geometry = _cnn_dims(self._resolved_width(), side, channels)
        return X.reshape(X.shape[0], -1), dims, geometry


class LSTM(_OneWidth):
    """``bitlearn train --model lstm``: an LSTM over the time steps, its last hidden state, then
    Linear to the classes.

    width: the hidden size (default 64). Defaults: optimizer "adam" (lr 3e-3), batch_size 64,
    2000 steps, 50 warmup steps, gradient norm clipped to 1. X: sequences [n, time, features], or
    square images [n, side * side] read row by row (as the command reads Fashion-MNIST).
    """

    _kind = "lstm"
    _default_width = 64
    _default_optimizer = "adam"
    _default_batch = 64
    _clip = 1.0

    def _default_lr(self, optimizer):
        return 3e-3 if optimizer == "adam" else super()._default_lr(optimizer)

    def _shape(self, X):
        if X.ndim == 2:
            side = _square_side(X.shape[1], "X", "LSTM")
            time, features = side, side
        elif X.ndim == 3:
            time, features = X.shape[1], X.shape[2]
        else:
            raise ValueError(f"LSTM takes sequences [n, time, features], got shape {X.shape}")
        return X.reshape(X.shape[0], -1), [features, self._resolved_width(), time], (time, features)


# ---- checkpoints ---------------------------------------------------------------------------------

def _read_header(path):
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError(f"{path}: not a safetensors checkpoint (too short)")
        (size,) = _struct.unpack("<Q", head)
        if size > 100_000_000:
            raise ValueError(f"{path}: not a safetensors checkpoint (header size {size})")
        try:
            header = _json.loads(f.read(size))
        except ValueError:
            raise ValueError(f"{path}: not a safetensors checkpoint (bad header)") from None
    meta = header.pop("__metadata__", {}) or {}
    shapes = {k: list(v["shape"]) for k, v in header.items() if isinstance(v, dict) and "shape" in v}
    return meta, shapes


def load(path, device="cpu", expect=None):
    """The MLP, CNN or LSTM of a checkpoint (see ``_Network.load``), ready to predict; ``fit(...,
    checkpoint=path, resume=True)`` continues its training."""
    path = _path(path)
    meta, shapes = _read_header(path)
    if meta.get("format") != "bitlearn.nn.checkpoint.v1":
        raise ValueError(f"{path}: not a bitlearn training checkpoint (format {meta.get('format')!r})")
    spec = meta.get("train.data")
    if spec is not None and '"source":"csv"' in spec:
        raise ValueError(f"{path}: a checkpoint of `bitlearn train --data FILE.csv` (standardized columns, "
                         "named classes); predict with `bitlearn predict --model` on a CSV file")
    params = {k[len("param."):]: v for k, v in shapes.items() if k.startswith("param.")}
    if "lstm.weight_ih_l0" in params:  # the time steps are not stored: square images assumed
        kind = LSTM
        features, width = params["lstm.weight_ih_l0"][1], params["lstm.weight_hh_l0"][1]
        k = params["head.weight"][0]
        net = LSTM(width=width)
        dims, geometry = [features, width, features], (features, features)
    elif "4.conv1.weight" in params:
        kind = CNN
        channels, image_channels = params["0.weight"][0], params["0.weight"][-1]  # [out, 3, 3, in]
        last = max((n for n in params if n.endswith(".weight")), key=lambda n: int(n.split(".")[0]))
        k, flat = params[last]
        side = 4 * _math.isqrt(flat // (2 * channels))
        net = CNN(width=channels)
        dims, geometry = _cnn_dims(channels, side, image_channels)
    else:
        kind = MLP
        layers = sorted((int(n.split(".")[0]), s) for n, s in params.items()
                        if n.endswith(".weight") and n.split(".")[0].isdigit())
        if not layers or any(len(s) != 2 for _, s in layers):
            raise ValueError(f"{path}: holds no MLP, CNN or LSTM of bitlearn.nn")
        hidden = [s[0] for _, s in layers[:-1]]
        k = layers[-1][1][0]
        net = MLP(hidden=hidden)
        dims, geometry = [layers[0][1][1]] + hidden, (layers[0][1][1],)
    if expect is not None and kind is not expect:
        raise ValueError(f"{path}: holds a {kind.__name__}, not a {expect.__name__}")
    opt = meta.get("optimizer", "")
    if opt == "sgd" and any(n.startswith("optim.momentum.") for n in shapes):
        opt = "momentum"
    if opt not in OPTIMIZERS:
        raise ValueError(f"{path}: optimizer {opt!r} is not one of {', '.join(OPTIMIZERS)}")
    seed = int(meta.get("rng.data_seed", "1"))
    net.set_params(optimizer=opt, seed=seed, device=device)
    core = _core._NnNetwork(kind._kind, dims, int(k), seed, opt, float(net._default_lr(opt)), str(device))
    core.load(path)
    net.net_ = core
    net.classes_ = _np.arange(k)
    if spec is not None:  # a run of `fit_files` / `bitlearn train --data FOLDER`: the class names
        try:
            names = _json.loads(spec).get("classes")
        except ValueError:
            names = None
        if isinstance(names, list) and len(names) == k and _json.loads(spec).get("source") == "images":
            net.classes_ = _np.asarray(names)
    net.input_geometry_ = geometry
    net.n_features_in_ = int(_np.prod(geometry))
    net.optimizer_ = opt
    net.first_step_ = int(core.step)
    net.loss_history_ = _np.zeros(0, dtype=_np.float32)
    return net


# ---- data ----------------------------------------------------------------------------------------

def _images(X, h, w, channels=1):
    return X.reshape(X.shape[0], h, w, channels) if channels != 1 else X.reshape(X.shape[0], h, w)


def load_fashion_mnist(path=None):
    """Fashion-MNIST as ``bitlearn train`` reads it: (X_train, y_train, X_test, y_test), images
    float32 [n, 28, 28] scaled to [0, 1] (byte / 255) and labels int64. path: the folder of the
    four *-ubyte.gz files (default: the command's, /usr/share/datasets/fashion-mnist)."""
    (xa, ya, ha, wa), (xb, yb, hb, wb) = _core._nn_load_fashion_mnist(_path(path) or _DEFAULT_FASHION_MNIST)
    return _images(xa, ha, wa), ya, _images(xb, hb, wb), yb


def load_idx(images, labels):
    """An IDX images file and its labels file (gzip or plain, as ``bitlearn train --data IMAGES
    --labels LABELS`` reads them): (X float32 [n, height, width] in [0, 1], y int64)."""
    X, y, h, w = _core._nn_load_idx(_path(images), _path(labels))
    return _images(X, h, w), y


def load_image_folder(path, classes=None):
    """A folder of class subfolders of PNG/PGM/PPM images (``bitlearn train --data FOLDER``):
    (X float32 [n, height, width] for grey images or [n, height, width, 3] for colour, in [0, 1];
    y int64; the class names, label k being classes[k]). classes: a training set's class names,
    which a held-out folder's subfolders must be among."""
    (X, y, h, w), channels, names = _core._nn_load_image_folder(_path(path), list(classes or []))
    return _images(X, h, w, channels), y, list(names)
