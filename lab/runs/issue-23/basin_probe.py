#!/usr/bin/env python3
"""Can a model find the convolution caches' narrow basin from random results?

For a Kernel Tuner cache: draw N configs at random (20 draws), fit a model of
log time capped at twice the fastest drawn, and report how good the best of
the model's 10 top-ranked configs (of the whole space) is, as a fraction of
the optimum: the median over draws, and the share of draws that reach 0.95.
Models: ridge regression on one-hot values and value pairs (the shape of
tunekit's surrogate), extra trees, a random forest (scikit-learn).

Usage: basin_probe.py CACHE.json.gz N
Needs numpy and scikit-learn (Kernel Tuner's venv of bench/search/run.sh has
both: build-search/kt-venv/bin/python).
"""
import gzip
import itertools
import json
import sys

import numpy as np
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.linear_model import Ridge


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    doc = json.load(gzip.open(path))
    keys = doc["tune_params_keys"]
    rows = [(k.split(","), v["time"]) for k, v in doc["cache"].items() if isinstance(v.get("time"), (int, float))]
    values = [sorted({r[0][i] for r in rows}, key=float) for i in range(len(keys))]
    active = [i for i in range(len(keys)) if len(values[i]) > 1]
    x = np.array([[values[i].index(r[0][i]) for i in active] for r in rows])
    y = np.log(np.array([r[1] for r in rows]))
    cols = [(x[:, j] == v).astype(float) for j in range(x.shape[1]) for v in range(x[:, j].max() + 1)]
    for a, b in itertools.combinations(range(x.shape[1]), 2):
        for va in range(x[:, a].max() + 1):
            for vb in range(x[:, b].max() + 1):
                cols.append(((x[:, a] == va) & (x[:, b] == vb)).astype(float))
    onehot = np.array(cols).T
    rng = np.random.default_rng(0)
    found = {"pairs (ridge)": [], "extra trees": [], "random forest": []}
    for s in range(20):
        idx = rng.choice(len(y), n, replace=False)
        target = np.minimum(y[idx], y[idx].min() + np.log(2))
        for name in found:
            if name == "pairs (ridge)":
                p = Ridge(alpha=3.0).fit(onehot[idx], target).predict(onehot)
            elif name == "extra trees":
                p = ExtraTreesRegressor(50, random_state=s).fit(x[idx], target).predict(x)
            else:
                p = RandomForestRegressor(50, random_state=s).fit(x[idx], target).predict(x)
            top = np.argsort(p)[:10]
            found[name].append(float(np.exp(y.min() - y[top].min())))
    for name, f in found.items():
        f = np.array(f)
        print(f"{path.split('/')[-1]} N={n} {name}: median {np.median(f):.3f}, reach 0.95 in {np.mean(f > 0.95):.0%} of draws")


if __name__ == "__main__":
    main()
