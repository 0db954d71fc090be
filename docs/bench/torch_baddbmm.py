"""Times PyTorch/cuBLAS on the problems of tltune tuning reports, for comparison.

Usage: python3 torch_baddbmm.py REPORT.json [REPORT.json ...] > torch.json

Each REPORT is the --json output of `tltune gemm|gemv|ger`. For each one the
same batch (entries per timed launch) and the same number of rotated buffer
sets are timed with CUDA events: torch.baddbmm for gemm (A: m x k, B: k x n),
gemv (A: m x n times b: n x 1) and ger (a: m x 1 times b^T: 1 x n), beta = 0,
alpha = 1, as the tltune recipes' defaults. Half-precision gemm is timed twice:
baddbmm with a half result (cuBLAS accumulates in f32, stores f16) and, where
this PyTorch has it, bmm with out_dtype=float32 (the tltune recipe's f16 -> f32).
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tltune_json  # noqa: E402

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}


def median_ns(fn, sets, warmup=20, repeats=200):
    """Median device time of fn(i) in ns, rotating over the buffer sets."""
    for i in range(warmup):
        fn(i % sets)
    torch.cuda.synchronize()
    times = []
    for i in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(i % sets)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e6)
    times.sort()
    return times[len(times) // 2]


def problem(report):
    """(op, dtype, m, n, k) of a report's problem as a batched m×k times k×n product."""
    p = tltune_json.problem(report)
    op, m, n, k = p["op"].split(".")[0], p["m"], p["n"], p["k"]
    if op == "gemv":
        n, k = 1, n
    elif op == "ger":
        k = 1
    return op, p["dtype"], m, n, k


def time_report(report):
    op, dtype, m, n, k = problem(report)
    batch, sets = report["batch"], report["buffer_sets"]
    t = DTYPES[dtype]
    a = [torch.rand(batch, m, k, device="cuda", dtype=t) for _ in range(sets)]
    b = [torch.rand(batch, k, n, device="cuda", dtype=t) for _ in range(sets)]
    c = [torch.empty(batch, m, n, device="cuda", dtype=t) for _ in range(sets)]
    flops = 2.0 * m * n * k * batch
    out = {"op": op, "dtype": dtype, "m": m, "n": n, "k": k, "batch": batch, "buffer_sets": sets}
    ns = median_ns(lambda i: torch.baddbmm(c[i], a[i], b[i], beta=0, alpha=1, out=c[i]), sets)
    out["baddbmm_median_ns"] = ns
    out["baddbmm_gflops"] = flops / ns
    if t in (torch.float16, torch.bfloat16):
        try:
            c32 = [torch.empty(batch, m, n, device="cuda", dtype=torch.float32) for _ in range(sets)]
            ns = median_ns(lambda i: torch.bmm(a[i], b[i], out_dtype=torch.float32, out=c32[i]), sets)
            out["bmm_f32_out_median_ns"] = ns
            out["bmm_f32_out_gflops"] = flops / ns
        except (TypeError, RuntimeError) as e:
            out["bmm_f32_out_error"] = str(e).splitlines()[0]
    best = tltune_json.best(report)
    if best:
        out["tltune_median_ns"] = best["median_ns"]
        out["tltune_gflops"] = best["gflops"]
        out["tltune_vs_baddbmm"] = out["baddbmm_median_ns"] / best["median_ns"]
    return out


def main(paths):
    results = []
    for path in paths:
        with open(path) as f:
            results.append(time_report(json.load(f)))
    json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "results": results}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
