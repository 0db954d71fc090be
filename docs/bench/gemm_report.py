"""Batched GEMM tuned by tltune next to cuBLAS (through PyTorch).

Usage: python3 gemm_report.py [--json OUT.json] REPORT.json [REPORT.json ...]

Each REPORT is the --json output of `tltune gemm`. For each, cuBLAS is timed
through PyTorch on the same problem: the same batch, the same number of
rotated buffer sets, the same element types, with CUDA events (median of
200 launches after 20 warm-up ones; torch_baddbmm.median_ns). tltune's
matrices are column-major, PyTorch's row-major, so tltune's C = A·B is
PyTorch's Cᵀ = Bᵀ·Aᵀ on the same memory: torch.bmm(Bt, At) with Bt of
(batch, N, K) and At of (batch, K, M).

  f16 inputs: bmm(..., out_dtype=torch.float32) computes the recipe's
              problem (f32 C); baddbmm with an f16 C (half the output
              bytes) is shown too.
  f32:        baddbmm (beta 0, alpha 1), as the recipe. A report of
              `tltune gemm --precision tf32` (its "precision" is "tf32")
              is timed with torch.backends.cuda.matmul.allow_tf32 = True,
              every other one with it False; rows are labelled with the
              precision and the output begins with a line saying so.

The ratio is cuBLAS time over tltune time (above 1: tltune is faster). The
small problems are memory-bound: GB/s counts each matrix moved once, and
% copy is its share of the copy ceiling tltune stored for the device (the
report's copy_ceiling_gbs, measured by `tltune peak` in the same store).
The table ends with the geometric mean of the ratios of the small and
medium problems (16³, 32³, 64×64×32 in both types) and of all rows.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tltune_json  # noqa: E402

SMALL = {(16, 16, 16), (32, 32, 32), (64, 64, 32)}


def problem(report):
    """(dtype, acc, m, n, k) of a report's problem."""
    p = tltune_json.problem(report)
    return p["dtype"], p["acc"], p["m"], p["n"], p["k"]


def precision(report):
    """The report's precision: "exact" or "tf32"."""
    return tltune_json.problem(report)["precision"]


def time_cublas(report):
    """cuBLAS times (ns) by kernel name, or None without torch and CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    from torch_baddbmm import median_ns  # imports torch itself
    dtype, acc, m, n, k = problem(report)
    batch, sets = report["batch"], report["buffer_sets"]
    t = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}[dtype]
    ta = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}[acc]
    bt = [torch.rand(batch, n, k, device="cuda", dtype=t) for _ in range(sets)]
    at = [torch.rand(batch, k, m, device="cuda", dtype=t) for _ in range(sets)]
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name()}
    if ta != t:
        c = [torch.empty(batch, n, m, device="cuda", dtype=ta) for _ in range(sets)]
        out["bmm_out_dtype"] = median_ns(lambda i: torch.bmm(bt[i], at[i], out_dtype=ta, out=c[i]), sets)
        h = [torch.empty(batch, n, m, device="cuda", dtype=t) for _ in range(sets)]
        out["baddbmm_half_out"] = median_ns(lambda i: torch.baddbmm(h[i], bt[i], at[i], beta=0, alpha=1, out=h[i]), sets)
    else:
        c = [torch.empty(batch, n, m, device="cuda", dtype=t) for _ in range(sets)]
        torch.backends.cuda.matmul.allow_tf32 = precision(report) == "tf32"
        try:
            out["baddbmm"] = median_ns(lambda i: torch.baddbmm(c[i], bt[i], at[i], beta=0, alpha=1, out=c[i]), sets)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
        out["allow_tf32"] = precision(report) == "tf32"
    return out


def row(report, cublas):
    dtype, acc, m, n, k = problem(report)
    r = {"dtype": dtype, "acc": acc, "m": m, "n": n, "k": k, "precision": precision(report), "batch": report["batch"],
         "evaluated": report.get("evaluated"), "wall_seconds": report.get("wall_seconds")}
    best = tltune_json.best(report)
    if best:
        r.update(params=best["params"], config=best["config"], median_ns=best["median_ns"], gflops=best["gflops"],
                 gbs=best["gbs"], copy_gbs=tltune_json.copy_ceiling(report))
    if cublas:
        r["cublas"] = cublas
        same = cublas.get("bmm_out_dtype", cublas.get("baddbmm"))
        if "median_ns" in r and same:
            r["ratio"] = same / r["median_ns"]
        if "median_ns" in r and "baddbmm_half_out" in cublas:
            r["ratio_half_out"] = cublas["baddbmm_half_out"] / r["median_ns"]
    return r


def us(ns):
    return "%.2f µs" % (ns / 1e3)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def table(rows):
    lines = []
    if any(r["precision"] == "tf32" for r in rows):
        lines += ["tf32 rows: tltune gemm --precision tf32 (f32 inputs rounded to tf32 in mma.sync), "
                  "cuBLAS baddbmm timed with torch.backends.cuda.matmul.allow_tf32 = True", ""]
    lines += ["| problem | batch | tltune best configuration | tltune | TFLOP/s | GB/s | % copy | cuBLAS (same problem) | ratio "
              "| baddbmm, f16 C | ratio |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        name = "%dx%dx%d %s→%s %s" % (r["m"], r["n"], r["k"], r["dtype"], r["acc"], r["precision"])
        if "median_ns" not in r:
            lines.append("| %s | %d | no verified configuration | | | | | | | | |" % (name, r["batch"]))
            continue
        cells = [name, str(r["batch"]), r["config"], us(r["median_ns"]), "%.1f" % (r["gflops"] / 1e3),
                 "%.0f" % r["gbs"], tltune_json.percent(r["gbs"], r.get("copy_gbs"))]
        c = r.get("cublas") or {}
        same = c.get("bmm_out_dtype", c.get("baddbmm"))
        cells += [us(same) if same else "–", "%.2f×" % r["ratio"] if "ratio" in r else "–"]
        half = c.get("baddbmm_half_out")
        cells += [us(half) if half else "", "%.2f×" % r["ratio_half_out"] if "ratio_half_out" in r else ""]
        lines.append("| " + " | ".join(cells) + " |")
    small = [r["ratio"] for r in rows if "ratio" in r and (r["m"], r["n"], r["k"]) in SMALL]
    every = [r["ratio"] for r in rows if "ratio" in r]
    lines.append("")
    lines.append("geometric mean of the ratios: small and medium rows (16³, 32³, 64×64×32; %d) %.2f×, all rows (%d) %.2f×"
                 % (len(small), geomean(small), len(every), geomean(every)))
    lines.append(tltune_json.copy_line(rows))
    return "\n".join(lines)


def main(args):
    out_json = None
    if args[:1] == ["--json"]:
        out_json, args = args[1], args[2:]
    rows = []
    for path in args:
        with open(path) as f:
            report = json.load(f)
        rows.append(row(report, time_cublas(report)))
    print(table(rows))
    if out_json:
        with open(out_json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main(sys.argv[1:])
