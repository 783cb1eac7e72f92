#!/usr/bin/env python3
"""tsgateway against a real Home Assistant (run through scripts/ha-check, in Home Assistant's venv).

Starts, each on free loopback ports and in a temporary directory of its own: a Mosquitto broker,
a private dbus-daemon, Home Assistant (onboarded and given the MQTT integration through its REST
API) and `tsgateway serve` with two simulated watches. Then checks through Home Assistant's own
REST and websocket APIs that every watch is a device with its real model and firmware and has
every entity of the table in docs/home-assistant.md, with state, unit, device class, state class and category;
that a command sent over MQTT reaches the watch and shows in Home Assistant; that the entities
go unavailable when the gateway stops or is killed and come back when it, or Home Assistant
alone, restarts; and that Home Assistant logged no warning or error about tsgateway and raised no
repair issue about it.

With --root, Home Assistant runs in that Debian root (chroot, in a mount namespace of its own with
its own /proc and the scratch and log directories bound at the same paths, all gone when it exits),
from the virtual environment --venv names inside the root; the rest runs on this machine, and the
root shares its network, so Home Assistant reaches the broker on 127.0.0.1.

Logs: OUT/home-assistant.log, OUT/gateway.log, OUT/mosquitto.log, OUT/checker.log.
"""

import argparse
import asyncio
import ctypes
import datetime as dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import aiohttp

GATEWAY_ID = "ha-check"
TOPIC_BASE = f"tsgateway/{GATEWAY_ID}"
# What the simulated watch's Device Information says of it.
MANUFACTURER, MODEL, FIRMWARE = "tsgateway project", "TS-Sim W10", "1.4.2"
# The gateway's own device, which the watches' devices hang off (via_device).
GATEWAY_DEVICE = {"identifier": "tsgateway_gateway_ha_check", "name": f"tsgateway {GATEWAY_ID}", "entity": "binary_sensor.tsgateway_gateway_ha_check_online"}

# The watches: address key, configured name (None: none), entity id prefix, device name.
WATCHES = [
    {"key": "00005e005401", "name": "bedroom", "prefix": "tsgateway_bedroom", "device": "bedroom"},
    {"key": "00005e005402", "name": None, "prefix": "tsgateway_00005e005402", "device": "Watch 00:00:5E:00:54:02"},
]

# What Home Assistant must show for every entity of a watch:
# key, domain, name, device class, unit, state class, category, kind of state.
ENTITIES = [
    ("battery", "sensor", "Battery", "battery", "%", "measurement", "diagnostic", "percent"),
    ("battery_state", "sensor", "Battery state", "enum", None, None, "diagnostic", ("unknown", "discharging", "charging", "full")),
    ("connected", "binary_sensor", "Connected", "connectivity", None, None, "diagnostic", ("on",)),
    ("last_sync", "sensor", "Last sync", "timestamp", None, None, "diagnostic", "timestamp"),
    ("night_sleep", "sensor", "Last night sleep", "duration", "min", "measurement", None, "positive"),
    ("night_date", "sensor", "Last night date", "date", None, None, None, "date"),
    ("night_quality", "sensor", "Sleep quality", None, "points", "measurement", None, "percent"),
    ("night_deep_share", "sensor", "Deep sleep share", None, "%", "measurement", None, "percent"),
    ("naps", "sensor", "Naps", None, None, "measurement", None, "count"),
    ("nap_minutes", "sensor", "Nap time", "duration", "min", "measurement", None, "count"),
    ("next_alarm", "sensor", "Next alarm", "timestamp", None, None, None, "timestamp"),
    ("session", "sensor", "Sleep session", "enum", None, None, None, ("none", "open", "interrupted", "closed", "complete")),
    ("heart_rate", "sensor", "Heart rate", None, "bpm", "measurement", None, "bpm"),
    ("night_deep_minutes", "sensor", "Deep sleep", "duration", "min", "measurement", None, "count"),
    ("night_efficiency", "sensor", "Sleep efficiency", None, "%", "measurement", None, "percent"),
    # No heart-rate samples during the simulated nights: not known, which Home Assistant calls unknown.
    ("night_heart_rate", "sensor", "Night heart rate", None, "bpm", "measurement", None, ("unknown",)),
    ("asleep", "binary_sensor", "Asleep", None, None, None, None, ("on", "off")),
    # The gateway trusts the build machine's clock: nothing will ever synchronise it (docs/service.md, "The clock at boot").
    ("clock_trusted", "binary_sensor", "Clock trusted", None, None, None, "diagnostic", ("on",)),
    # The disk holding the gateway's database takes writes.
    ("storage", "sensor", "Storage", "enum", None, None, "diagnostic", ("ok",)),
    ("night", "event", "Night", None, None, None, None, "event"),
]

# protocol-spec/dbus-api.md "The night's events".
NIGHT_EVENTS = {"sleep_tracking_started", "sleep_tracking_paused", "sleep_tracking_resumed", "sleep_tracking_stopped",
                "fell_asleep", "woke_up", "awake", "light_sleep", "deep_sleep", "rem", "smart_period",
                "alarm_alert_start", "alarm_alert_dismiss", "alarm_snooze_clicked", "not_worn"}

LOG = None


def say(text):
    line = f"[{time.strftime('%H:%M:%S')}] {text}"
    print(line, flush=True)
    if LOG:
        LOG.write(line + "\n")
        LOG.flush()


class CheckFailed(Exception):
    def __init__(self, message, log=None):
        super().__init__(message)
        self.log = log  # the log (or list of logs) whose tail explains it


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    """Runs in the child before exec: the child gets SIGTERM if the checker dies."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    os.setpgrp()


def start(args, log_path, env=None):
    log = open(log_path, "ab")
    return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env, preexec_fn=die_with_parent)


def stop(process, sig=signal.SIGTERM, timeout=30):
    if process is None or process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def tail(path, lines=60):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as error:
        return f"({path}: {error})"


async def wait_for(what, probe, timeout, interval=0.5, log=None):
    """Polls `probe` (async, returns (ok, detail)) until ok or the time is up."""
    deadline = time.monotonic() + timeout
    detail = None
    while True:
        ok, detail = await probe()
        if ok:
            return detail
        if time.monotonic() > deadline:
            raise CheckFailed(f"timed out after {timeout:.0f} s waiting for {what}: {detail}", log)
        await asyncio.sleep(interval)


class Phase:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.started = time.monotonic()
        say(f"== {self.name}")
        return self

    def __exit__(self, kind, value, traceback):
        state = "ok" if kind is None else "FAILED"
        say(f"-- {self.name}: {state} in {time.monotonic() - self.started:.1f} s")


class HomeAssistant:
    def __init__(self, venv, config_dir, out, port, root=None, scratch=None):
        self.venv, self.config_dir, self.out, self.port = venv, config_dir, out, port
        self.root, self.scratch = root, scratch
        self.version = None
        self.url = f"http://127.0.0.1:{port}"
        self.client_id = f"{self.url}/"
        self.process = None
        self.token = None
        self.session = None
        self.log_path = os.path.join(out, "home-assistant.log")

    def start(self):
        command = [os.path.join(self.venv, "bin", "hass"), "--config", self.config_dir, "--skip-pip",
                   "--log-file", self.log_path, "--log-no-color"]
        environment = None
        if self.root:
            # The mounts live in the mount namespace unshare makes (private: nothing shows outside)
            # and go with its last process; sh and chroot exec, so the signals reach hass itself.
            inside = ('mount -t proc proc "$1/proc" && mkdir -p "$1$2" "$1$3" && mount --bind "$2" "$1$2" '
                      '&& mount --bind "$3" "$1$3" && root=$1 && shift 3 && exec chroot "$root" "$@"')
            command = ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", inside, "ha-chroot",
                       self.root, self.scratch, self.out] + command
            environment = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8", "TZ": "UTC"}
        self.process = start(command, os.path.join(self.out, "home-assistant.stdout.log"), env=environment)

    async def wait_up(self, timeout, path="/api/onboarding", status=200):
        """Until `path` answers with `status`: /api/onboarding 200 before onboarding, /auth/providers after."""
        async def probe():
            if self.process.poll() is not None:
                raise CheckFailed(f"Home Assistant exited with status {self.process.returncode}", self.log_path)
            try:
                async with self.session.get(f"{self.url}{path}", timeout=aiohttp.ClientTimeout(total=5)) as response:
                    return response.status == status, f"{path}: HTTP {response.status}"
            except aiohttp.ClientError as error:
                return False, str(error) or type(error).__name__
            except asyncio.TimeoutError:
                return False, "no answer"
        await wait_for("Home Assistant's HTTP API", probe, timeout, interval=1, log=self.log_path)

    def headers(self):
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def request(self, method, path, payload=None, form=None, expect=(200,)):
        async with self.session.request(method, f"{self.url}{path}", json=payload, data=form, headers=self.headers(),
                                        timeout=aiohttp.ClientTimeout(total=30)) as response:
            text = await response.text()
            if response.status not in expect:
                raise CheckFailed(f"{method} {path}: HTTP {response.status}: {text[:400]}", self.log_path)
            try:
                return json.loads(text) if text else None
            except ValueError:
                if response.status == 200:
                    raise CheckFailed(f"{method} {path}: not JSON: {text[:200]}", self.log_path)
                return text

    async def onboard(self):
        user = await self.request("POST", "/api/onboarding/users", {
            "client_id": self.client_id, "name": "Check", "username": "check", "password": "tsgateway-check", "language": "en"})
        token = await self.request("POST", "/auth/token", form={
            "grant_type": "authorization_code", "code": user["auth_code"], "client_id": self.client_id})
        self.token = token["access_token"]
        # Finishing this step makes Home Assistant start config flows for met, google_translate and
        # radio_browser, whose libraries are deliberately not installed (they would go out to the
        # internet); their failure turns the answer into HTTP 500 after the step is marked done.
        await self.request("POST", "/api/onboarding/core_config", {}, expect=(200, 500))
        await self.request("POST", "/api/onboarding/analytics", {})
        await self.request("POST", "/api/onboarding/integration", {"client_id": self.client_id, "redirect_uri": f"{self.url}/?auth_callback=1"})
        steps = await self.request("GET", "/api/onboarding")
        if not all(step["done"] for step in steps):
            raise CheckFailed(f"onboarding not finished: {steps}", self.log_path)

    async def login(self):
        """After a restart: a new token from the same user (password grant through the login flow)."""
        flow = await self.request("POST", "/auth/login_flow", {
            "client_id": self.client_id, "handler": ["homeassistant", None], "redirect_uri": f"{self.url}/"})
        result = await self.request("POST", f"/auth/login_flow/{flow['flow_id']}", {
            "client_id": self.client_id, "username": "check", "password": "tsgateway-check"})
        if result.get("type") != "create_entry":
            raise CheckFailed(f"login refused: {result}", self.log_path)
        self.token = None
        token = await self.request("POST", "/auth/token", form={
            "grant_type": "authorization_code", "code": result["result"], "client_id": self.client_id})
        self.token = token["access_token"]

    async def add_mqtt(self, broker_port):
        flow = await self.request("POST", "/api/config/config_entries/flow", {"handler": "mqtt", "show_advanced_options": False})
        if flow.get("type") != "form":
            raise CheckFailed(f"the MQTT config flow did not ask for the broker: {flow}", self.log_path)
        answer = {"broker": "127.0.0.1", "port": broker_port}
        # Newer releases (2026.11.0 does) ask for the client certificate and the broker's CA in a
        # required section of the form, "other_settings" (collapsed in the UI): none, plain TCP.
        if any(field.get("name") == "other_settings" for field in flow.get("data_schema") or []):
            answer["other_settings"] = {"set_client_cert": False, "set_ca_cert": "off"}
        result = await self.request("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", answer)
        if result.get("type") != "create_entry":
            raise CheckFailed(f"the MQTT config flow did not create an entry: {result}", self.log_path)
        entry = result["result"]
        # Discovery on (the default); said explicitly through the options flow.
        options = await self.request("POST", "/api/config/config_entries/options/flow", {"handler": entry["entry_id"]})
        if options.get("step_id") == "broker":
            options = await self.request("POST", f"/api/config/config_entries/options/flow/{options['flow_id']}",
                                         {"broker": "127.0.0.1", "port": broker_port})
        if options.get("step_id") != "options":
            raise CheckFailed(f"the MQTT options flow did not offer discovery: {options}", self.log_path)
        done = await self.request("POST", f"/api/config/config_entries/options/flow/{options['flow_id']}",
                                  {"discovery": True, "discovery_prefix": "homeassistant", "birth_enable": True,
                                   "birth_topic": "homeassistant/status", "birth_payload": "online", "birth_qos": 0,
                                   "birth_retain": False, "will_enable": True, "will_topic": "homeassistant/status",
                                   "will_payload": "offline", "will_qos": 0, "will_retain": False})
        if done.get("type") != "create_entry":
            raise CheckFailed(f"the MQTT options flow did not finish: {done}", self.log_path)
        return entry["entry_id"]

    async def websocket(self, *commands):
        """Runs websocket commands (dicts without id) and returns their results."""
        results = []
        async with self.session.ws_connect(f"{self.url}/api/websocket", timeout=30) as ws:
            hello = await ws.receive_json(timeout=10)
            if hello.get("type") != "auth_required":
                raise CheckFailed(f"websocket: {hello}", self.log_path)
            await ws.send_json({"type": "auth", "access_token": self.token})
            auth = await ws.receive_json(timeout=10)
            if auth.get("type") != "auth_ok":
                raise CheckFailed(f"websocket auth: {auth}", self.log_path)
            for number, command in enumerate(commands, start=1):
                await ws.send_json({"id": number, **command})
                while True:
                    answer = await ws.receive_json(timeout=30)
                    if answer.get("id") == number and answer.get("type") == "result":
                        break
                if not answer.get("success"):
                    raise CheckFailed(f"websocket {command['type']}: {answer.get('error')}", self.log_path)
                results.append(answer["result"])
        return results

    async def states(self):
        return {state["entity_id"]: state for state in await self.request("GET", "/api/states")}


def valid_state(kind, state):
    if isinstance(kind, tuple):
        return state in kind
    if kind in ("percent", "count", "positive", "bpm"):
        try:
            value = float(state)
        except ValueError:
            return False
        return {"percent": 0 <= value <= 100, "count": value >= 0, "positive": value > 0, "bpm": 25 <= value <= 250}[kind]
    if kind == "timestamp":
        try:
            return dt.datetime.fromisoformat(state).tzinfo is not None
        except ValueError:
            return False
    if kind == "event":
        # An event entity's state is the time of its last event; "unknown" before the first.
        return state == "unknown" or valid_state("timestamp", state)
    if kind == "date":
        return re.fullmatch(r"\d{4}-\d{2}-\d{2}", state) is not None
    return False


async def check_all(ha):
    """(ok, detail, rows): every watch a device with model and firmware, every entity as in ENTITIES."""
    devices, entities = await ha.websocket({"type": "config/device_registry/list"}, {"type": "config/entity_registry/list"})
    states = await ha.states()
    problems, rows = [], []
    gateways = [d for d in devices if ["mqtt", GATEWAY_DEVICE["identifier"]] in d["identifiers"]]
    gateway = gateways[0] if len(gateways) == 1 else None
    if gateway is None:
        problems.append(f"{len(gateways)} gateway devices with identifier {GATEWAY_DEVICE['identifier']}")
    else:
        if gateway["name"] != GATEWAY_DEVICE["name"]:
            problems.append(f"the gateway device is called {gateway['name']!r}, not {GATEWAY_DEVICE['name']!r}")
        rows.append(("device", gateway["name"], gateway.get("manufacturer"), gateway.get("model"), gateway.get("sw_version"), gateway["id"]))
        online = states.get(GATEWAY_DEVICE["entity"], {}).get("state")
        if online != "on":
            problems.append(f"{GATEWAY_DEVICE['entity']} is {online!r}, not 'on'")
    for watch in WATCHES:
        identifier = ["mqtt", f"tsgateway_{watch['key']}"]
        found = [d for d in devices if identifier in d["identifiers"]]
        if len(found) != 1:
            problems.append(f"{len(found)} devices with identifier {identifier}")
            continue
        device = found[0]
        want = {"name": watch["device"], "manufacturer": MANUFACTURER, "model": MODEL, "sw_version": FIRMWARE,
                "via_device_id": gateway["id"] if gateway else None}
        for field, value in want.items():
            if device.get(field) != value:
                problems.append(f"device {watch['device']}: {field} is {device.get(field)!r}, not {value!r}")
        rows.append(("device", device["name"], device.get("manufacturer"), device.get("model"), device.get("sw_version"), device["id"]))
        mine = [e for e in entities if e["device_id"] == device["id"]]
        if len(mine) != len(ENTITIES):
            problems.append(f"device {watch['device']}: {len(mine)} entities, not {len(ENTITIES)}: {[e['entity_id'] for e in mine]}")
        for key, domain, name, device_class, unit, state_class, category, kind in ENTITIES:
            unique_id = f"tsgateway_{watch['key']}_{key}"
            entry = next((e for e in entities if e["unique_id"] == unique_id and e["platform"] == "mqtt"), None)
            entity_id = f"{domain}.{watch['prefix']}_{key}"
            if entry is None:
                problems.append(f"no entity with unique id {unique_id}")
                continue
            if entry["entity_id"] != entity_id:
                problems.append(f"{unique_id} is {entry['entity_id']}, not {entity_id}")
            if entry.get("entity_category") != category:
                problems.append(f"{entity_id}: category {entry.get('entity_category')!r}, not {category!r}")
            if entry.get("original_name") != name:
                problems.append(f"{entity_id}: name {entry.get('original_name')!r}, not {name!r}")
            state = states.get(entry["entity_id"])
            if state is None:
                problems.append(f"{entity_id}: no state")
                continue
            attributes = state["attributes"]
            for attribute, value in (("device_class", device_class), ("unit_of_measurement", unit), ("state_class", state_class)):
                if attributes.get(attribute) != value:
                    problems.append(f"{entity_id}: {attribute} {attributes.get(attribute)!r}, not {value!r}")
            if not valid_state(kind, state["state"]):
                problems.append(f"{entity_id}: state {state['state']!r} is not a valid {kind if isinstance(kind, str) else 'one of ' + '/'.join(kind)}")
            rows.append(("entity", entry["entity_id"], attributes.get("friendly_name"), state["state"], unit or "-",
                         device_class or "-", state_class or "-", category or "-"))
    return not problems, "; ".join(problems[:8]) + (f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""), rows


async def entity_ids_named(ha, broker_port):
    """(ok, detail): every retained discovery config of the gateway names its entity id twice, the same
    way: `default_entity_id` (DOMAIN.ID, what Home Assistant 2025.10 and later go by; 2026.11 drops
    `object_id` without a word) and `object_id` (ID, what the releases before go by; they ignore
    `default_entity_id`); and the entity Home Assistant made of it has that id."""
    listing = await asyncio.to_thread(subprocess.run, [
        "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker_port), "-t", "homeassistant/+/+/+/config",
        "-v", "--retained-only", "-W", "3"], capture_output=True, text=True, timeout=20)
    configs, problems = {}, []
    for line in listing.stdout.splitlines():
        topic, _, payload = line.partition(" ")
        if payload:
            try:
                configs[topic] = json.loads(payload)
            except ValueError:
                problems.append(f"{topic}: not JSON: {payload[:200]}")
    _, entities = await ha.websocket({"type": "config/device_registry/list"}, {"type": "config/entity_registry/list"})
    registry = {e["unique_id"]: e["entity_id"] for e in entities if e["platform"] == "mqtt"}
    for topic, config in sorted(configs.items()):
        domain = topic.split("/")[1]
        named = config.get("default_entity_id")
        if named is None or named != f"{domain}.{config.get('object_id')}":
            problems.append(f"{topic}: default_entity_id {named!r}, object_id {config.get('object_id')!r}")
        elif registry.get(config.get("unique_id")) != named:
            problems.append(f"{topic}: Home Assistant made {registry.get(config.get('unique_id'))!r}, the config names {named!r}")
    want = len(WATCHES) * len(ENTITIES) + 1
    if len(configs) != want:
        problems.append(f"{len(configs)} retained discovery configs, not {want}")
    return not problems, (f"{len(configs)} discovery configs, each with default_entity_id = DOMAIN.object_id, "
                          f"and Home Assistant {ha.version} gave each entity that id") if not problems else "; ".join(problems[:8])


async def all_states(ha, wanted):
    """(ok, detail): every entity of every watch is in state `wanted` (e.g. unavailable)."""
    _, entities = await ha.websocket({"type": "config/device_registry/list"}, {"type": "config/entity_registry/list"})
    states = await ha.states()
    ids = [e["entity_id"] for e in entities if e["platform"] == "mqtt" and e["unique_id"].startswith("tsgateway_")
           and not e["unique_id"].startswith(GATEWAY_DEVICE["identifier"])]
    other = {i: states.get(i, {}).get("state") for i in ids if states.get(i, {}).get("state") != wanted}
    if len(ids) != len(WATCHES) * len(ENTITIES):
        return False, f"{len(ids)} tsgateway entities"
    return not other, f"not {wanted}: {other}"


# Home Assistant before 2024.10 warns when a timestamp or date sensor's template renders "None"
# (a value not known yet, such as the last sync before the first one), and shows it as unknown,
# as it does for numeric sensors without a warning (home-assistant/core#126694 made it quiet).
KNOWN_HA_WARNING = re.compile(r"\[homeassistant\.components\.mqtt\.sensor\] Invalid state message 'None' from '" + re.escape(TOPIC_BASE) + r"/watch/[0-9a-f]{12}/state'")


def release(version):
    """(year, month) of a Home Assistant version such as 2024.3.3."""
    year, month = (int(part) for part in version.split(".")[:2])
    return year, month


def log_problems(path, known=None):
    """Warnings and errors in Home Assistant's log about tsgateway or MQTT discovery, with their
    tracebacks; the known warning above is left out when `known` is a list (and counted there)."""
    found, current = [], None
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return [f"no log at {path}"]
    for line in lines:
        if re.match(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", line):
            current = None
            if re.search(r" (WARNING|ERROR|CRITICAL) ", line) and re.search(r"tsgateway|discovery", line, re.IGNORECASE):
                if known is not None and KNOWN_HA_WARNING.search(line):
                    known.append(line)
                    continue
                current = [line]
                found.append(current)
        elif current is not None:
            current.append(line)
    return ["\n".join(block) for block in found]


def print_rows(rows):
    for row in rows:
        if row[0] == "device":
            say(f"device  {row[1]!r}  manufacturer={row[2]} model={row[3]} sw_version={row[4]}")
        else:
            say(f"  {row[1]:<48} {row[2]!r:<38} state={row[3]!r:<28} unit={row[4]:<6} class={row[5]:<12} state_class={row[6]:<11} category={row[7]}")


async def main():
    global LOG
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--venv", required=True, help="Home Assistant's virtual environment (inside --root with --root)")
    parser.add_argument("--root", help="a Debian root to run Home Assistant in (chroot)")
    parser.add_argument("--expect-version", help="the Home Assistant version that must answer")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    options = parser.parse_args()
    out = os.path.abspath(options.out)
    os.makedirs(out, exist_ok=True)
    for name in ("home-assistant.log", "home-assistant.log.1", "home-assistant.stdout.log", "gateway.log", "mosquitto.log", "dbus.log", "checker.log"):
        try:
            os.remove(os.path.join(out, name))
        except FileNotFoundError:
            pass
    LOG = open(os.path.join(out, "checker.log"), "w")
    binary = os.path.abspath(options.binary)
    if not os.access(binary, os.X_OK):
        raise CheckFailed(f"no tsgateway at {binary}; build it first (swift build)")
    for tool in ("/usr/sbin/mosquitto", "/usr/bin/mosquitto_pub", "/usr/bin/mosquitto_sub", "/usr/bin/dbus-daemon"):
        if not os.access(tool, os.X_OK):
            raise CheckFailed(f"{tool} is missing (scripts/ha-check installs mosquitto, mosquitto-clients and dbus)")

    scratch = tempfile.mkdtemp(prefix="tsgateway-ha-")
    os.chmod(scratch, 0o755)
    broker = bus = gateway = None
    root = os.path.abspath(options.root) if options.root else None
    ha = HomeAssistant(options.venv, os.path.join(scratch, "ha"), out, free_port(), root, scratch)
    gateway_log = os.path.join(out, "gateway.log")
    broker_port = free_port()
    began = time.monotonic()
    try:
        with Phase("broker and bus"):
            with open(os.path.join(scratch, "mosquitto.conf"), "w") as f:
                f.write(f"listener {broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest stderr\nlog_type all\n")
            broker = start(["/usr/sbin/mosquitto", "-c", os.path.join(scratch, "mosquitto.conf")], os.path.join(out, "mosquitto.log"))
            socket_path = os.path.join(scratch, "bus.socket")
            with open(os.path.join(scratch, "bus.conf"), "w") as f:
                f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path={socket_path}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
""")
            bus = start(["/usr/bin/dbus-daemon", f"--config-file={scratch}/bus.conf", "--nofork", "--nopidfile"], os.path.join(out, "dbus.log"))

            async def listening():
                with socket.socket() as s:
                    return s.connect_ex(("127.0.0.1", broker_port)) == 0, f"nothing on port {broker_port}"
            await wait_for("Mosquitto", listening, 10, 0.1, os.path.join(out, "mosquitto.log"))

            async def bus_up():
                return os.path.exists(socket_path), "no bus socket"
            await wait_for("dbus-daemon", bus_up, 10, 0.1)
            say(f"mosquitto on 127.0.0.1:{broker_port}, dbus-daemon at {socket_path}")

        os.makedirs(ha.config_dir)
        with open(os.path.join(ha.config_dir, "configuration.yaml"), "w") as f:
            f.write(f"""homeassistant:
  name: tsgateway check
  latitude: 52.52
  longitude: 13.40
  elevation: 34
  unit_system: metric
  time_zone: UTC
  currency: EUR
  country: DE
http:
  server_host: 127.0.0.1
  server_port: {ha.port}
api:
config:
logger:
  default: info
""")
        async with aiohttp.ClientSession() as session:
            ha.session = session
            with Phase("Home Assistant starts"):
                ha.start()
                await ha.wait_up(240)
                say(f"Home Assistant at {ha.url}")
            with Phase("onboarding and the MQTT integration (REST config flow, discovery on)"):
                await ha.onboard()
                ha.version = (await ha.request("GET", "/api/config"))["version"]
                say(f"Home Assistant {ha.version}" + (f", in the Debian root {root}" if root else ""))
                if options.expect_version and ha.version != options.expect_version:
                    raise CheckFailed(f"Home Assistant {ha.version} answers, not {options.expect_version}")
                entry = await ha.add_mqtt(broker_port)
                say(f"MQTT config entry {entry} for 127.0.0.1:{broker_port}")

            config_path = os.path.join(scratch, "gateway.yaml")
            with open(config_path, "w") as f:
                f.write(f"""database: {scratch}/gateway/tsgateway.sqlite
bus: session
time-zone: UTC
reconnect-min: 200ms
reconnect-max: 2s
mqtt:
  host: 127.0.0.1
  port: {broker_port}
  gateway-id: {GATEWAY_ID}
  keepalive: 5
watches:
  - simulated: true
    name: bedroom
    live-stage-interval: 3s
  - simulated: true
    seed: 7
""")
            environment = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=f"unix:path={socket_path}", TZ="UTC")
            environment.pop("TSGATEWAY_BUS", None)

            def start_gateway():
                with open(gateway_log, "a") as log:
                    log.write(f"==== tsgateway serve started by ha-check at {time.strftime('%H:%M:%S')}\n")
                return start([binary, "serve", "--config", config_path, "-v"], gateway_log, env=environment)

            async def everything(what, timeout=90):
                async def probe():
                    if gateway is not None and gateway.poll() is not None:
                        raise CheckFailed(f"tsgateway serve exited with status {gateway.returncode}", gateway_log)
                    ok, detail, rows = await check_all(ha)
                    probe.rows = rows
                    return ok, detail
                await wait_for(what, probe, timeout, 1, [gateway_log, ha.log_path])
                return probe.rows

            with Phase("tsgateway serve: two watches appear in Home Assistant"):
                gateway = start_gateway()
                rows = await everything("both devices and all their entities, as documented")
                print_rows(rows)
                ok, detail = await entity_ids_named(ha, broker_port)
                if not ok:
                    raise CheckFailed(f"the entity ids: {detail}", gateway_log)
                say(detail)

            with Phase("the night's events reach Home Assistant's event entity, one of the documented types"):
                night_entity = f"event.{WATCHES[0]['prefix']}_night"
                async def night_event():
                    state = (await ha.states()).get(night_entity)
                    if state is None:
                        return False, "no state"
                    event_type = state["attributes"].get("event_type")
                    if state["state"] == "unknown":
                        return False, "no event yet"
                    if event_type not in NIGHT_EVENTS:
                        raise CheckFailed(f"{night_entity}: event_type {event_type!r} is not one of the documented night events", gateway_log)
                    return True, f"{event_type} at {state['state']}"
                await wait_for(f"{night_entity} has an event", night_event, 60, 1, [gateway_log, ha.log_path])
                say(f"  {night_entity}: {(await night_event())[1]}")

            with Phase("MQTT command round trip: alarms/set, the reply, Home Assistant's next alarm"):
                watch = WATCHES[0]
                command_topic = f"{TOPIC_BASE}/watch/{watch['key']}/command/alarms/set"
                reply_topic = f"{TOPIC_BASE}/watch/{watch['key']}/command/reply"
                listener = subprocess.Popen(["/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker_port), "-q", "1",
                                             "-t", reply_topic, "-C", "1", "-W", "30"], stdout=subprocess.PIPE, text=True)
                await asyncio.sleep(1)
                command = {"id": "ha-check-1", "alarms": [{"time": "05:17", "repeat": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "label": "HA check"}]}
                subprocess.run(["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker_port), "-q", "1",
                                "-t", command_topic, "-m", json.dumps(command)], check=True, timeout=15)
                reply_text, _ = await asyncio.to_thread(listener.communicate, timeout=40)
                try:
                    reply = json.loads(reply_text)
                except ValueError:
                    raise CheckFailed(f"no JSON reply on {reply_topic}: {reply_text!r}", gateway_log)
                if reply.get("id") != "ha-check-1" or reply.get("ok") is not True or reply.get("command") != "alarms/set":
                    raise CheckFailed(f"the reply on {reply_topic} is {reply}", gateway_log)
                say(f"reply on {reply_topic}: {reply_text.strip()}")
                now = dt.datetime.now(dt.timezone.utc)
                expected = now.replace(hour=5, minute=17, second=0, microsecond=0)
                if expected <= now:
                    expected += dt.timedelta(days=1)
                next_alarm = f"sensor.{watch['prefix']}_next_alarm"

                async def alarm_shown():
                    state = (await ha.request("GET", f"/api/states/{next_alarm}"))["state"]
                    try:
                        return dt.datetime.fromisoformat(state) == expected, state
                    except ValueError:
                        return False, state
                shown = await wait_for(f"{next_alarm} to say {expected.isoformat()}", alarm_shown, 30, 0.5, gateway_log)
                say(f"{next_alarm} = {shown}")

            with Phase("SIGTERM of the gateway: every entity unavailable; a restart brings them back"):
                stop(gateway, signal.SIGTERM)
                say(f"tsgateway serve stopped, status {gateway.returncode}")
                await wait_for("all entities unavailable after SIGTERM", lambda: all_states(ha, "unavailable"), 30, 0.5, [gateway_log, ha.log_path])
                gateway = start_gateway()
                await everything("everything back after the gateway's restart")

            with Phase("kill -9 of the gateway: the last will makes every entity unavailable; a restart brings them back"):
                stop(gateway, signal.SIGKILL)
                await wait_for("all entities unavailable after kill -9 (last will)", lambda: all_states(ha, "unavailable"), 30, 0.5, [gateway_log, ha.log_path])
                gateway = start_gateway()
                await everything("everything back after the gateway's restart")

            with Phase("Home Assistant restarts alone (retained discovery removed while it is down): the birth message brings everything back"):
                stop(ha.process, signal.SIGTERM, timeout=90)
                say(f"Home Assistant stopped, status {ha.process.returncode}")
                # Without retained configs only the gateway's answer to the birth message can bring the entities back.
                for watch in WATCHES:
                    for key, domain, *_ in ENTITIES:
                        subprocess.run(["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker_port), "-r", "-n", "-q", "1",
                                        "-t", f"homeassistant/{domain}/tsgateway_{watch['key']}/{key}/config"], check=True, timeout=15)
                ha.start()
                await ha.wait_up(240, "/auth/providers")
                await ha.login()
                rows = await everything("everything back after Home Assistant's restart (birth message)", timeout=120)
                if "Home Assistant is online; publishing discovery again" not in tail(gateway_log, 400):
                    raise CheckFailed("the gateway did not log the birth message", gateway_log)

            with Phase("Home Assistant's log and repairs: no warning, error or issue about tsgateway or MQTT discovery"):
                # Home Assistant moves the log of its first start to home-assistant.log.1 when it starts again.
                logs = [ha.log_path + ".1", ha.log_path]
                # Only releases before 2024.10 are excused the warning about a value not known yet.
                known = [] if release(ha.version) < (2024, 10) else None
                problems = [problem for log in logs for problem in log_problems(log, known)]
                say(f"Home Assistant {ha.version}'s log: {len(problems)} warnings/errors that name tsgateway or MQTT discovery"
                    + (":" if problems else ""))
                for problem in problems[:20]:
                    say("    " + problem.replace("\n", "\n    ")[:1200])
                issues = (await ha.websocket({"type": "repairs/list_issues"}))[0]["issues"]
                mine = [issue for issue in issues if re.search(r"tsgateway|mqtt", json.dumps(issue), re.IGNORECASE)]
                listed = ", ".join(f"{issue.get('domain')}/{issue.get('issue_id')}" for issue in issues)
                say(f"repair issues: {len(issues)}{f' ({listed})' if issues else ''}, {len(mine)} about tsgateway or MQTT" + (":" if mine else ""))
                for issue in mine[:20]:
                    say(f"    {json.dumps(issue)[:400]}")
                if problems or mine:
                    raise CheckFailed(f"{len(problems)} warnings/errors about tsgateway or MQTT discovery in {' and '.join(logs)}, "
                                      f"{len(mine)} repair issues about tsgateway or MQTT (listed above)")
                if known is not None:
                    say(f"{len(known)} warnings of Home Assistant before 2024.10 about a timestamp or date not known yet "
                        "(\"None\": shown as unknown), excused on this release only")
                others = [line for log in logs for line in open(log, errors="replace") if re.search(r" (WARNING|ERROR) ", line)]
                say(f"none; {len(others)} other warnings/errors (Home Assistant's own, listed here):")
                for line in others[:10]:
                    say(f"    {line.strip()[:220]}")

            say("devices and entities as Home Assistant shows them at the end:")
            print_rows(rows)
            say(f"ha-check: Home Assistant {ha.version}: PASSED in {time.monotonic() - began:.1f} s")
    finally:
        stop(gateway)
        if ha.process is not None:
            stop(ha.process, timeout=60)
        stop(broker)
        stop(bus)
        if options.keep:
            say(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except CheckFailed as failure:
        say(f"ha-check: FAILED: {failure}")
        for log in ([failure.log] if isinstance(failure.log, str) else failure.log or []):
            say(f"---- last lines of {log}")
            print(tail(log), flush=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
