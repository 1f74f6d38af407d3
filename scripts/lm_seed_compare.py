#!/usr/bin/env python3
# Compares two bitlearn.lm.train.v1 reports on the steps both hold: loss, grad-norm, lr bits and
# parameter hashes (the seed-shaped CUDA run against its CPU replay of the first steps).
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
sa={s["step"]:s for s in a["steps"]}; sb={s["step"]:s for s in b["steps"]}
common=sorted(set(sa)&set(sb)); bad=0
for k in common:
    for f in ("loss_bits","grad_norm_bits","lr_bits","params_sha256"):
        if sa[k].get(f)!=sb[k].get(f): bad+=1; print("DIFF step",k,f,sa[k].get(f),sb[k].get(f))
print("compared steps", common, "differences", bad)
print("cuda last step", a["steps"][-1]["step"], "loss", a["steps"][-1]["loss"], "sha", a["steps"][-1].get("params_sha256"))
sys.exit(1 if bad or not common else 0)
