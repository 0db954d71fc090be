"""The launch of a tuned GEMM's best configuration, for ptxrun (ncu_gemm.sh).

    python3 docs/bench/ncu_launch.py REPORT.json

reads a `tltune gemm --json` report and prints two lines: the grid and the
buffers ptxrun.cu takes (GX GY BX BY BYTES_A BYTES_B BYTES_C BATCH ELEM_A:
work-groups in x (batch entries over batch_per_group) and in y (the split),
the work-group, the bytes of A, B and C over the whole batch, the batch and
the bytes of an element of A), and what tltune measured of it.
"""
import json
import sys

import tltune_json

SIZES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "c32": 8, "c64": 16}


def launch(report):
    """ptxrun's arguments for the report's best configuration."""
    prob, best = tltune_json.problem(report), tltune_json.best(report)
    if best is None:
        sys.exit("ncu_launch.py: no configuration ran correctly")
    p, batch = best["params"], report["batch"]
    ea, ec = SIZES[prob["dtype"]], SIZES[prob["acc"]]
    per_group = max(p.get("batch_per_group") or 1, 1)
    m, n, k = prob["m"], prob["n"], prob["k"]
    return [-(-batch // per_group), max(p.get("split") or 1, 1), *p["work_group_size"],
            m * k * ea * batch, k * n * ea * batch, m * n * ec * batch, batch, ea]


def main():
    report = json.load(open(sys.argv[1]))
    print(*launch(report))
    best = tltune_json.best(report)
    print(f"tltune: {best['config']}, {best['median_ns'] / 1e3:.2f} us")


if __name__ == "__main__":
    main()
