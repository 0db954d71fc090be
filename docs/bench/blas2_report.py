"""GEMV and GER tuned by tltune against the copy ceiling, next to PyTorch.

Usage: python3 blas2_report.py [--json OUT.json] REPORT.json [REPORT.json ...]

Each REPORT is the --json output of `tltune gemv|ger`. For each one the
Markdown table on stdout gives tltune's best median, its bandwidth and its
share of the device's copy ceiling (the report's copy_ceiling_gbs, measured
by `tltune peak`), and — where PyTorch with CUDA is importable — PyTorch on
the same problem: the same batch, the same number of rotated buffer sets,
the same element types, timed with CUDA events (median of 200 launches after
20 warm-up ones), its bandwidth counted with tltune's bytes (each input read
once, each output written once).

tltune's matrices are column-major; PyTorch's are row-major, so the same
memory is the transposed tensor:
  gemv.n  c = A b, A M×N      torch.bmm(A_t.mT, b)  with A_t (batch, N, M)
  gemv.t  c = Aᵀ b, A N×M     torch.bmm(A_t, b)     with A_t (batch, M, N)
  ger     C = a bᵀ, C M×N     C_t (batch, N, M) = b[:, :, None] * a[:, None, :]
                              (torch.mul with out=, and torch.baddbmm with k = 1
                              where the output type is the input type; the
                              faster is shown)
Half-precision inputs with an f32 output (the recipes' default) use
bmm(..., out_dtype=torch.float32) where this PyTorch has it, else an f16
output (marked "f16 out": fewer bytes written than the recipe).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tltune_json  # noqa: E402

DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
          "c32": "complex64", "c64": "complex128"}


def problem(report):
    """(op, dtype, acc, m, n) of a report's problem; op is gemv.n, gemv.t or ger."""
    p = tltune_json.problem(report)
    return p["op"], p["dtype"], p["acc"], p["m"], p["n"]


def time_torch(report):
    """PyTorch's median ns and what it ran, or None without torch and CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    op, dtype, acc, m, n = problem(report)
    batch, sets = report["batch"], report["buffer_sets"]
    t, ta = getattr(torch, DTYPES[dtype]), getattr(torch, DTYPES[acc])

    def rand(*shape, dt=t):
        if dt.is_complex:
            return torch.randn(*shape, device="cuda", dtype=dt)
        return torch.rand(*shape, device="cuda", dtype=dt)

    from torch_baddbmm import median_ns  # imports torch itself

    candidates = []
    if op.startswith("gemv"):
        rows, cols = (n, m) if op == "gemv.n" else (m, n)  # A_t's shape per entry
        a = [rand(batch, rows, cols) for _ in range(sets)]
        b = [rand(batch, n, 1) for _ in range(sets)]
        view = (lambda x: x.mT) if op == "gemv.n" else (lambda x: x)
        if ta == t:
            c = [torch.empty(batch, m, 1, device="cuda", dtype=ta) for _ in range(sets)]
            candidates.append(("bmm", lambda i: torch.bmm(view(a[i]), b[i], out=c[i])))
        else:
            c = [torch.empty(batch, m, 1, device="cuda", dtype=ta) for _ in range(sets)]
            try:
                torch.bmm(view(a[0]), b[0], out_dtype=ta, out=c[0])
                candidates.append(("bmm out_dtype", lambda i: torch.bmm(view(a[i]), b[i], out_dtype=ta, out=c[i])))
            except (TypeError, RuntimeError):
                h = [torch.empty(batch, m, 1, device="cuda", dtype=t) for _ in range(sets)]
                candidates.append(("bmm, f16 out", lambda i: torch.bmm(view(a[i]), b[i], out=h[i])))
    else:
        a = [rand(batch, 1, m) for _ in range(sets)]
        b = [rand(batch, n, 1) for _ in range(sets)]
        c = [torch.empty(batch, n, m, device="cuda", dtype=ta) for _ in range(sets)]
        candidates.append(("mul", lambda i: torch.mul(b[i], a[i], out=c[i])))
        if ta == t:
            candidates.append(("baddbmm k=1", lambda i: torch.baddbmm(c[i], b[i], a[i], beta=0, alpha=1, out=c[i])))
    best = None
    for name, fn in candidates:
        ns = median_ns(fn, sets)
        if best is None or ns < best[1]:
            best = (name, ns)
    return {"kernel": best[0], "median_ns": best[1], "torch": torch.__version__}


def row(report, torch_result):
    op, dtype, acc, m, n = problem(report)
    out = {"op": op, "dtype": dtype, "acc": acc, "m": m, "n": n, "batch": report["batch"],
           "copy_gbs": tltune_json.copy_ceiling(report)}
    best = tltune_json.best(report)
    if best:
        out.update(params=best["params"], config=best["config"], median_ns=best["median_ns"], gbs=best["gbs"],
                   bytes=best["gbs"] * best["median_ns"])
    if torch_result and "bytes" in out:
        torch_result["gbs"] = out["bytes"] / torch_result["median_ns"]
        out["torch"] = torch_result
    return out


def table(rows):
    lines = ["| problem | batch | tltune best | tltune | GB/s | % copy | PyTorch | GB/s | % copy | speed-up |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        name = "%s %s→%s %d×%d" % (r["op"], r["dtype"], r["acc"], r["m"], r["n"])
        if "median_ns" not in r:
            lines.append("| %s | %d | no verified configuration | | | | | | | |" % (name, r["batch"]))
            continue
        cells = [name, str(r["batch"]), r["config"], "%.2f µs" % (r["median_ns"] / 1e3),
                 "%.0f" % r["gbs"], tltune_json.percent(r["gbs"], r["copy_gbs"])]
        t = r.get("torch")
        if t:
            cells += ["%s %.2f µs" % (t["kernel"], t["median_ns"] / 1e3), "%.0f" % t["gbs"],
                      tltune_json.percent(t["gbs"], r["copy_gbs"]), "%.2f×" % (t["median_ns"] / r["median_ns"])]
        else:
            cells += ["–", "", "", ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(args):
    json_out = None
    if args[:1] == ["--json"]:
        json_out, args = args[1], args[2:]
    rows = []
    for path in args:
        with open(path) as f:
            report = json.load(f)
        try:
            torch_result = time_torch(report)
        except Exception as e:  # a PyTorch failure must not lose tltune's table
            print("%s: PyTorch failed: %s" % (path, e), file=sys.stderr)
            torch_result = None
        rows.append(row(report, torch_result))
    print(tltune_json.copy_line(rows))
    print()
    print(table(rows))
    if json_out:
        with open(json_out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main(sys.argv[1:])
