#!/usr/bin/env python3
"""results.py - the README's "Results" section, generated from bench.json.

    tools/bench/results.py [--stdout] [BENCH_JSON [README]]

Replaces what lies between the lines `<!-- results:begin -->` and
`<!-- results:end -->` of README (default README.md) with the section made
from BENCH_JSON (default build/bench/bench.json, written by
tools/bench/report.py): the machine, the kernels and the TCG caveat, the
goals of issue 8 (met or not, and where blkiso beats or trails each
anchor), and one table per scenario with the anchors as columns.  Nothing
in the section is typed by hand: `make bench` regenerates it.  --stdout
prints the section instead of editing README.  Without BENCH_JSON (the file
absent), the section says that no results were generated yet.
Python 3 standard library only.
"""
import json
import os
import sys

sys.dont_write_bytecode = True	# no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402  (table_rows, fmt, orders: one definition)

BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"
TITLES = {
    "accuracy": "Accuracy: achieved vs quota",
    "noisy": "Noisy neighbour: the victim's isolation",
    "overhead": "Overhead: guest instructions per 4 KiB read (icount)",
    "convergence": "Convergence: time to within 5% of the quota",
    "scale": "Scale: 1,000 configured cgroups, fio in 8",
    "buffered": "Buffered writer neighbour: the victim's isolation from writeback",
    "ratestep": "Rate step: the victim's rate doubled, then halved, mid-run",
}
WHAT = {
    "accuracy": "Each case caps one cgroup at a quota (4 KiB-equivalent IOPS, several block "
                "sizes, IOPS and work-unit modes) and drives it past the quota; the error is "
                "(achieved - quota) / quota over the run and per 1 s window. Summary: the "
                "worst |error| over the cases (err_win_mean_pct: the mean). A new cap "
                "starts with a full bucket (burst_ms=50 of the rate, at least "
                "burst_limit=3 requests for an iops cap), which the first window and the "
                "run include; err_win_max_steady_pct leaves out the first window.",
    "noisy": "A victim (QD1 random I/O at a fixed rate) beside a neighbour (1 MiB reads, "
             "QD128). Isolation = the victim's achieved / target IOPS per second (mean, p05, "
             "p01 over the seconds); p99_ratio = the victim's p99 / its solo p99; "
             "p999_ratio = the same at p99.9, the victim's rarest stalls (reported, not a "
             "bound: io.max's 100 ms slices hold its p99 and stall it for milliseconds); "
             "work_csv_pct = the victim's IOPS over its shape's capacity plus the neighbour's "
             "MB/s over its shape's capacity while both run (as resctl-bench's work_csv); "
             "leftover_pct = the neighbour's share of what the victim's share leaves; "
             "release_pct = the neighbour's throughput while the victim idles; static_pct = "
             "the neighbour's MB/s over best_static's, the best static cap on it "
             "(*-static anchors, bisected) that held the victim's bounds (isolation mean "
             ">= 99%, p05 >= 95%, p99 <= 1.5x solo). Summary: the worst case.",
    "overhead": "fio randread 4 KiB qd1 in a cgroup whose quota never bites; one guest "
                "nanosecond is one guest instruction, so 10^9 / IOPS = instructions per read "
                "(kernel and fio). over_raw / over_dm_linear: the difference to the raw "
                "device / to dm-linear. io.max-lv, iocost-lv, bfq-lv: what an LVM user "
                "has instead, reads through dm-linear with io.max on the dm-linear device, "
                "iocost or bfq on the disk under it.",
    "convergence": "After a load or size step: seconds until the achieved rate stays within "
                   "5% of the quota. Summary: the slowest case (settle_s) and the mean.",
    "buffered": "A victim (4 KiB O_DIRECT reads at a fixed rate, QD1) beside a writer "
                "flooding the page cache of the same ext4 (1 MiB buffered writes; the flusher "
                "submits its writeback, each anchor charges it to the writer's cgroup). "
                "blkiso, blkiso-cap and io.max cap the writer at half the device's write "
                "bandwidth (blkiso also gives the victim its rate as an allocation), iocost "
                "and bfq weight the victim 1000 and the writer 10. Figures as in noisy; "
                "neighbour_mb_s is the writer's write(2) rate, which dirty throttling holds "
                "to its writeback's. Summary: the worst case.",
    "ratestep": "noisy's victim and neighbour, the victim at R, 2R, then R/2 (4 s each, fio "
                "startdelay), its line written once for R. Per phase k: isolation, p99_ratio "
                "against its solo p99 at that rate, static_pct against best_static at that "
                "rate (io.max bisected per rate); settle_s_k = seconds after the step until "
                "the victim holds its bounds and the neighbour is within 10% of best_static "
                "(-1: not in the phase). Figures, not gates.",
    "scale": "1,000 configured cgroups, fio in 8 of them: total throughput and instructions "
             "per I/O, against the same load with 1 cgroup configured (the _1 figures) and "
             "their ratio (doc/bench.md).",
}


def md_table(hdr, rows):
    out = ["| " + " | ".join(hdr) + " |",
           "|" + "|".join("---" if i == 0 else "---:" for i in range(len(hdr))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return out


def big(v):
    return "{:,}".format(int(round(v))) if isinstance(v, (int, float)) else str(v)


def device_line(dev):
    """The device in a few words: shaping, then the capacity measured."""
    if not isinstance(dev, dict) or not dev:
        return None
    parts = []
    if dev.get("size_mb"):
        parts.append("%s MiB" % big(dev["size_mb"]))
    if dev.get("hw_queue_depth") and dev.get("completion_us"):
        parts.append("%s slots x %s us" % (dev["hw_queue_depth"], dev["completion_us"]))
    mbps = dev.get("mbps_limit", dev.get("mbps"))
    if mbps:
        parts.append("%s MiB/s limit" % mbps)
    if dev.get("filesystem"):
        parts.append("memory-backed, %s on it" % dev["filesystem"])
    if dev.get("shaping"):
        parts.append("shaping %s" % dev["shaping"])
    if dev.get("cgroups_configured"):
        parts.append("%s cgroups configured" % big(dev["cgroups_configured"]))
    meas = []
    for k, label in (("randread_4k_qd64_iops", "4k randread QD64 %s IOPS"),
                     ("randrw_4k_qd1_iops", "4k randrw QD1 %s IOPS"),
                     ("randread_4k_qd1_iops", "4k randread QD1 %s IOPS"),
                     ("read_1m_qd32_bytes_s", "1 MiB reads %s MB/s"),
                     ("randread_1m_qd128_io_uring_bytes_s", "1 MiB io_uring QD128 %s MB/s"),
                     ("write_1m_qd32_bytes_s", "1 MiB writes %s MB/s")):
        v = dev.get(k)
        if isinstance(v, (int, float)):
            meas.append(label % big(v / 1e6 if k.endswith("bytes_s") else v))
    text = "%s (%s)" % (dev.get("kind", dev.get("name", "device")), ", ".join(parts))
    if meas:
        text += "; measured in the same boot: " + ", ".join(meas)
    return text


def notes(name, sc):
    """Facts from the figures that the tables alone would hide."""
    out = []
    if name in ("noisy", "buffered"):
        for r in sc["runs"]:
            m = r.get("metrics") or {}
            ne = m.get("neighbour_errors")
            if isinstance(ne, (int, float)) and ne > 0:
                out.append("%s: the neighbour's fio counted %s failed reads (EAGAIN) and moved "
                           "%s MB/s beside the victim; its victim's figures come with a "
                           "starved neighbour." % (r["anchor"], big(ne),
                                                   report.fmt(m.get("neighbour_mb_s"))))
        for r in sc["runs"] if name == "noisy" else []:
            m = r.get("metrics") or {}
            if m.get("late_at_device_pct") is not None:
                out.append("%s: %s%% of the victim's I/Os completed after its latency target "
                           "in fio; %s%% were late where blkiso times them (`.map` to "
                           "`.end_io`), %s%% of the late ones: the rest of its tail was "
                           "spent above the block layer (`late_at_device_pct`, doc/bench.md)."
                           % (r["anchor"], report.fmt(m.get("victim_late_pct")),
                              report.fmt(m.get("victim_dev_late_pct")),
                              report.fmt(m["late_at_device_pct"])))
        dev = sc.get("device") or {}
        if dev.get("iocost_model"):
            out.append("iocost, calibrated in this boot: `io.cost.model` `%s`, `io.cost.qos` `%s`."
                       % (dev["iocost_model"], dev.get("iocost_qos")))
    return out


def with_unit(v, unit):
    if v is None:
        return "-"
    s = report.fmt(v)
    return s + unit if unit in ("%", "x") else s


def goal_cell(g, a):
    v = g["anchors"].get(a)
    if v is None:
        return "-"
    s = with_unit(v, g["unit"])
    vs = g["blkiso_vs"].get(a)
    return "%s (blkiso %s)" % (s, vs) if vs else s


def verdicts(g):
    """'beats io.max, iocost; trails bfq' for one goal."""
    by = {}
    for a, v in g["blkiso_vs"].items():
        by.setdefault(v, []).append(a)
    parts = []
    for k in ("beats", "ties", "trails"):
        if by.get(k):
            parts.append("%s %s" % (k if k != "ties" else "ties with",
                                   ", ".join(sorted(by[k], key=report.anchor_key))))
    return "; ".join(parts)


def section(doc):
    L = [BEGIN, "<!-- generated by tools/bench/results.py from build/bench/bench.json "
         "(make bench): do not edit by hand -->", ""]
    if doc is None:
        L += ["No results generated yet: `make bench` runs the scenarios and writes this "
              "section from `build/bench/bench.json`.", "", END]
        return L
    m = doc["machine"]
    wall = doc.get("wall_seconds")
    L.append("Generated %s by `make bench`%s from `build/bench/bench.json` (schema %d, "
             "[doc/bench.md](doc/bench.md)). Host: %s, %s cores, %s GiB, Linux %s, %s. "
             "Guest kernel: %s."
             % (doc["generated_utc"][:10],
                " (%d min wall)" % round(wall / 60.0) if wall else "",
                doc["schema"], m.get("cpu_model"), m.get("cores"), m.get("memory_gib"),
                m.get("host_kernel"), m.get("qemu"), doc.get("guest_kernel")))
    L += ["", "> " + doc["caveat"], ""]

    scen = doc["scenarios"]
    goals = doc["goals"]
    anchors = []
    for g in goals:
        for a in g["anchors"]:
            if a != "blkiso" and a not in anchors:
                anchors.append(a)
    anchors.sort(key=report.anchor_key)
    L.append("**Goals** (issue 8; figures, not gates). blkiso's value, whether it meets "
             "the goal, and each anchor's value with how blkiso compares (\"best\": the "
             "best isolating anchor; `none` is the baseline without isolation).")
    L.append("")
    rows = []
    for g in goals:
        met = "-" if g["met"] is None else ("**met**" if g["met"] else "not met")
        rows.append([g["name"], g["target"], with_unit(g["blkiso"], g["unit"]), met] +
                    [goal_cell(g, a) for a in anchors] + [g["best_anchor"] or "-"])
    L += md_table(["goal", "target", "blkiso", "met"] + anchors + ["best"], rows)
    L.append("")
    measured = [g for g in goals if g["met"] is not None]
    L += ["blkiso meets %d of the %d goals measured%s." % (
        sum(1 for g in measured if g["met"]), len(measured),
        " (%d not measured)" % (len(goals) - len(measured)) if len(measured) < len(goals) else ""),
        "How each figure is measured and summarised: [doc/bench.md](doc/bench.md#goals).", ""]
    lines = []
    for g in goals:
        v = verdicts(g)
        if v:
            lines.append("- %s: blkiso %s." % (g["name"], v))
        elif g["blkiso"] is None:
            lines.append("- %s: not measured (%s)." % (
                g["name"], "scenario %s not run" % g["scenario"] if g["scenario"] not in scen
                else "no figure in scenario %s%s" % (g["scenario"], (
                    ": no static run held the victim's bounds with the neighbour moving, "
                    "or no static anchor ran") if g["id"] == "frontier" else "")))
    if lines:
        L += ["Where blkiso beats or trails each anchor:", ""] + lines + [""]

    seen = {}	# device text -> the first scenario that showed it
    for name in report.ordered(scen):
        sc = scen[name]
        L.append("**%s** (`%s`)." % (TITLES.get(name, name), name))
        if name in WHAT:
            L[-1] += " " + WHAT[name]
        dev = device_line(sc.get("device"))
        if dev:
            L[-1] += " Device: %s." % ("as in %s" % seen[dev] if dev in seen else dev)
            seen.setdefault(dev, name)
        L.append("")
        hdr, rows = report.table_rows(name, sc)
        L += md_table(hdr, rows)
        skips = ["%s: %s" % (a, "; ".join(s["skipped_reasons"]))
                 for a, s in sc["summary"].items() if s["skipped_reasons"]]
        if skips:
            L += ["", "Skipped: " + "; ".join(skips) + "."]
        if sc.get("missing_anchors"):
            L += ["", "Not run (no record): %s." % ", ".join(sc["missing_anchors"])]
        for n in notes(name, sc):
            L += ["", n]
        L.append("")
    missing = [n for n in report.SCENARIO_ORDER if n not in scen]
    if missing:
        L += ["Not in this run: %s." % ", ".join(missing), ""]
    fp = doc.get("fastpath")
    if isinstance(fp, dict) and "instructions_per_bio" in fp:
        L += ["The token engine's fast path alone (host, callgrind, `selftests/bench/fastpath.sh`): "
              "%s instructions per bio, %s atomic read-modify-writes on it."
              % (fp.get("instructions_per_bio"), fp.get("atomic_rmw_in_fast_path")), ""]
    L += ["Plots (not in git): `build/bench/bench-accuracy.png`, `bench-noisy.png`, "
          "`bench-frontier.png`, "
          "`bench-convergence.png`, `bench-overhead.png`, `bench-buffered.png`, `bench-ratestep.png`.", "", END]
    return L


def main():
    args = [a for a in sys.argv[1:] if a != "--stdout"]
    to_stdout = "--stdout" in sys.argv[1:]
    if any(a.startswith("-") for a in args) or len(args) > 2:
        sys.exit(__doc__)
    bench = args[0] if args else "build/bench/bench.json"
    readme = args[1] if len(args) > 1 else "README.md"
    doc = None
    if os.path.exists(bench):
        with open(bench) as f:
            doc = json.load(f)
        if doc.get("schema") != report.SCHEMA:
            sys.exit("results.py: %s: schema %r, expected %d" % (bench, doc.get("schema"),
                                                                report.SCHEMA))
    text = "\n".join(section(doc)) + "\n"
    if to_stdout:
        sys.stdout.write(text)
        return
    with open(readme) as f:
        old = f.read()
    b, e = old.find(BEGIN + "\n"), old.find(END)
    if b < 0 or e < b:
        sys.exit("results.py: %s has no %s ... %s lines" % (readme, BEGIN, END))
    e = old.index("\n", e) + 1 if "\n" in old[e:] else len(old)
    new = old[:b] + text + old[e:]
    if new != old:
        tmp = readme + ".tmp"
        with open(tmp, "w") as f:
            f.write(new)
        os.replace(tmp, readme)
    print("results.py: %s: Results section %s from %s"
          % (readme, "rewritten" if new != old else "unchanged",
             bench if doc else "(no bench.json)"))


if __name__ == "__main__":
    main()
