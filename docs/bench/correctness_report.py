"""Summary of a correctness sweep (correctness.sh): every tuning run whose
configurations did not all verify (an outcome other than ok or pruned), and
the totals.

    python3 docs/bench/correctness_report.py REPORT.json...

Exit status 1 when a run has such an outcome.
"""

import json
import sys

import tltune_json


def failures(report):
    """The report's outcomes other than ok and pruned, with their counts."""
    return {k: v for k, v in (report.get("outcomes") or {}).items() if k not in ("ok", "pruned")}


def main(paths):
    runs = configurations = failed = 0
    for path in paths:
        runs += 1
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            failed += 1
            print("%s: no report (%s); its .err file says why" % (path, e))
            continue
        configurations += report.get("evaluated") or 0
        bad = failures(report)
        if bad:
            failed += 1
            p = tltune_json.problem(report)
            print("%s: %s %s→%s %dx%dx%d alpha=%s beta=%s %s batch %d: %s" % (
                path, p["op"], p["dtype"], p["acc"], p["m"], p["n"], p["k"], report["alpha"], report["beta"],
                report["layout"], report["batch"], ", ".join("%s %d" % kv for kv in sorted(bad.items()))))
    print("%d run(s), %d configuration(s) evaluated, %d run(s) with outcomes other than ok or pruned" % (
        runs, configurations, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
