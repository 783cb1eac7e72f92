#!/usr/bin/env python3
"""The power-cut loop of scripts/e2e-powercut, on the host: boots the VM again and again with the
same disk, cuts its power (SIGKILL to QEMU: no sync, no unmount; the guest's page cache and
QEMU's requests in flight are lost) at chosen points of a `tsgateway sleep sync`, and checks
after each cut what the next boot finds. Standard library only.

Each boot (scripts/e2e/powercut-guest) first checks the database of the sync the last cut stopped,
then starts a sync into a new database on the same filesystem, which this script cuts. Boot 0
calibrates: its sync runs to the end (its timeline sets where the later cuts aim) and the power is
cut after it. The simulated watch writes every sleep commit it accepts to a virtio-serial port
whose host end is a file here, so what it saw acknowledged survives the cut.

Phases of a sync (times from the guest's "sync-start" line, as the host sees them):
  connect   the process starts, opens (creates) the database, connects, HELLO, time set
  transfer  pages arrive and are stored, a transaction each
  commit    the last part is stored, the cursor is written, SLEEP_COMMIT is on its way
  ack       the watch has accepted the commit (its line arrived here); the gateway writes the
            committed cursor, disconnects, saves the simulated watch's memory and exits
A cut aims at a phase: a delay after the marker the phase begins with, drawn from the phase's
length in the calibration. Where it landed is read afterwards from the logs the cut cannot
reach: the watch's commit log, and the sync's progress lines (each printed after a part's
transaction committed).

Checks after each cut: e2fsck's verdict (0 or 1), PRAGMA integrity_check ok, every record of
every commit the watch accepted in the database, as many records as the gateway had committed,
no record stored twice or unknown to the watch, no record missing below the cursor the database
kept, and the next sync completing with exactly the watch's records.

  scripts/e2e/powercut.py --report e2e-out/powercut-DATE   # the verdicts of a kept run again
"""
import argparse
import csv
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

AIMED = ["connect", "transfer", "commit", "ack"]
PROGRESS = re.compile(r"^syncing sleep records: (\d+)/", re.M)
LAST_PAGE = re.compile(r"syncing sleep records: (\d+)/\1 records")
# SleepStage in JSON (its name) and in the database (its wire number).
STAGES = {"awake": 0, "light": 1, "deep": 2, "rem": 3}


class Boot:
    """One run of the VM: its console and its commit port, timed on arrival."""

    def __init__(self, args, out, env, plan):
        self.args, self.out, self.plan = args, out, plan
        self.lines = []          # (arrival, text)
        self.commits = []        # (arrival, text)
        self.lock = threading.Lock()
        self.sync_start = None
        self.sync_end = None
        self.first_page = None   # the first progress line: a page is stored
        self.last_page = None    # the progress line of the last record: every part is stored
        self.killed_at = None
        self.finished = False
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "env"), "w") as f:
            for key, value in env.items():
                f.write(f"{key}='{value}'\n")
        self.commit_path = os.path.join(out, "commits.log")
        open(self.commit_path, "w").close()

    def command(self):
        a = self.args
        return [
            "qemu-system-x86_64", "-M", "pc", "-accel", a.accel, "-cpu", a.cpu, "-smp", str(a.smp), "-m", "1024",
            "-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot",
            "-kernel", os.path.join(a.cache, "vmlinuz"), "-initrd", a.initramfs,
            "-append", f"console=ttyS0 loglevel=4 panic=-1 e2e.kroot={a.cache}/kroot e2e.init={a.harness}/powercut-guest",
            "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
            "-virtfs", f"local,path={self.out},mount_tag=out,security_model=none,multidevs=remap",
            # QEMU's default cache mode: the guest's writes reach the host's page cache when QEMU
            # completes them; what the guest had not written out (its page cache) dies with it.
            "-drive", f"file={a.disk},format=raw,if=virtio,cache=writeback",
            "-drive", f"file={a.tools_disk},format=raw,if=virtio,readonly=on",
            "-device", "virtio-serial-pci,id=vser",
            "-chardev", f"file,id=commits,path={self.commit_path}",
            "-device", "virtserialport,bus=vser.0,chardev=commits,name=org.tsgateway.commits",
        ]

    def read_console(self, stream, log):
        for raw in iter(stream.readline, b""):
            now = time.monotonic()
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            log.write(text + "\n")
            log.flush()
            with self.lock:
                self.lines.append((now, text))
                if "] sync-start " in text:
                    self.sync_start = now
                elif "] sync-end " in text:
                    self.sync_end = now
                elif self.sync_start is not None and text.startswith("syncing sleep records:"):
                    self.first_page = self.first_page or now
                    if LAST_PAGE.match(text):
                        self.last_page = self.last_page or now

    def tail_commits(self, stop):
        done = 0
        pending = b""
        while not stop.is_set():
            with open(self.commit_path, "rb") as f:
                f.seek(done)
                chunk = f.read()
            if chunk:
                done += len(chunk)
                pending += chunk
                now = time.monotonic()
                *complete, pending = pending.split(b"\n")
                with self.lock:
                    self.commits += [(now, line.decode("utf-8", "replace")) for line in complete]
            time.sleep(0.002)

    def run(self):
        """Boots, cuts the power as planned (or lets the guest power off), returns when QEMU is gone."""
        started = time.monotonic()
        with open(os.path.join(self.out, "console.log"), "w") as log:
            qemu = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            reader = threading.Thread(target=self.read_console, args=(qemu.stdout, log), daemon=True)
            reader.start()
            stop = threading.Event()
            tail = threading.Thread(target=self.tail_commits, args=(stop,), daemon=True)
            tail.start()
            while qemu.poll() is None:
                now = time.monotonic()
                if now - started > self.args.boot_timeout:
                    self.cut(qemu)
                    raise SystemExit(f"powercut: the VM in {self.out} ran over {self.args.boot_timeout} s; see its console.log")
                if self.plan and self.due(now):
                    self.cut(qemu)
                    break
                time.sleep(0.001)
            qemu.wait()
            reader.join(5)
            stop.set()
            tail.join(5)
        self.seconds = time.monotonic() - started

    def markers(self):
        with self.lock:
            return {"start": self.sync_start, "first page": self.first_page, "last page": self.last_page,
                    "commit": self.commits[0][0] if self.commits else None, "end": self.sync_end}

    def due(self, now):
        """A plan is (marker, delay, next marker): cut `delay` seconds after `marker` arrived, or
        as soon as `next marker` arrives, whichever comes first (the phase is over then)."""
        marker, delay, following = self.plan
        seen = self.markers()
        if seen[following] is not None:
            return True
        return seen[marker] is not None and now >= seen[marker] + delay

    def cut(self, qemu):
        qemu.send_signal(signal.SIGKILL)
        self.killed_at = time.monotonic()

    def timeline(self):
        """Each marker's arrival and the cut's, in seconds after sync-start."""
        seen = self.markers()
        seen["cut"] = self.killed_at
        return {k: None if t is None or self.sync_start is None else t - self.sync_start for k, t in seen.items()}


def read_records(path):
    """{(start, stage): duration} and the number of rows of a dump; None when there is none."""
    if not os.path.exists(path):
        return None, 0
    text = open(path).read()
    # The cut came before the schema's first transaction was durable: an empty database.
    if text.startswith("Error: in prepare, no such table:"):
        return {}, 0
    rows = [r for r in csv.reader(text.splitlines()) if r]
    records = {}
    for row in rows:
        if len(row) != 4:
            raise SystemExit(f"powercut: {path} has a row that is not watch,start,stage,duration: {row}")
        records[(int(row[1]), int(row[2]))] = int(row[3])
    return records, len(rows)


def commit_records(lines):
    """The records of the commits the watch accepted, from its log's complete lines."""
    records = {}
    for line in lines:
        commit = json.loads(line)
        for r in commit["records"]:
            records[(int(r["start"]), STAGES[r["stage"]])] = int(r["duration"])
    return records


def read_text(path, default=""):
    try:
        return open(path).read().strip()
    except OSError:
        return default


def check_cut(cut_dir, check_dir, truth):
    """What the boot after the cut found: (landed phase, counts, failures)."""
    failures = []
    fsck = read_text(os.path.join(check_dir, "fsck-status"), "missing")
    if fsck not in ("0", "1"):
        failures.append(f"e2fsck status {fsck}: {read_text(os.path.join(check_dir, 'fsck.txt'))[-300:]}")
    integrity = read_text(os.path.join(check_dir, "cut-integrity.txt"), "missing")
    survived, rows = read_records(os.path.join(check_dir, "cut-records.csv"))
    if integrity == "no database":
        survived = {}
    elif integrity != "ok":
        failures.append(f"integrity_check after the cut: {integrity[:300]}")
    survived = survived or {}
    commit_lines = [line for _, line in read_commit_lines(os.path.join(cut_dir, "commits.log"))]
    acknowledged = commit_records(commit_lines)
    missing = [k for k in acknowledged if survived.get(k) != acknowledged[k]]
    if missing:
        failures.append(f"{len(missing)} of {len(acknowledged)} records the watch saw acknowledged are not in the database (first: {sorted(missing)[0]})")
    if rows != len(survived):
        failures.append(f"{rows - len(survived)} records stored twice")
    unknown = [k for k in survived if truth.get(k) != survived[k]]
    if unknown:
        failures.append(f"{len(unknown)} records the watch does not hold (first: {sorted(unknown)[0]})")
    # Each progress line comes after a part's transaction committed: with synchronous = FULL on
    # disk before the line was printed, whether or not the watch was told.
    reported = [int(m.group(1)) for m in PROGRESS.finditer(read_text(os.path.join(cut_dir, "cut-sync.log")))]
    committed = max(reported, default=0)
    if len(survived) < committed:
        failures.append(f"the gateway had committed {committed} records before the cut, {len(survived)} survived")
    cursor = None
    cursor_text = read_text(os.path.join(check_dir, "cut-cursor.csv"))
    cursor_rows = [] if cursor_text.startswith("Error: in prepare, no such table:") else list(csv.reader(cursor_text.splitlines()))
    if cursor_rows and cursor_rows[0] and len(cursor_rows[0]) == 4:
        cursor = {"upTo": int(cursor_rows[0][2]), "committedUpTo": int(cursor_rows[0][3]) if cursor_rows[0][3] else None}
        below = [k for k in truth if k[0] < cursor["upTo"] and k not in survived]
        if below:
            failures.append(f"the cursor says stored up to {cursor['upTo']} but {len(below)} records below it are missing")
    status = read_text(os.path.join(check_dir, "next-sync-status"), "missing")
    if status != "0":
        failures.append(f"the next sync exited {status}: {read_text(os.path.join(check_dir, 'next-sync.log'))[-300:]}")
    after = read_text(os.path.join(check_dir, "next-integrity.txt"), "missing")
    if after != "ok":
        failures.append(f"integrity_check after the next sync: {after[:300]}")
    final, final_rows = read_records(os.path.join(check_dir, "next-records.csv"))
    if final != truth or final_rows != len(truth):
        failures.append(f"after the next sync the database holds {final_rows} rows, the watch {len(truth)} records"
                        + ("" if final is None else f" ({len(set(truth) - set(final))} missing, {len(set(final) - set(truth))} unknown)"))
    # Where the cut landed, from what the logs out of its reach say happened before it.
    if '"fetched"' in read_text(os.path.join(cut_dir, "cut-sync.log")):
        landed = "after end"
    elif commit_lines:
        landed = "ack"
    elif committed >= len(truth):
        landed = "commit"
    elif committed > 0:
        landed = "transfer"
    else:
        landed = "connect"
    return landed, {"survived": len(survived), "committed": committed, "acknowledged": len(acknowledged), "fsck": fsck,
                    "integrity": integrity if len(integrity) < 20 else integrity[:20] + "…"}, failures


def read_commit_lines(path):
    try:
        data = open(path, "rb").read()
    except OSError:
        return []
    *complete, _ = data.split(b"\n")
    return [(0, line.decode()) for line in complete if line]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cuts", type=int, default=24)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--cache")
    p.add_argument("--harness", help="scripts/e2e of this checkout")
    p.add_argument("--initramfs")
    p.add_argument("--binary")
    p.add_argument("--work", help="a directory for the disk image and each boot's share")
    p.add_argument("--accel", default="tcg")
    p.add_argument("--cpu", default="max")
    p.add_argument("--smp", type=int, default=1)
    p.add_argument("--boot-timeout", type=float, default=900)
    p.add_argument("--from-day", default="2026-11-12")
    p.add_argument("--to-day", default="2026-11-19")
    p.add_argument("--simulator-now", default="2026-11-20T07:30:00Z")
    p.add_argument("--disk-mib", type=int, default=256)
    p.add_argument("--report", metavar="DIR", help="only print the verdicts of a run kept in DIR (e2e-out/powercut-DATE), "
                   "as far as its boots got: the cut of each boot the next one checked")
    args = p.parse_args()
    if args.report:
        sys.exit(report(args.report))
    missing = [a for a in ("cache", "harness", "initramfs", "binary", "work") if getattr(args, a) is None]
    if missing:
        p.error("these are needed to run the loop: " + ", ".join("--" + a for a in missing))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    rng = random.Random(seed)
    print(f"powercut: seed {seed} (again: --seed {seed}), {args.cuts} cuts, accel {args.accel}", flush=True)

    os.makedirs(args.work, exist_ok=True)
    args.disk = os.path.join(args.work, "disk.img")
    with open(args.disk, "wb") as f:
        f.truncate(args.disk_mib * 1024 * 1024)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "tsgateway", args.disk], check=True)

    # The binary and the libraries it loads, on a read-only disk of their own: under TCG a boot
    # read them over 9p far slower than from a virtio disk.
    tools = os.path.join(args.work, "tools")
    os.makedirs(os.path.join(tools, "lib"))
    shutil.copy(args.binary, os.path.join(tools, "tsgateway"))
    for line in subprocess.run(["ldd", args.binary], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if "=>" in parts and len(parts) > parts.index("=>") + 1 and parts[parts.index("=>") + 1].startswith("/"):
            shutil.copy(parts[parts.index("=>") + 1], os.path.join(tools, "lib"))
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tools) for f in fs)
    args.tools_disk = os.path.join(args.work, "tools.img")
    with open(args.tools_disk, "wb") as f:
        f.truncate(int(size * 1.2) + 16 * 1024 * 1024)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "tools", "-d", tools, args.tools_disk], check=True)
    shutil.rmtree(tools)

    base_env = {"E2E_BIN": "/run/tools/tsgateway", "PC_FROM": args.from_day, "PC_TO": args.to_day,
                "TSGATEWAY_SIMULATOR_NOW": args.simulator_now, "TZ": "Europe/Berlin"}

    def boot(number, plan, check, cut):
        env = dict(base_env, PC_CHECK=check or "", PC_CUT=cut or "")
        b = Boot(args, os.path.join(args.work, f"boot-{number:02d}"), env, plan)
        b.run()
        with open(os.path.join(b.out, "plan.json"), "w") as f:
            json.dump({"plan": plan, "timeline": b.timeline(), "seconds": b.seconds}, f)
        return b

    # Boot 0: the calibration sync, uncut until it has ended.
    calibration = boot(0, ("end", 0.05, "end"), None, "sync-00")
    t = calibration.timeline()
    if None in (t["first page"], t["last page"], t["commit"], t["end"]):
        raise SystemExit(f"powercut: the calibration sync did not finish; see {calibration.out}/console.log and cut-sync.log")
    truth = commit_records([line for _, line in calibration.commits])
    print(f"powercut: calibration: {len(truth)} records; after sync-start: first page stored {fmt(t['first page'])}, "
          f"last {fmt(t['last page'])}, commit accepted {fmt(t['commit'])}, sync ended {fmt(t['end'])} (boot {calibration.seconds:.1f} s)", flush=True)
    # Each phase: the marker it begins with, how long it lasted in the calibration, the marker that ends it.
    phases = {
        "connect": ("start", t["first page"], "first page"),
        "transfer": ("first page", t["last page"] - t["first page"], "last page"),
        "commit": ("last page", t["commit"] - t["last page"], "commit"),
        "ack": ("commit", t["end"] - t["commit"], "end"),
    }

    results = []
    previous = calibration
    rows = [("sync-00", "after end", "end+0.050s")]
    for i in range(1, args.cuts + 1):
        aimed = AIMED[(i - 1) % len(AIMED)]
        marker, length, following = phases[aimed]
        plan = (marker, rng.uniform(0, max(length, 0.001)), following)
        name = f"sync-{i:02d}"
        b = boot(i, plan, f"sync-{i - 1:02d}", name)
        results.append((previous, b))
        rows.append((name, aimed, f"{marker.replace(' ', '-')}+{fmt(plan[1])}"))
        landed, counts, failures = check_cut(previous.out, b.out, truth)
        print(f"powercut: boot {i} ({b.seconds:.1f} s): sync-{i - 1:02d}'s cut landed in {landed}, {counts['survived']} records survived, "
              f"{counts['acknowledged']} acknowledged: {'ok' if not failures else 'FAILED: ' + '; '.join(failures)}; "
              f"cut {name} aiming at {aimed} ({rows[-1][2]}, cut {fmt(b.timeline()['cut'])} after sync-start)", flush=True)
        previous = b
    last = boot(args.cuts + 1, None, f"sync-{args.cuts:02d}", None)
    results.append((previous, last))

    print("\n== power cuts (seed %d)" % seed)
    print(f"{'sync':8} {'aimed':10} {'planned':>20} {'cut at':>9} {'landed':10} {'fsck':>4} {'integrity':10} {'committed':>9} {'survived':>8} {'acked':>6}  result")
    failed = 0
    landed_counts = {}
    for (cut_boot, check_boot), row in zip(results, rows):
        landed, counts, failures = check_cut(cut_boot.out, check_boot.out, truth)
        landed_counts[landed] = landed_counts.get(landed, 0) + 1
        failed += bool(failures)
        cut_at = cut_boot.timeline()["cut"]
        print(f"{row[0]:8} {row[1]:10} {row[2]:>20} {fmt(cut_at):>9} {landed:10} {counts['fsck']:>4} {counts['integrity']:10} "
              f"{counts['committed']:>9} {counts['survived']:>8} {counts['acknowledged']:>6}  {'ok' if not failures else 'FAILED: ' + '; '.join(failures)}")
    print(f"\npowercut: {len(results)} cuts ({args.cuts} aimed + the calibration's after the end), landed: "
          + ", ".join(f"{k} {v}" for k, v in sorted(landed_counts.items())) + f"; {failed} failed; seed {seed}")
    sys.exit(1 if failed else 0)


def report(directory):
    """The verdict of each cut in a kept run that a later boot checked; 1 if any failed."""
    boots = sorted(name for name in os.listdir(directory) if name.startswith("boot-"))
    truth = commit_records([line for _, line in read_commit_lines(os.path.join(directory, "boot-00", "commits.log"))])
    failed = 0
    for cut, check in zip(boots, boots[1:]):
        if not os.path.exists(os.path.join(directory, check, "next-records.csv")):
            break
        landed, counts, failures = check_cut(os.path.join(directory, cut), os.path.join(directory, check), truth)
        failed += bool(failures)
        print(f"{cut}: landed in {landed}, {counts['committed']} records committed before the cut, {counts['survived']} of {len(truth)} survived, {counts['acknowledged']} acknowledged, "
              f"fsck {counts['fsck']}, integrity {counts['integrity']}: {'ok' if not failures else 'FAILED: ' + '; '.join(failures)}")
    return 1 if failed else 0


def fmt(seconds):
    return "–" if seconds is None else f"{seconds:.3f}s"


if __name__ == "__main__":
    main()
