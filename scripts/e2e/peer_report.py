#!/usr/bin/env python3
"""Figures of scripts/e2e/peer-figures: tsgateway beside the bleak peer, from the outputs of one
mode's rounds, as lines for figures.txt.

    peer_report.py DIR MODE ROUNDS [WHATS [DIALECT]]

WHATS: the jobs, comma-separated (default info,7,90); DIALECT names the dialect on each line
(the NPK rounds: `7 NPK`).

Each job is PREFIX.out, PREFIX.time ("wall maxrss-KiB status" from /usr/bin/time) and
PREFIX.clock (the harness's Unix clock before and after), PREFIX = DIR/{tsgateway,bleak}-{info,7,90}-R.
Medians over the rounds; ratios are tsgateway / bleak (below 1: tsgateway is faster or smaller).
Where DIR also holds shared-JOB-R (E2E_PEER_SHARED: a second build of tsgateway run in the same
rounds), a line per job compares the build under test with it.
"""

import json
import os
import re
import statistics
import sys

PHASE = re.compile(r"phase: (.+?) at ([0-9.]+)")
CONNECT = re.compile(r"link open after (\d+) ms, first byte after (\d+) ms")


def load(prefix):
    text = open(prefix + ".out", encoding="utf-8", errors="replace").read()
    wall_time, rss, status = open(prefix + ".time").read().split()[-3:]
    start, end = map(float, open(prefix + ".clock").read().split())
    return {"text": text, "rss": int(rss) / 1024, "status": int(status), "start": start, "end": end, "wall": end - start}


def tsgateway_job(prefix):
    job = load(prefix)
    text = job["text"]
    connect = CONNECT.search(text)
    job["firstByte"] = int(connect.group(2)) if connect else None
    job["phases"] = sorted(((float(at), name) for name, at in PHASE.findall(text)))
    try:
        job["result"] = json.loads(text[text.index("{"):text.rindex("}") + 1])
    except ValueError:
        job["result"] = {}
    return job


def bleak_job(prefix):
    job = load(prefix)
    lines = [line for line in job["text"].splitlines() if line.startswith("{")]
    job["result"] = json.loads(lines[-1]) if lines else {}
    job["firstByte"] = job["result"].get("phases", {}).get("firstByte")
    return job


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "–"


def phase_breakdown(jobs):
    """Median milliseconds from the previous phase (the first from launch; 'exit' to the end)."""
    per_round = []
    for job in jobs:
        steps, previous = [], job["start"]
        for at, name in job["phases"]:
            steps.append((name, (at - previous) * 1000))
            previous = at
        steps.append(("exit", (job["end"] - previous) * 1000))
        per_round.append(steps)
    names = [name for name, _ in per_round[0]]
    if any([name for name, _ in steps] != names for steps in per_round):
        per_round = per_round[:1]  # rounds took different paths (a reconnect): show the first
    return [(name, statistics.median(steps[i][1] for steps in per_round)) for i, name in enumerate(names)]


def main():
    directory, mode, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    whats = sys.argv[4].split(",") if len(sys.argv) > 4 else ["info", "7", "90"]
    dialect = sys.argv[5] + " " if len(sys.argv) > 5 else ""
    label = {what: dialect + name for what, name in {"info": "info", "7": "7-day sync", "90": "90-day sync"}.items()}
    first = bleak_job(f"{directory}/bleak-{whats[0]}-1")["result"]
    print(f"{mode:>4}  tsgateway / bleak {first.get('bleak', '')} peer, median of the successful ones of {rounds} alternating rounds "
          "(whole = launch to exit; connect→first byte: tsgateway from Watch.connect, bleak from BleakClient.connect, "
          "to the watch's first notification; peak RSS by /usr/bin/time)")
    for what in whats:
        ts = [tsgateway_job(f"{directory}/tsgateway-{what}-{r}") for r in range(1, rounds + 1)]
        bl = [bleak_job(f"{directory}/bleak-{what}-{r}") for r in range(1, rounds + 1)]
        failed = [f"tsgateway round {r + 1} exited {j['status']}" for r, j in enumerate(ts) if j["status"]] + \
                 [f"bleak round {r + 1} exited {j['status']}: {(j['text'].strip().splitlines() or [''])[-1]}" for r, j in enumerate(bl) if j["status"]]
        if failed:
            print(f"{mode:>4}  {label[what]:>11}: failed rounds left out: {'; '.join(failed)}")
        ts, bl = [j for j in ts if not j["status"]], [j for j in bl if not j["status"]]
        if not ts or not bl:
            print(f"{mode:>4}  {label[what]:>11}: not compared (no successful round of one of them)")
            continue
        wall_ts, wall_bl = median(j["wall"] for j in ts), median(j["wall"] for j in bl)
        first_ts, first_bl = median(j["firstByte"] for j in ts), median(j["firstByte"] for j in bl)
        rss_ts, rss_bl = median(j["rss"] for j in ts), median(j["rss"] for j in bl)
        records = ""
        if what != "info":
            records = f"; records {ts[0]['result'].get('fetched')} / {bl[0]['result'].get('fetched')}"
        print(f"{mode:>4}  {label[what]:>11}: whole {wall_ts:.2f} / {wall_bl:.2f} s = {ratio(wall_ts, wall_bl)}; "
              f"connect→first byte {first_ts:.0f} / {first_bl:.0f} ms = {ratio(first_ts, first_bl)}; "
              f"peak RSS {rss_ts:.1f} / {rss_bl:.1f} MiB = {ratio(rss_ts, rss_bl)}{records}")
        shared = [tsgateway_job(f"{directory}/shared-{what}-{r}") for r in range(1, rounds + 1)
                  if os.path.exists(f"{directory}/shared-{what}-{r}.time")]
        shared = [j for j in shared if not j["status"]]
        if shared:
            wall_sh, rss_sh = median(j["wall"] for j in shared), median(j["rss"] for j in shared)
            print(f"{mode:>4}  {label[what]:>11}: this build / the shared-runtime build ({len(shared)} successful rounds): "
                  f"whole {wall_ts:.2f} / {wall_sh:.2f} s = {ratio(wall_ts, wall_sh)}; "
                  f"peak RSS {rss_ts:.1f} / {rss_sh:.1f} MiB = {ratio(rss_ts, rss_sh)}; shared-runtime / bleak peak RSS = {ratio(rss_sh, rss_bl)}")
        if what != "info":
            steps = ", ".join(f"{name} {ms:.0f}" for name, ms in phase_breakdown(ts))
            print(f"{mode:>4}  {label[what]:>11}: tsgateway phases, ms since the previous (median): launch → {steps}")
            bleak_phases = {}
            for job in bl:
                for name, at in job["result"].get("phases", {}).items():
                    bleak_phases.setdefault(name, []).append(at)
            order = sorted(bleak_phases, key=lambda name: median(bleak_phases[name]))
            print(f"{mode:>4}  {label[what]:>11}: bleak phases, ms since BleakClient.connect (median): "
                  + ", ".join(f"{name} {median(bleak_phases[name]):.0f}" for name in order))


if __name__ == "__main__":
    main()
