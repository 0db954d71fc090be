"""Reading the --json report of `tltune gemm|gemv|ger` (docs/json.md).

The bench reports share these two readers so that a change of tltune's JSON
is followed in one place (TestBenchReports runs them on a fresh report).
"""


def problem(report):
    """The tuned problem: op (gemm, gemv.n, gemv.t or ger), dtype, acc, m, n, k,
    precision ("exact", or "tf32" where the report has the field)."""
    op = report["op"]
    if op == "gemv":
        op += "." + report["trans"]
    return {"op": op, "dtype": report["dtype"], "acc": report["acc"],
            "m": report["m"], "n": report["n"], "k": report["k"],
            "precision": report.get("precision") or "exact"}


def best(report):
    """The fastest verified configuration: params, median_ns, gflops, gbs; None without one."""
    top = report.get("top") or []
    if not top:
        return None
    timing = top[0]["timing"]
    return {"params": top[0]["params"], "median_ns": timing["median_ns"],
            "gflops": timing["gflops"], "gbs": timing["gbs"]}
