#!/usr/bin/python3
"""The soak of `tsgateway serve` (started by scripts/soak, which explains the checks and the bound).

Starts, on loopback and in OUT: a private dbus-daemon, a Mosquitto broker, an HTTP upload endpoint
in this process, and `tsgateway serve` with simulated watches carrying every fault the daemon's
simulated watches offer; drives the daemon through its doors for the given minutes; stops it with
SIGTERM; compares the store with each simulated watch's ground truth (`ground-truth:`); prints one
`soak: <check>: ok|FAILED …` line per check and exits 1 when any check failed.

Runs on Debian's /usr/bin/python3 (python3-dbus for the D-Bus door; the rest is the standard library).
"""
import argparse
import csv
import ctypes
import datetime
import http.server
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import dbus

BUS_NAME = "org.tsgateway"
TOPIC_PREFIX = "soak"
GATEWAY_ID = "soak"
# The watch profiles in order (cycled for more than 8): the faults of the soak.
PROFILES = ["drop", "delay", "protocol-1.0", "plain", "drop", "delay", "plain", "plain"]
DISCONNECT_EVERY = 150
PACKET_DELAY = "20ms"
HISTORY_DAYS = 30
SIGTERM_BOUND = 5.0
# Resident-memory growth after warm-up, MiB per hour: see scripts/soak's header.
RSS_BOUND_PER_HOUR = 2.0
RSS_NOISE_MIB = 2.0


def say(text):
    print(f"soak [{time.strftime('%H:%M:%S')}] {text}", flush=True)


def loopback_ports(count):
    """Distinct free ports: all are held open together while they are picked."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for held in sockets:
            held.bind(("127.0.0.1", 0))
        return [held.getsockname()[1] for held in sockets]
    finally:
        for held in sockets:
            held.close()


def start(args, log_path, env=None):
    """A child writing to `log_path`; PR_SET_PDEATHSIG ends it with the driver, however the driver ends."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    return subprocess.Popen(args, stdout=open(log_path, "a"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env, preexec_fn=lambda: libc.prctl(1, signal.SIGTERM))


def stop(process, grace=10):
    """SIGTERM, then SIGKILL after `grace` seconds; nothing for a process that is gone or was never started."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until(what, probe, timeout, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if probe():
            return
        time.sleep(interval)
    raise SystemExit(f"soak: {what} did not happen within {timeout} s")


def port_open(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


# ---------------------------------------------------------------------------------------------
class UploadEndpoint:
    """The sleep endpoint: 201 for a new source_id, 409 for one it has, a share of 503s, and away while stopped."""

    def __init__(self, port, failing_share, seed):
        self.port = port
        self.failing_share = failing_share
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.accepted = {}        # source_id -> how many 2xx
        self.conflicts = 0
        self.server_errors = 0
        self.bad = []
        self.server = None
        self.thread = None

    def handler(endpoint):
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *arguments):
                pass

            def answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    night = json.loads(body)
                    source_id = night["source_id"]
                except (ValueError, KeyError) as error:
                    with endpoint.lock:
                        endpoint.bad.append(f"{error}: {body[:80]!r}")
                    return self.answer(400, {"error": "no source_id"})
                with endpoint.lock:
                    if endpoint.random.random() < endpoint.failing_share:
                        endpoint.server_errors += 1
                        return self.answer(503, {"error": "try later"})
                    if source_id in endpoint.accepted:
                        endpoint.conflicts += 1
                        return self.answer(409, {"error": "have it"})
                    endpoint.accepted[source_id] = 1
                    return self.answer(201, {"id": f"night-{len(endpoint.accepted)}"})
        return Handler

    def start(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), self.handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


# ---------------------------------------------------------------------------------------------
class Soak:
    def __init__(self, options):
        self.options = options
        self.out = os.path.abspath(options.out)
        self.binary = os.path.abspath(options.binary)
        self.seconds = options.minutes * 60
        self.rng = random.Random(options.seed)
        self.watches = []
        self.broker = self.bus = self.daemon = self.events = self.replies = self.upload = None
        self.queue_at_end = self.stopped_in = self.died_at = None
        self.results = []          # (elapsed, action, watch, outcome, seconds, detail)
        self.samples = []          # (elapsed, rss KiB, fds, threads, RssAnon KiB, RssFile KiB)
        self.checks = []
        self.label_number = 0
        self.mqtt_sent = 0
        self.mqtt_commands = {}    # id -> when the broker took it (seconds into the run)
        self.broker_restart = None
        self.began = None
        self.timeline = []

    # -- setting up ---------------------------------------------------------------------------
    def zone(self):
        # Local mid-afternoon at the start: the last night ended hours ago, the next starts hours
        # after the run, so which nights are final does not depend on the minute the run ends.
        offset = (14 - datetime.datetime.now(datetime.timezone.utc).hour) % 24
        if offset > 14:
            offset -= 24
        self.offset_hours = offset
        # POSIX signs: Etc/GMT-12 is 12 hours ahead of UTC.
        return f"Etc/GMT{'-' if offset >= 0 else '+'}{abs(offset)}"

    def write_configuration(self):
        self.time_zone = self.zone()
        lines = [f"database: {self.out}/gateway/tsgateway.sqlite", "bus: session", f"time-zone: {self.time_zone}",
                 "statistics-rule: 1", "sync-interval: 5m", "battery-interval: 1m", f"first-sync-days: {HISTORY_DAYS + 10}",
                 "reconnect-min: 200ms", "reconnect-max: 5s",
                 "mqtt:", "  host: 127.0.0.1", f"  port: {self.broker_port}", f"  topic-prefix: {TOPIC_PREFIX}",
                 f"  gateway-id: {GATEWAY_ID}", "  keepalive: 5",
                 "upload:", f"  endpoint: http://127.0.0.1:{self.upload_port}/api/v1/sleep", "  token: soak",
                 "  interval: 10s", "  timeout: 5s", "  retry-min: 1s", "  retry-max: 20s",
                 "report:", f"  directory: {self.out}/reports", "  days: 30", "  every: 1m",
                 "watches:"]
        for index in range(self.options.watches):
            profile = PROFILES[index % len(PROFILES)]
            name = f"w{index + 1}"
            address = f"00:00:5E:00:54:{index + 1:02X}"
            truth = f"{self.out}/ground-truth/{name}.json"
            lines += [f"  - simulated: true", f"    address: {address}", f"    name: {name}", f"    seed: {1000 + index}",
                      f"    history-days: {HISTORY_DAYS}", "    live-stage-interval: 3s", f"    ground-truth: {truth}"]
            if profile == "drop":
                lines.append(f"    disconnect-every: {DISCONNECT_EVERY}")
            elif profile == "delay":
                lines.append(f"    packet-delay: {PACKET_DELAY}")
            elif profile == "protocol-1.0":
                lines.append("    protocol: 1.0")
            self.watches.append({"name": name, "address": address, "profile": profile, "truth": truth,
                                 "path": "/org/tsgateway/watch_" + address.replace(":", "")})
        self.config = f"{self.out}/gateway.yaml"
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")

    def start_broker(self):
        self.broker = start(["/usr/sbin/mosquitto", "-c", f"{self.out}/mosquitto.conf"], f"{self.out}/mosquitto.log")
        wait_until("Mosquitto listening", lambda: port_open(self.broker_port), 15, 0.1)

    def start_all(self):
        for directory in ("gateway", "reports", "ground-truth", "xdg", "tables"):
            os.makedirs(f"{self.out}/{directory}", exist_ok=True)
        self.broker_port, self.upload_port = loopback_ports(2)
        with open(f"{self.out}/mosquitto.conf", "w") as f:
            f.write(f"listener {self.broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    "log_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\n")
        self.start_broker()
        socket_path = f"{self.out}/bus.socket"
        with open(f"{self.out}/bus.conf", "w") as f:
            f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path={socket_path}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/></policy></busconfig>
""")
        self.bus = start(["/usr/bin/dbus-daemon", f"--config-file={self.out}/bus.conf", "--nofork", "--nopidfile"], f"{self.out}/dbus.log")
        wait_until("dbus-daemon listening", lambda: os.path.exists(socket_path), 15, 0.1)
        self.bus_address = f"unix:path={socket_path}"
        self.upload = UploadEndpoint(self.upload_port, self.options.failing_share, self.options.seed)
        self.upload.start()
        self.write_configuration()
        self.env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=self.bus_address, TSGATEWAY_BUS="session",
                        TZ=self.time_zone, XDG_DATA_HOME=f"{self.out}/xdg", NO_COLOR="1")
        for key in ("TSGATEWAY_DBUS_ADDRESS", "TSGATEWAY_SIMULATOR_NOW", "TSGATEWAY_SIMULATOR_PROTOCOL"):
            self.env.pop(key, None)
        self.daemon = start([self.binary, "serve", "--config", self.config, "-v"], f"{self.out}/gateway.log", env=self.env)
        self.began = time.monotonic()
        self.connection = dbus.bus.BusConnection(self.bus_address)
        wait_until("org.tsgateway on the bus", lambda: self.daemon.poll() is None and self.connection.name_has_owner(BUS_NAME), 60, 0.2)
        say(f"serving {len(self.watches)} watches ({', '.join(w['name'] + ' ' + w['profile'] for w in self.watches)}); "
            f"zone {self.time_zone}; broker :{self.broker_port}; uploads :{self.upload_port}; bus {socket_path}")
        self.events = start([self.binary, "events"], f"{self.out}/events.jsonl", env=self.env)
        self.start_reply_listener()
        self.sampler = threading.Thread(target=self.sample, daemon=True)
        self.sampler.start()

    def start_reply_listener(self):
        stop(self.replies)
        self.replies = start(["/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", str(self.broker_port), "-q", "1", "-v",
                              "-t", f"{TOPIC_PREFIX}/{GATEWAY_ID}/watch/+/command/reply"], f"{self.out}/mqtt-replies.log")

    # -- sampling -----------------------------------------------------------------------------
    def sample(self):
        with open(f"{self.out}/samples.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["elapsed_s", "rss_kib", "fds", "threads", "rss_anon_kib", "rss_file_kib"])
            while self.daemon.poll() is None:
                try:
                    status = open(f"/proc/{self.daemon.pid}/status").read()
                    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
                    threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
                    # The private heap (RssAnon) is what a leak grows; mapped files (RssFile) are libraries.
                    anon = int(re.search(r"RssAnon:\s+(\d+)", status).group(1))
                    mapped = int(re.search(r"RssFile:\s+(\d+)", status).group(1))
                    fds = len(os.listdir(f"/proc/{self.daemon.pid}/fd"))
                except (OSError, AttributeError):
                    break
                row = (round(time.monotonic() - self.began, 1), rss, fds, threads, anon, mapped)
                self.samples.append(row)
                writer.writerow(row)
                f.flush()
                time.sleep(10)

    # -- the doors ----------------------------------------------------------------------------
    def record(self, action, watch, outcome, began, detail=""):
        self.results.append((round(time.monotonic() - self.began, 1), action, watch["name"] if watch else "-", outcome,
                             round(time.monotonic() - began, 2), detail.replace("\n", " ")[:300]))

    def cli(self, action, watch, arguments, expect=(0,), timeout=180):
        began = time.monotonic()
        try:
            done = subprocess.run([self.binary] + arguments, env=self.env, capture_output=True, text=True, timeout=timeout)
            status, detail = done.returncode, (done.stderr or done.stdout).strip()
        except subprocess.TimeoutExpired:
            status, detail = "hung", f"no answer in {timeout} s"
        self.record(action, watch, self.outcome(watch, status, expect), began, f"exit {status}: {detail}")

    def outcome(self, watch, status, expect):
        if status in expect:
            return {0: "ok", "ok": "ok", "hung": "ran until stopped"}.get(status, "refused as expected")
        # A link the simulator drops every few packets may take a request down with it: the
        # caller is told (timeout or not connected) and nothing was stored half.
        if watch and watch["profile"] == "drop" and status in (75, 69, "Timeout", "NotConnected"):
            return "link dropped"
        return "FAILED"

    def watch_object(self, watch):
        return dbus.Interface(self.connection.get_object(BUS_NAME, watch["path"]), "org.tsgateway.Watch2")

    def dbus_call(self, action, watch, call, expect=("ok",)):
        began = time.monotonic()
        try:
            reply = call()
            status, detail = "ok", str(reply)[:120]
        except dbus.exceptions.DBusException as error:
            name = error.get_dbus_name() or ""
            status, detail = name.removeprefix("org.tsgateway.Error."), error.get_dbus_message() or ""
        self.record(action, watch, self.outcome(watch, status, expect), began, f"{status}: {detail}")

    def mqtt(self, action, watch, command, payload):
        began = time.monotonic()
        self.mqtt_sent += 1
        payload = dict(payload, id=f"soak-{self.mqtt_sent}")
        topic = f"{TOPIC_PREFIX}/{GATEWAY_ID}/watch/{watch['address'].replace(':', '').lower()}/command/{command}"
        done = subprocess.run(["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.broker_port), "-q", "1",
                               "-t", topic, "-m", json.dumps(payload)], capture_output=True, text=True, timeout=30)
        # The broker is away for a moment mid-run: a command it never took is not the gateway's loss.
        outcome = "ok" if done.returncode == 0 else "broker away"
        if outcome == "ok":
            self.mqtt_commands[payload["id"]] = time.monotonic() - self.began
        self.record(action, watch, outcome, began, done.stderr.strip())

    def local_time(self, minutes_ahead=0):
        now = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=self.offset_hours)
        return (now + datetime.timedelta(minutes=minutes_ahead)).strftime("%H:%M")

    def table(self, watch, size=None):
        self.label_number += 1
        size = size or self.rng.randint(1, 3)
        alarms = []
        for slot in range(size):
            alarm = {"slot": slot, "time": f"{self.rng.randint(5, 9):02d}:{self.rng.choice([0, 15, 30, 45]):02d}",
                     "repeat": self.rng.choice([["mon", "tue", "wed", "thu", "fri"], ["sat", "sun"], []]),
                     "label": f"soak {self.label_number}.{slot}", "snooze": self.rng.random() < 0.5}
            alarms.append(alarm)
        if self.rng.random() < 0.3:
            # A one-time alarm due in two minutes: the watch rings it and switches it off itself.
            alarms[0].update(time=self.local_time(2), repeat=[])
        return alarms

    def act(self):
        watch = self.rng.choice(self.watches)
        name = ["--device", watch["name"]]
        actions = [
            (6, "cli alarms set", lambda: self.cli("cli alarms set", watch, ["alarms", "set", f"{self.rng.randint(5, 9):02d}:{self.rng.choice([0, 30]):02d}",
                                                                          "--repeat", "workdays", "--label", f"soak {self.next_label()}"] + name)),
            (3, "cli alarms add", lambda: self.cli("cli alarms add", watch, ["alarms", "add", f"{self.rng.randint(10, 12):02d}:15",
                                                                          "--label", f"soak {self.next_label()}"] + name, expect=(0, 65))),
            (5, "cli alarms get", lambda: self.cli("cli alarms get", watch, ["alarms", "get", "--json"] + name)),
            (5, "dbus SetAlarms", lambda: self.dbus_call("dbus SetAlarms", watch,
                                                          lambda: self.watch_object(watch).SetAlarms(json.dumps(self.table(watch)), timeout=120))),
            (3, "dbus GetAlarms", lambda: self.dbus_call("dbus GetAlarms", watch, lambda: self.watch_object(watch).GetAlarms(timeout=120))),
            (4, "mqtt alarms/set", lambda: self.mqtt("mqtt alarms/set", watch, "alarms/set", {"alarms": self.table(watch)})),
            (2, "mqtt sleep/sync", lambda: self.mqtt("mqtt sleep/sync", watch, "sleep/sync", {})),
            (3, "cli sleep sync", lambda: self.cli("cli sleep sync", watch, ["sleep", "sync", "--since", "3d"] + name)),
            (2, "dbus SyncSleep", lambda: self.dbus_call("dbus SyncSleep", watch, lambda: self.watch_object(watch).SyncSleep(
                dbus.Dictionary({}, signature="sv"), timeout=300))),
            (4, "cli sleep show", lambda: self.cli("cli sleep show", watch, ["sleep", "show", "--last", "7d", "--json"] + name)),
            (3, "cli info", lambda: self.cli("cli info", watch, ["info", "--json"] + name)),
            (2, "cli session status", lambda: self.cli("cli session status", watch, ["session", "status", "--json"] + name)),
            (2, "dbus ListWatches", lambda: self.dbus_call("dbus ListWatches", None, lambda: dbus.Interface(
                self.connection.get_object(BUS_NAME, "/org/tsgateway"), "org.tsgateway.Gateway2").ListWatches(timeout=60))),
            (2, "cli events", lambda: self.cli("cli events", watch, ["events", "--type", "night"] + name, expect=(0, "hung"), timeout=4)),
            (1, "cli eleven alarms", lambda: self.eleven_alarms(watch)),
        ]
        if watch["profile"] == "protocol-1.0":
            actions.append((1, "cli smart on 1.0", lambda: self.cli("cli smart on 1.0", watch, ["alarms", "set", "07:00", "--smart", "20"] + name, expect=(79,))))
        weights = [weight for weight, _, _ in actions]
        _, _, run = self.rng.choices(actions, weights)[0]
        run()

    def next_label(self):
        self.label_number += 1
        return self.label_number

    def eleven_alarms(self, watch):
        path = f"{self.out}/tables/eleven.json"
        with open(path, "w") as f:
            json.dump([{"slot": slot, "time": f"06:{slot:02d}", "label": f"too many {slot}"} for slot in range(11)], f)
        self.cli("cli eleven alarms", watch, ["alarms", "set", "--file", path, "--device", watch["name"]], expect=(65,))

    # -- the run ------------------------------------------------------------------------------
    def drive(self):
        end = self.began + self.seconds
        away_at, away_for = self.began + 0.3 * self.seconds, min(60.0, 0.15 * self.seconds)
        restart_at = self.began + 0.5 * self.seconds
        next_wrist = self.began + 10
        upload_away = broker_restarted = False
        while time.monotonic() < end:
            if self.daemon.poll() is not None:
                self.died_at = time.monotonic() - self.began
                say(f"tsgateway serve exited with status {self.daemon.returncode} mid-run")
                return
            now = time.monotonic()
            if not upload_away and now >= away_at:
                upload_away = True
                self.timeline.append(f"upload endpoint away at {now - self.began:.0f} s for {away_for:.0f} s")
                say(self.timeline[-1])
                self.upload.stop()
                back = threading.Timer(away_for, self.upload.start)
                back.daemon = True
                back.start()
            if not broker_restarted and now >= restart_at:
                broker_restarted = True
                self.broker_restart = now - self.began
                self.timeline.append(f"broker restarted at {now - self.began:.0f} s")
                say(self.timeline[-1])
                stop(self.broker)
                time.sleep(min(10.0, 0.05 * self.seconds))
                self.start_broker()
                self.start_reply_listener()
            if now >= next_wrist:
                # SIGUSR1: every simulated watch edits its first alarm on the wrist.
                os.kill(self.daemon.pid, signal.SIGUSR1)
                self.record("wrist edit (SIGUSR1)", None, "ok", now)
                next_wrist = now + self.rng.uniform(3, 8)
            try:
                self.act()
            except Exception as error:      # a door that broke is a failed request, not the end of the soak
                self.results.append((round(time.monotonic() - self.began, 1), "driver", "-", "FAILED", 0, repr(error)))
            time.sleep(self.rng.uniform(0.5, 2.5))
            if len(self.results) % 50 == 0:
                say(f"{len(self.results)} actions, {self.summary_of_samples()}")

    def summary_of_samples(self):
        if not self.samples:
            return "no samples yet"
        _, rss, fds, threads, _, _ = self.samples[-1]
        return f"RSS {rss / 1024:.1f} MiB, {fds} fds, {threads} threads"

    def settle(self):
        """What a person would do before looking: one last sync of each watch, then waits for the queues."""
        say("settling: a last sync of each watch, the outbox and the MQTT queue")
        for watch in self.watches:
            for _ in range(5):
                self.dbus_call("final SyncSleep", watch, lambda: self.watch_object(watch).SyncSleep(dbus.Dictionary({}, signature="sv"), timeout=300))
                if self.results[-1][3] == "ok":
                    break
                time.sleep(2)
        database = f"{self.out}/gateway/tsgateway.sqlite"

        def count(sql):
            with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10) as db:
                return db.execute(sql).fetchone()[0]
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline and count("SELECT count(*) FROM uploadOutbox WHERE status = 'pending'") > 0:
            time.sleep(1)
        deadline = time.monotonic() + 60
        self.queue_at_end = None
        while time.monotonic() < deadline:
            # Heart rate and state are published all the time: drained means nothing older than 10 s waits.
            waiting, oldest = [count(sql) for sql in ("SELECT count(*) FROM mqttQueue", "SELECT min(createdAt) FROM mqttQueue")]
            self.queue_at_end = (waiting, None if oldest is None else time.time() - oldest)
            if waiting == 0 or self.queue_at_end[1] < 10:
                break
            time.sleep(1)
        time.sleep(3)   # the last wrist edits' acknowledgements

    def terminate(self):
        sent = time.monotonic()
        self.daemon.send_signal(signal.SIGTERM)
        try:
            self.daemon.wait(30)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            self.daemon.wait()
            self.stopped_in = None
            return
        self.stopped_in = time.monotonic() - sent

    def shut_everything(self):
        for process in (self.events, self.replies, self.daemon, self.broker, self.bus):
            stop(process)
        if self.upload:
            self.upload.stop()

    # -- checks -------------------------------------------------------------------------------
    def check(self, name, ok, detail):
        self.checks.append((name, ok))
        print(f"soak: {name}: {'ok' if ok else 'FAILED'} ({detail})", flush=True)

    def run_checks(self):
        database = f"{self.out}/gateway/tsgateway.sqlite"
        db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        truths = {}
        for watch in self.watches:
            try:
                with open(watch["truth"]) as f:
                    truths[watch["name"]] = json.load(f)
            except (OSError, ValueError) as error:
                truths[watch["name"]] = None
                watch["truth_error"] = str(error)
        self.check("daemon", self.died_at is None, "ran to the end" if self.died_at is None
                   else f"exited with status {self.daemon.returncode} {self.died_at:.0f} s into the run (gateway.log)")
        missing = [w["name"] for w in self.watches if truths[w["name"]] is None]
        self.check("ground truth", not missing, f"{len(self.watches) - len(missing)} of {len(self.watches)} watches wrote theirs"
                   + (f"; missing: {', '.join(missing)}" if missing else ""))
        self.check_records(db, truths)
        self.check_alarm_edits(db, truths)
        self.check_uploads(db, truths)
        waiting, age = self.queue_at_end or (None, None)
        self.check("mqtt queue", waiting is not None and (waiting == 0 or age < 10),
                   f"{waiting} waiting at the end" + (f", oldest {age:.0f} s" if age is not None else "") + f"; {', '.join(self.timeline)}")
        self.check_mqtt_commands()
        self.check_requests()
        integrity = db.execute("PRAGMA integrity_check").fetchall()
        self.check("integrity_check", integrity == [("ok",)], str(integrity[:3]))
        self.check("sigterm", self.stopped_in is not None and self.stopped_in <= SIGTERM_BOUND,
                   f"stopped in {self.stopped_in:.1f} s, bound {SIGTERM_BOUND:.0f} s" if self.stopped_in is not None
                   else "not sent: the daemon had exited" if self.died_at is not None else "still running after 30 s: killed")
        with open(f"{self.out}/gateway.log", errors="replace") as f:
            unsaved = [line.strip() for line in f if "not saved" in line]
        self.check("nothing unsaved in the log", not unsaved, f"{len(unsaved)} 'not saved' lines" + (f", first: {unsaved[0][:200]}" if unsaved else ""))
        reports = [name for name in os.listdir(f"{self.out}/reports") if name.endswith(".html")]
        self.check("reports", len(reports) == len(self.watches), f"{len(reports)} of {len(self.watches)} report pages written")
        self.check_memory()

    def check_records(self, db, truths):
        problems, total = [], 0
        for watch in self.watches:
            truth = truths[watch["name"]]
            if truth is None:
                problems.append(f"{watch['name']}: no ground truth to compare with")
                continue
            stages = {"awake": 0, "light": 1, "deep": 2, "rem": 3}
            expected = sorted((r["start"], stages[r["stage"]], r["duration"]) for r in truth["records"])
            stored = db.execute("SELECT start, stage, duration FROM sleepRecord WHERE watchId = ? ORDER BY start, stage", (watch["address"],)).fetchall()
            total += len(stored)
            if stored != expected:
                lost = set(expected) - set(stored)
                extra = set(stored) - set(expected)
                problems.append(f"{watch['name']}: {len(stored)} stored, {len(expected)} on the watch, {len(lost)} missing, {len(extra)} not the watch's")
            overlaps = sum(1 for a, b in zip(stored, stored[1:]) if b[0] < a[0] + a[2])
            if overlaps:
                problems.append(f"{watch['name']}: {overlaps} records overlap the one before")
        self.check("sleep records", not problems, "; ".join(problems) or f"{total} records of {len(self.watches)} watches, each the watch's and stored once, none overlapping")

    def check_alarm_edits(self, db, truths):
        def canonical(alarms):
            return json.dumps(sorted(alarms, key=lambda a: a["slot"]), sort_keys=True)
        # The history's origin of each kind of edit on the watch (AlarmTableOrigin).
        stored_as = {"watch": "watch", "onceAlarmFired": "onceAlarmFired", "otherCentral": "app"}
        problems, acknowledged, unannounced, by_origin = [], 0, 0, {}
        for watch in self.watches:
            truth = truths[watch["name"]]
            if truth is None:
                problems.append(f"{watch['name']}: no ground truth to compare with")
                continue
            history = [(origin, canonical(json.loads(alarms))) for origin, alarms in
                       db.execute("SELECT origin, alarms FROM alarmSnapshot WHERE watchId = ? ORDER BY id", (watch["address"],))]
            position, lost = 0, []
            for edit in truth["watchSideEdits"]:
                if not edit["acknowledged"]:
                    unannounced += 1
                    continue
                acknowledged += 1
                wanted, origin = canonical(edit["alarms"]), stored_as.get(edit["origin"], edit["origin"])
                # In order, and as an edit on the watch: the table read again at the next connect
                # (origin "read") does not make up for an announced edit the gateway dropped.
                found = next((i for i in range(position, len(history)) if history[i] == (origin, wanted)), None)
                if found is None:
                    seen_as = sorted({o for o, table in history[position:] if table == wanted})
                    lost.append((edit, seen_as))
                else:
                    by_origin[origin] = by_origin.get(origin, 0) + 1
                    position = found + 1
            if lost:
                edit, seen_as = lost[0]
                problems.append(f"{watch['name']}: {len(lost)} acknowledged edits not in the history as edits on the watch "
                                f"(first: {edit['origin']} {canonical(edit['alarms'])[:100]}…"
                                + (f", its table stored only as {', '.join(seen_as)}" if seen_as else ", its table never stored") + ")")
        origins = ", ".join(f"{count} as {origin}" for origin, count in sorted(by_origin.items()))
        self.check("watch-side alarm edits", not problems and acknowledged > 0,
                   "; ".join(problems) or f"{acknowledged} edits the gateway acknowledged, all in the alarm history ({origins}); "
                   f"{unannounced} made while no gateway was connected")

    def check_uploads(self, db, truths):
        rows = db.execute("SELECT sourceId, status FROM uploadOutbox").fetchall()
        statuses = {}
        for _, status in rows:
            statuses[status] = statuses.get(status, 0) + 1
        expected = set()
        for watch in self.watches:
            truth = truths[watch["name"]]
            if truth is None:
                continue
            path = f"{self.out}/ground-truth/{watch['name']}-records.json"
            with open(path, "w") as f:
                json.dump(truth["records"], f)
            done = subprocess.run([self.binary, "sleep", "analyze", "--input", path, "--rule", "1", "--tz", self.time_zone, "--json"],
                                  capture_output=True, text=True, env=self.env)
            if done.returncode != 0:
                self.check("uploads", False, f"sleep analyze of {watch['name']}'s ground truth: {done.stderr.strip()}")
                return
            days = json.loads(done.stdout)
            days = days["days"] if isinstance(days, dict) else days
            for day in days:
                for night in day.get("nightSleeps", []):
                    expected.add(f"{watch['address']}:{night['summary']['start']}")
        with self.upload.lock:
            accepted = dict(self.upload.accepted)
        outbox = {source for source, _ in rows}
        problems = []
        if outbox != expected:
            problems.append(f"outbox holds {len(outbox)} nights, the ground truth has {len(expected)} ({len(expected - outbox)} missing, {len(outbox - expected)} unknown)")
        if set(accepted) != expected:
            problems.append(f"the server accepted {len(accepted)} nights of {len(expected)} ({len(expected - set(accepted))} missing)")
        if any(count != 1 for count in accepted.values()):
            problems.append("a night was accepted twice")
        if statuses.get("pending") or statuses.get("failed"):
            problems.append(f"outbox: {statuses}")
        if self.upload.bad:
            problems.append(f"{len(self.upload.bad)} malformed bodies, first: {self.upload.bad[0]}")
        self.check("uploads", not problems and expected,
                   "; ".join(problems) or f"{len(expected)} nights, each accepted once; {self.upload.server_errors} answered 503, "
                   f"{self.upload.conflicts} sent again and answered 409; outbox {statuses}")

    def check_mqtt_commands(self):
        replies = {}
        with open(f"{self.out}/mqtt-replies.log", errors="replace") as f:
            for line in f:
                try:
                    answer = json.loads(line.split(" ", 1)[1])
                except (IndexError, ValueError):
                    continue
                replies[answer.get("id")] = replies.get(answer.get("id"), 0) + 1
        # A command the broker took just before it stopped may die with it (no persistence), and a
        # reply published while the listener reconnects is not heard: neither is the gateway's loss.
        around_restart = lambda t: self.broker_restart is not None and self.broker_restart - 15 <= t <= self.broker_restart + 15
        unanswered = [i for i, t in self.mqtt_commands.items() if i not in replies and not around_restart(t)]
        twice = sum(1 for i in self.mqtt_commands if replies.get(i, 0) > 1)
        self.check("mqtt commands", not unanswered,
                   f"{len(self.mqtt_commands)} commands taken by the broker, {sum(1 for i in self.mqtt_commands if i in replies)} answered"
                   + (f", unanswered: {', '.join(unanswered[:5])}" if unanswered else "")
                   + f"; {twice} replies heard more than once (QoS 1 allows it)")

    def check_requests(self):
        with open(f"{self.out}/actions.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["elapsed_s", "action", "watch", "outcome", "seconds", "detail"])
            writer.writerows(self.results)
        outcomes = {}
        for row in self.results:
            outcomes[row[3]] = outcomes.get(row[3], 0) + 1
        failed = [row for row in self.results if row[3] == "FAILED"]
        slowest = max((row[4] for row in self.results), default=0)
        self.check("requests", not failed, f"{len(self.results)} actions: " + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
                   + f"; slowest {slowest:.1f} s" + (f"; first failure: {failed[0][1]} on {failed[0][2]}: {failed[0][5]}" if failed else "")
                   + f" (all in {self.out}/actions.csv)")

    def check_memory(self):
        if len(self.samples) < 3:
            self.check("memory", False, "fewer than 3 samples")
            return
        warm_up = min(600.0, 0.3 * self.seconds)
        after = [s for s in self.samples if s[0] >= warm_up] or self.samples[-2:]
        hours = (after[-1][0] - after[0][0]) / 3600 or 1e-9

        def slope(column):
            xs = [s[0] / 3600 for s in after]
            ys = [s[column] for s in after]
            mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
            spread = sum((x - mean_x) ** 2 for x in xs) or 1e-12
            return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread
        rss_per_hour = slope(1) / 1024
        bound = max(RSS_BOUND_PER_HOUR, RSS_NOISE_MIB / hours)
        first, last = self.samples[0], self.samples[-1]
        peak = max(s[1] for s in self.samples)
        self.check("memory", rss_per_hour <= bound,
                   f"RSS {first[1] / 1024:.1f} MiB at start, {after[0][1] / 1024:.1f} after the {warm_up / 60:.0f}-minute warm-up, "
                   f"{last[1] / 1024:.1f} at the end, peak {peak / 1024:.1f}; growth after warm-up {rss_per_hour:+.1f} MiB/h "
                   f"(bound {bound:.1f} MiB/h over {hours * 60:.0f} minutes); of it RssAnon {slope(4) / 1024:+.1f} MiB/h, "
                   f"RssFile {slope(5) / 1024:+.1f} MiB/h")
        fds, threads = [s[2] for s in self.samples], [s[3] for s in self.samples]
        warm_fds = max(s[2] for s in self.samples if s[0] < warm_up) if any(s[0] < warm_up for s in self.samples) else fds[0]
        self.check("fds and threads", max(s[2] for s in after) <= warm_fds + 8,
                   f"fds {min(fds)}–{max(fds)} ({slope(2):+.1f}/h after warm-up), threads {min(threads)}–{max(threads)} "
                   f"({slope(3):+.1f}/h); {len(self.samples)} samples in {self.out}/samples.csv")

    def count_lines(self, name):
        try:
            with open(f"{self.out}/{name}", errors="replace") as f:
                return sum(1 for _ in f)
        except OSError:
            return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--watches", type=int, default=8)
    parser.add_argument("--failing-share", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=28)
    options = parser.parse_args()
    for tool in ("/usr/sbin/mosquitto", "/usr/bin/mosquitto_pub", "/usr/bin/mosquitto_sub", "/usr/bin/dbus-daemon"):
        if not os.access(tool, os.X_OK):
            raise SystemExit(f"soak: {tool} is missing (scripts/bootstrap installs mosquitto, mosquitto-clients and dbus)")
    # Stopped from outside (Ctrl-C, kill): the finally below stops the children. The broker drops
    # root for its own user, which clears its parent-death signal, so it needs this.
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda number, frame: sys.exit(128 + number))
    soak = Soak(options)
    try:
        soak.start_all()
        soak.drive()
        if soak.daemon.poll() is None:
            soak.settle()
            soak.terminate()
    finally:
        soak.shut_everything()
    soak.run_checks()
    failed = [name for name, ok in soak.checks if not ok]
    say(f"{'FAILED: ' + ', '.join(failed) if failed else 'all checks passed'}; files in {soak.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
