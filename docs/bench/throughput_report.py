"""Tuning throughput: today's protocol against racing with a cold and a warm
binary cache (docs/bench/throughput.sh).

Usage: python3 throughput_report.py TODAY.json COLD.json WARM.json

Each is the --json report of one `tltune gemm` run. Prints one line per run
(evaluations per second, the tuning's wall time, the whole command's where
a NAME.wall file beside the report holds it (fresh.sh writes it), driver
builds, those from the binary
cache and those built by builder processes, raced and re-timed configurations, the winner with its median and
95 % interval), each run's wall time split, whether the winners of cold and
warm agree with today's within the measurement noise, and issue 16's goals.

Two winners agree within the noise when they are the same configuration,
or when their 95 % intervals overlap (the data cannot tell them apart);
where the other run timed the same configuration too (its top list), that
timing is shown as well.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tltune_json  # noqa: E402

NAMES = ("today", "cold", "warm")
GOALS = {"cold": 50, "warm": 200}  # evaluations per second (issue 16, item 4)
PHASES = ("setup", "propose", "compile", "build", "verify", "time", "retime", "record", "idle")


def command_wall(path):
    """The whole command's wall time beside report path (NAME.wall), or "-"."""
    try:
        with open(os.path.splitext(path)[0] + ".wall") as f:
            return tltune_json.duration(float(f.read()) * 1e9)
    except (OSError, ValueError):
        return "-"


def run_line(name, r, command):
    w = tltune_json.best(r)
    best = "no verified configuration"
    if w:
        best = "%s  %s [%s, %s]" % (w["config"], tltune_json.duration(w["median_ns"]),
                                    tltune_json.duration(w["ci_low_ns"]), tltune_json.duration(w["ci_high_ns"]))
    return "%-6s %7.1f %9s %9s %7d %7d %8d %6d %8d  %s" % (
        name, r["evaluations_per_second"], tltune_json.duration(r["wall_seconds"] * 1e9), command, r["builds"], r["cached_builds"],
        r.get("builder_builds", 0), r.get("raced", 0), r.get("retimed", 0), best)


def split_line(name, r):
    split = r.get("time_split") or {}
    parts = ["%s %.3g" % (p, split[p]) for p in PHASES if split.get(p, 0) > 0]
    return "%-6s %s" % (name, "  ".join(parts))


def agreement(name, r, ref):
    """Whether run r's winner agrees with ref's (today's) within the noise."""
    a, b = tltune_json.best(r), tltune_json.best(ref)
    if not a or not b:
        return "%s: no winner to compare" % name
    diff = "median %+.1f %%" % (100 * (a["median_ns"] / b["median_ns"] - 1))
    if a["params"] == b["params"]:
        return "%s: same winner as today (%s)" % (name, diff)
    overlap = a["ci_low_ns"] <= b["ci_high_ns"] and b["ci_low_ns"] <= a["ci_high_ns"]
    verdict = "another winner, within the noise (95 %% intervals overlap; %s)" % diff if overlap \
        else "ANOTHER WINNER, beyond the noise (95 %% intervals apart; %s)" % diff
    for i, o in enumerate(tltune_json.ranked(ref)):
        if o["params"] == a["params"]:
            verdict += "; today timed it #%d at %s" % (i + 1, tltune_json.duration(o["median_ns"]))
    return "%s: %s" % (name, verdict)


def main(paths):
    if len(paths) != len(NAMES):
        sys.exit(__doc__)
    reports, commands = {}, {}
    for name, path in zip(NAMES, paths):
        with open(path) as f:
            reports[name] = json.load(f)
        commands[name] = command_wall(path)
    print("run     eval/s      wall   command  builds  cached  builder  raced  retimed  winner  median [95% interval]")
    for name in NAMES:
        print(run_line(name, reports[name], commands[name]))
    print("wall time split, seconds:")
    for name in NAMES:
        print(split_line(name, reports[name]))
    print("winners: " + "; ".join(agreement(n, reports[n], reports["today"]) for n in ("cold", "warm")))
    goals = []
    for name, goal in GOALS.items():
        rate = reports[name]["evaluations_per_second"]
        goals.append("%s %.1f/s %s %d/s" % (name, rate, "≥" if rate >= goal else "< (MISSED)", goal))
    print("goals: " + "; ".join(goals))


if __name__ == "__main__":
    main(sys.argv[1:])
