"""The spread of the default search over seeds (docs/bench/seeds.sh).

Usage: python3 seeds_report.py [--goal PERCENT] SEED-N.json...

Each is the --json report of one tuning run of the same problem, with
its own seed, store and binary cache. Prints one line per run (its label,
from the file name, the best configuration, its median, GB/s, the share
of the copy ceiling, evaluations per second and builds taken from the
binary cache), then the least, median and largest share of copy and how
many runs reached the goal (default 90 %).
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tltune_json  # noqa: E402


def label(path):
    return os.path.splitext(os.path.basename(path))[0]


def main(args):
    goal = 90.0
    if args[:1] == ["--goal"]:
        goal, args = float(args[1]), args[2:]
    if not args:
        sys.exit(__doc__)
    reports = []
    for path in args:
        with open(path) as f:
            reports.append((label(path), json.load(f)))
    p = tltune_json.problem(reports[0][1])
    shape = "x".join(str(d) for d in (p["m"], p["n"], p["k"]) if d)
    print("%s %s→%s %s: %d run(s)" % (p["op"], p["dtype"], p["acc"], shape, len(reports)))
    print("%-10s %-44s %10s %8s %8s %7s %6s" % ("run", "best configuration", "median", "GB/s", "% copy", "eval/s", "cached"))
    shares = []
    for name, r in reports:
        b, copy = tltune_json.best(r), tltune_json.copy_ceiling(r)
        if not b:
            print("%-10s no verified configuration" % name)
            continue
        if copy:
            shares.append(100 * b["gbs"] / copy)
        print("%-10s %-44s %10s %8.0f %8s %7.1f %6d" % (
            name, b["config"], tltune_json.duration(b["median_ns"]), b["gbs"], tltune_json.percent(b["gbs"], copy),
            r["evaluations_per_second"], r.get("cached_builds", 0)))
    if not shares:
        print("no share of copy: no run has both a verified configuration and a stored copy ceiling")
        return
    reached = sum(s >= goal for s in shares)
    print("share of copy over %d run(s): least %.1f %%, median %.1f %%, largest %.1f %%; %d of %d at or above %g %%" % (
        len(shares), min(shares), statistics.median(shares), max(shares), reached, len(shares), goal))


if __name__ == "__main__":
    main(sys.argv[1:])
