export PATH=/usr/local/cuda/bin:$PATH; PY=$(which python3); $PY --version
export PYTHONPATH=$PWD/.gpudeps/py
cmake -S . -B build-gpu -G Ninja -DBITLEARN_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DBITLEARN_BENCH=OFF -DBITLEARN_TESTS=OFF -DBITLEARN_PYTHON=ON -DPython_EXECUTABLE=$PY -DCMAKE_CXX_FLAGS="-I$PWD/.gpudeps/include" > $OUT/cfg.log 2>&1 || { tail -20 $OUT/cfg.log; exit 1; }
cmake --build build-gpu --target bitlearn_python bitlearn -j16 2>&1 | grep -E "error|FAILED" | head
export PYTHONPATH=$PWD/build-gpu/python
$PY -m pytest -q -p no:cacheprovider python/tests/test_tensor.py python/tests/test_sklearn_api.py python/tests/test_models.py -k "cuda or dlpack or torch" 2>&1 | tail -8
$PY - <<'PY'
import bitlearn, numpy as np, torch
r = bitlearn.verify(device="all", quick=True)
print({k: v for k, v in r.items() if k in ("digest", "identical", "exit_code")}, [ (d.get("device"), d.get("digest")) for d in r.get("runs", [])])
t = bitlearn.tensor(np.arange(6, dtype=np.float32)).to("cuda")
x = torch.from_dlpack(t); print("torch from bitlearn cuda:", x.device, x.tolist())
back = bitlearn.from_dlpack(torch.arange(4, dtype=torch.float32, device="cuda")); print("bitlearn from torch:", back.device, np.asarray(back.to("cpu")).tolist())
PY
