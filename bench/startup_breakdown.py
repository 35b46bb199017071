#!/usr/bin/env python3
"""startup_breakdown.py - where the time of `sbx run -- true` goes, step by step.

Usage (bench/startup.sh --breakdown runs it; it can run alone too):
  startup_breakdown.py [--runs N] [--warmup N] [--jobs K] [--json] -- SBX run ... -- true

Runs the command N times (after the warm-up runs; with --jobs K, N rounds of K
runs started at once) with `--trace-fd N` added after
`run`, reads the lines sbx, the launcher and the stage write on it
(launchers/base/trace.hpp), and prints the median of each step over the runs, with the
gaps between the steps that no process times itself: the start of sbx before its
main, the exec of the launcher (with --launcher; `sbx run` otherwise runs the
launcher's steps in its own process), bubblewrap until the stage, the command with
bubblewrap's end, and the end of the launcher's process. Every time is CLOCK_MONOTONIC,
which Python's time.monotonic_ns reads too.

Exit status: 0, 1 when a run failed or wrote no trace, 64 usage.
"""
import json
import os
import statistics
import subprocess
import sys
import time

# The steps in the order they happen, with what each is. A name ending in '*'
# is a gap worked out from the others.
STEPS = [
    ("sbx-exec*", "sbx's exec and its start before main"),
    ("sbx.options", "sbx: the command line"),
    ("sbx.settings", "sbx: the settings layers and the root"),
    ("sbx.plan", "sbx: the plan"),
    ("sbx.launch-prep", "sbx: the launcher's options, in sbx's own process"),
    ("sbx.exec-prep", "sbx: the plan written to a memfd (--launcher)"),
    ("launcher-exec*", "the exec of sbx-linux and its start before main"),
    ("launcher.options", "sbx-linux: the command line"),
    ("launcher.read-plan", "sbx-linux: reading the plan"),
    ("launcher.probe", "sbx-linux: the probe and the seccomp program"),
    ("launcher.tool-cache", "sbx-linux: the tool cache home"),
    ("launcher.reaper", "sbx-linux: the reaper's start"),
    ("launcher.start-early", "sbx-linux: the probe and bubblewrap started, before the plan (sbx run)"),
    ("launcher.start", "sbx-linux: bubblewrap started, its stage waiting for its orders"),
    ("launcher.group", "sbx-linux: joining the root's group"),
    ("launcher.check", "sbx-linux: checking the disk, the temporary directory"),
    ("launcher.placeholders", "sbx-linux: the placeholders"),
    ("launcher.orders", "sbx-linux: the stage's orders written"),
    ("launcher.stage-args", "sbx-linux: the stage's and bubblewrap's arguments (the usual way)"),
    ("bubblewrap*", "bubblewrap, from its fork to the stage's start"),
    ("stage.wait", "stage: waiting for its orders"),
    ("stage.mounts", "stage: the mounts, the second user namespace, the capabilities dropped, the second filter"),
    ("stage.listeners", "stage: the proxy's listeners"),
    ("stage.filter-check", "stage: the seccomp filter checked"),
    ("stage", "stage: all of it"),
    ("launcher.proxy", "sbx-linux: the proxy's start (beside the stage)"),
    ("command*", "the command and bubblewrap's end"),
    ("launcher.cleanup", "sbx-linux: the proxy and the relays stopped, what was made removed"),
    ("launcher.threads", "sbx-linux: the proxy and the relays stopped (in cleanup)"),
    ("launcher.group-leave", "sbx-linux: leaving the root's group, the last one removing the placeholders (in cleanup)"),
    ("launcher.git-audit", "sbx-linux: the audit after the command"),
    ("exit*", "the rest until the process tree has ended"),
]


def usage():
    print("usage: startup_breakdown.py [--runs N] [--warmup N] [--jobs K] [--json] -- SBX run ... -- COMMAND",
          file=sys.stderr)
    sys.exit(64)


def start_run(cmd):
    """Starts cmd with the trace on a pipe; what finish_run needs."""
    r, w = os.pipe()
    cmd = cmd[:2] + ["--trace-fd", str(w)] + cmd[2:]
    start = time.monotonic_ns() // 1000
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            pass_fds=(w,))
    os.close(w)
    return cmd, proc, r, start


def finish_run(started):
    """Waits for a run; {step: (at, us)} and its start and end."""
    cmd, proc, r, start = started
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    err = proc.stderr.read()
    rc = proc.wait()
    end = time.monotonic_ns() // 1000
    if rc != 0:
        sys.stderr.write(err.decode(errors="replace"))
        raise SystemExit("startup_breakdown.py: a run failed (exit %d): %s" % (rc, " ".join(cmd)))
    steps = {}
    for line in data.decode().splitlines():
        rec = json.loads(line)
        steps[rec["trace"]] = (rec["at"], rec["us"])
    return steps, start, end


def gaps(steps, start, end):
    """The steps with the gaps between them, in microseconds."""
    out = {name: us for name, (_, us) in steps.items()}

    def end_of(name):
        at, us = steps[name]
        return at + us

    def at(name):
        return steps[name][0]

    out["sbx-exec*"] = at("sbx.options") - start
    if "launcher.options" in steps:
        out["launcher-exec*"] = at("launcher.options") - end_of("sbx.exec-prep")
    out["bubblewrap*"] = at("stage") - at("sandbox")
    # Steps of sbx and the launcher that ran while bubblewrap built the sandbox.
    for name, (step_at, us) in steps.items():
        if not name.startswith("stage") and name != "sandbox" and step_at >= at("sandbox") and step_at + us <= at("stage"):
            out["beside:" + name] = 1
    out["command*"] = end_of("sandbox") - end_of("stage")
    last = max(end_of(n) for n in steps)
    out["exit*"] = end - last
    out["total"] = end - start
    return out


def main(argv):
    runs, warmup, jobs, as_json = 40, 5, 1, False
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] in ("--runs", "--warmup", "--jobs") and i + 1 < len(argv) and argv[i + 1].isdigit():
            if argv[i] == "--runs":
                runs = int(argv[i + 1])
            elif argv[i] == "--jobs":
                jobs = int(argv[i + 1])
            else:
                warmup = int(argv[i + 1])
            i += 2
        elif argv[i] == "--json":
            as_json = True
            i += 1
        else:
            usage()
    cmd = argv[i + 1:]
    if len(cmd) < 2 or cmd[1] != "run" or runs < 1 or jobs < 1:
        usage()
    samples = {}
    # Each round starts `jobs` runs at once and waits for them all.
    for n in range(warmup + runs):
        started = [start_run(cmd) for _ in range(jobs)]
        for steps, start, end in [finish_run(s) for s in started]:
            missing = [s for s in ("sbx.options", "sandbox", "stage") if s not in steps]
            if "sbx.launch-prep" not in steps and not ("sbx.exec-prep" in steps and "launcher.options" in steps):
                missing.append("sbx.launch-prep (or sbx.exec-prep and launcher.options)")
            if missing:
                raise SystemExit("startup_breakdown.py: the trace has no " + ", ".join(missing))
            if n < warmup:
                continue
            for name, us in gaps(steps, start, end).items():
                samples.setdefault(name, []).append(us)
    medians = {name: statistics.median(v) for name, v in samples.items()}
    if as_json:
        print(json.dumps({"runs": runs, "jobs": jobs, "median_us": medians}, indent=1, sort_keys=True))
        return 0
    print("median of %d runs%s, microseconds (a step that did not run is left out; * a gap between steps; "
          "| beside bubblewrap, which was building the sandbox meanwhile)" %
          (runs * jobs, "" if jobs == 1 else ", %d at a time" % jobs))
    # A step beside bubblewrap in at least half the runs is marked "|", and
    # left out of the sum: bubblewrap* holds its time.
    beside = {name for name, _ in STEPS if len(samples.get("beside:" + name, [])) * 2 >= runs * jobs}
    for name, what in STEPS:
        if name in medians:
            print("  %s %-22s %8.0f  %s" % ("|" if name in beside else " ", name, medians[name], what))
    inside = {"launcher.proxy", "launcher.group-leave", "launcher.threads"} | beside  # beside or within another step
    named = sum(medians.get(name, 0) for name, _ in STEPS if name not in inside and not name.startswith("stage."))
    print("    %-22s %8.0f  the whole run, as this script saw it (the steps above add up to %.0f)" %
          ("total", medians["total"], named))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
