"""The exhaustive sweep of moe_vs_vllm.py, kept across runs.

vLLM's method times every config of its space at every batch size: about
1.8 hours of an H200 for Mixtral's 13 batch sizes, and 45 minutes for batch
4096 alone, more than one session's device time. So a run sweeps a part of
the space (`--sweep-part K/N`: the configs whose position in the space is K
modulo N) at some batch sizes, and the record of earlier runs
(`--previous`) is merged with it. A batch size counts as swept once its
parts cover the space (all K of one N, or the whole space as 0/1); its best
is the best over those parts, its sweep time the sum of theirs.

Record layout (the "sweep" object of the summary JSON):
  timed:        {"M": {"K/N": {"best": config, "best_us": float, "seconds": float, "timed": int}}}
                (a sweep cut short with --sweep-cut adds "wall_s", "cut" and
                "cut_estimated_s": its seconds are then what vLLM's timer would
                have taken, the cut configs' share estimated)
  compiled:     {"K/N": {"seconds": float, "valid": int}}: each part's compile (a config
                compiles once for all batch sizes) and how many of its configs compile
  per_config_s: {"M": seconds}: the timing cost of one config at M, measured or sampled
A summary of the first runs (one whole sweep, "best" per batch size) is read
as the part 0/1. No torch here: tests/bench/sweep_record_test.py tests it
without a GPU.
"""

from __future__ import annotations


class SweepError(ValueError):
    """A part or a record that does not fit: the message says which and why."""


def parse_part(text: str) -> tuple[int, int]:
    """'K/N' -> (K, N), with 0 <= K < N."""
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise SweepError(f"--sweep-part '{text}': expected K/N, two integers (e.g. 0/4)") from None
    if n < 1 or not 0 <= k < n:
        raise SweepError(f"--sweep-part '{text}': expected 0 <= K < N")
    return k, n


def part_of(space: list, part: tuple[int, int]) -> list:
    """The configs of `part`: those whose position in `space` is K modulo N,
    so every part samples the whole space alike."""
    k, n = part
    return [c for i, c in enumerate(space) if i % n == k]


def empty() -> dict:
    return {"timed": {}, "compiled": {}, "per_config_s": {}}


def load(sweep: dict | None) -> dict:
    """A record from a summary's "sweep" object, in either layout."""
    if not sweep:
        return empty()
    if "timed" in sweep:
        return {"timed": {m: dict(v) for m, v in sweep["timed"].items()},
                "compiled": {k: dict(v) for k, v in sweep["compiled"].items()},
                "per_config_s": dict(sweep.get("per_config_s", {}))}
    if "best" in sweep and "compile_s" in sweep:  # the first runs' layout: one whole sweep
        return {"timed": {m: {"0/1": dict(e)} for m, e in sweep["best"].items()},
                "compiled": {"0/1": {"seconds": sweep["compile_s"], "valid": sweep["valid"]}},
                "per_config_s": dict(sweep.get("per_config_s", {}))}
    raise SweepError("--previous: its \"sweep\" object has neither \"timed\" nor \"best\": not a moe_vs_vllm summary")


def merge(record: dict, part: tuple[int, int], compiled: dict | None, timed: dict) -> dict:
    """A new record: `record` with one run's part added, its compile
    ({"seconds", "valid"}; None when it compiled nothing) and, per batch
    size, its best config, best time, seconds and count timed. A part timed
    again at a batch size replaces the earlier entry. A part's first compile
    stays: a later run may find its binaries in a warm cache (--sweep-cache),
    which says nothing of what compiling them costs."""
    key = f"{part[0]}/{part[1]}"
    out = load(record)
    if compiled is not None:
        out["compiled"].setdefault(key, dict(compiled))
    for m, entry in timed.items():
        out["timed"].setdefault(str(m), {})[key] = dict(entry)
    return out


def _cover(keys) -> list[str] | None:
    """The keys of one split that covers the space: 0/1, or every K/N of one N."""
    if "0/1" in keys:
        return ["0/1"]
    by_n = {}
    for key in keys:
        k, n = (int(v) for v in key.split("/"))
        by_n.setdefault(n, set()).add(k)
    for n, ks in sorted(by_n.items()):
        if len(ks) == n:
            return [f"{k}/{n}" for k in sorted(ks)]
    return None


def swept(record: dict) -> dict:
    """Per batch size whose parts cover the space: the best over them, and
    the sweep's seconds and count over all of them."""
    out = {}
    for m, parts in record["timed"].items():
        keys = _cover(parts)
        if keys is None:
            continue
        best = min((parts[k] for k in keys), key=lambda e: e["best_us"])
        out[int(m)] = {"best": best["best"], "best_us": best["best_us"],
                       "seconds": sum(parts[k]["seconds"] for k in keys),
                       "timed": sum(parts[k]["timed"] for k in keys)}
    return out


def missing(record: dict, batches: list[int], n: int) -> dict:
    """Per batch size of `batches` not swept yet, the parts of a split into
    `n` it still lacks."""
    done = swept(record)
    out = {}
    for m in batches:
        if m in done:
            continue
        have = record["timed"].get(str(m), {})
        out[m] = [k for k in range(n) if f"{k}/{n}" not in have]
    return out


def valid(record: dict) -> int | None:
    """Configs of the whole space that compile, once its parts' compiles cover it."""
    keys = _cover(record["compiled"])
    return None if keys is None else sum(record["compiled"][k]["valid"] for k in keys)


def full_wall(record: dict, batches: list[int]) -> float | None:
    """The whole sweep's wall time: the space compiled once, plus at each
    batch size its measured seconds when swept, else the per-config cost
    times the valid configs. None until the compile of every part and the
    cost at every batch size are known."""
    keys = _cover(record["compiled"])
    if keys is None:
        return None
    total = sum(record["compiled"][k]["seconds"] for k in keys)
    done = swept(record)
    for m in batches:
        if m in done:
            total += done[m]["seconds"]
        elif str(m) in record["per_config_s"]:
            total += record["per_config_s"][str(m)] * valid(record)
        else:
            return None
    return total
