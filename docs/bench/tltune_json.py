"""Reading the --json report of `tltune gemm|gemv|ger` (docs/json.md).

The bench reports share these readers so that a change of tltune's JSON
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


def ranked(report):
    """The fastest verified configurations, fastest first, each with params,
    config (their compact form, as tltune prints it), median_ns, its 95 %
    interval ci_low_ns and ci_high_ns, gflops and gbs."""
    keys = ("median_ns", "ci_low_ns", "ci_high_ns", "gflops", "gbs")
    return [dict(params=t["params"], config=t["config"], **{k: t["timing"][k] for k in keys})
            for t in report.get("top") or []]


def best(report):
    """The fastest verified configuration, as ranked gives it; None without one."""
    top = ranked(report)
    return top[0] if top else None


def copy_ceiling(report):
    """The copy bandwidth (GB/s) tltune stored for the report's device, or None."""
    return report.get("copy_ceiling_gbs")


def percent(gbs, copy):
    """gbs as a share of the copy ceiling copy, printed ("–" without one)."""
    return "%.1f %%" % (100 * gbs / copy) if copy else "–"


def duration(ns):
    """A time in nanoseconds, printed in the largest unit that keeps it at 1 or more."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return "%.4g %s" % (ns / scale, unit)
    return "%.4g ns" % ns


def copy_line(rows):
    """The copy ceilings of rows (each with copy_gbs), as the reports print them."""
    copies = {r["copy_gbs"] for r in rows if r.get("copy_gbs")}
    return "copy ceiling (tltune peak): " + (", ".join("%.1f GB/s" % c for c in sorted(copies)) or "none stored")
