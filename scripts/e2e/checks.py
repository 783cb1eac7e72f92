#!/usr/bin/env python3
# The end-to-end journeys' assertions and the values they read from a step's output, in one place
# (they were 21 Python heredocs and as many one-liners inside scripts/e2e/suite and the files it
# sourced). Every journey under scripts/e2e/journeys calls it as
#
#   python3 checks.py NAME ARGS...     # status 0: holds; 1: does not (what came on stderr)
#   python3 checks.py --list           # the names and what each asserts
#
# A check prints the one line the journey logs (counts, what it compared); an assertion that does
# not hold prints what was there. Standard library only: the QRing journey runs one
# (set-order-hci0) with colmi-r02-client's own Python.
import datetime
import json
import re
import sys


def alarm_limits(info):
    """`info --json`'s alarm limits: (count, label bytes, remark bytes), zeros for a watch without an alarm table."""
    alarms = info["capabilities"].get("alarms") or {}
    return alarms.get("maxCount", 0), alarms.get("labelMaxBytes", 0), alarms.get("remarkMaxBytes", 0)


CHECKS = {}


def check(name):
    def register(function):
        CHECKS[name] = function
        return function
    return register


def whole(path):
    """A step's output that is one JSON document (the journeys' old json helper)."""
    return json.load(open(path))


def tail(path):
    """The JSON object in a step's output, between its first { and its last } (log lines around
    it; the journeys' old json_tail)."""
    text = open(path).read()
    return json.loads(text[text.index("{"):text.rindex("}") + 1])


def lines(path):
    """The JSON lines of a step's output (those starting with {)."""
    return [json.loads(line) for line in open(path) if line.startswith("{")]


def epoch(iso):
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp())


# --- values a journey reads

@check("field")
def field(path, key):
    """Prints KEY of the JSON object in the output (e.g. a sync's `from`); a dotted KEY reaches
    into nested objects (`battery.level`)."""
    value = tail(path)
    for part in key.split("."):
        value = value[part]
    print(value)


@check("adapter-address")
def adapter_address(path, name):
    """Prints the address of adapter NAME from `adapter list --json` (PATH - reads stdin)."""
    adapters = json.load(sys.stdin if path == "-" else open(path))
    print([x for x in adapters if x["name"] == name][0]["address"])


@check("days-ago")
def days_ago(days):
    """Prints the UTC time DAYS days ago, ISO 8601."""
    print((datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=int(days))).strftime("%Y-%m-%dT%H:%M:%SZ"))


@check("qring-yesterday")
def qring_yesterday(now):
    """Yesterday on the ring's clock NOW (the local zone), the day colmi-r02-client is asked for:
    colmi 0.1.0 takes a log whose date is today's in its own zone (UTC) as today's and blanks the
    readings after its UTC time, so when the ring's yesterday is the UTC date the day before."""
    t = datetime.datetime.fromisoformat(now.replace("Z", "+00:00"))
    day = (t.astimezone() - datetime.timedelta(days=1)).date()
    print(day - datetime.timedelta(days=1) if day == t.astimezone(datetime.timezone.utc).date() else day)


@check("set-order-hci0")
def set_order_hci0():
    """Holds when this Python (under its PYTHONHASHSEED) iterates a set of the two adapters' paths
    hci0 first, the adapter colmi-r02-client's bleak then takes."""
    assert next(iter({"/org/bluez/hci0", "/org/bluez/hci1"})) == "/org/bluez/hci0"


# --- adapters and scan

@check("adapters")
def adapters(path):
    """`adapter list --json` shows hci0 (powered) and hci1."""
    a = {x["name"]: x for x in whole(path)}
    assert set(a) >= {"hci0", "hci1"}, a
    assert a["hci0"]["powered"], a


@check("adapter-info")
def adapter_info(path):
    """`adapter info --json` read the controller's version, manufacturer and LE features over HCI."""
    d = whole(path)
    assert d["adapter"] == "hci0" and d["bluetoothVersion"][0].isdigit() and d["manufacturerName"] and d["hciVersion"] >= 6 and len(d["leFeatures"] or []) > 0, d
    print(f"hci0: Bluetooth {d['bluetoothVersion']} {d['manufacturerName']} {d['address']} {d['addressType']} / {', '.join(d['leFeatures'])}")


@check("scan-finds")
def scan_finds(path, address, *options):
    """`scan --json` reported ADDRESS; with options, its first report also has --name NAME, each
    --service UUID among its services (lower case), --dialects A,B exactly, --ambiguous yes|no."""
    reports = [x for x in lines(path) if x["address"] == address]
    if not options:
        assert reports, f"no report of {address}"
        return
    assert reports, f"no report of {address}"
    x = reports[0]
    it = iter(options)
    for option in it:
        value = next(it)
        if option == "--name":
            assert x["name"] == value, x
        elif option == "--service":
            assert value in [u.lower() for u in x["uuids"]], x
        elif option == "--dialects":
            assert x["dialects"] == value.split(","), x
        elif option == "--ambiguous":
            assert x.get("ambiguous") == (value == "yes"), x
        else:
            raise SystemExit(f"scan-finds: unknown option {option}")


# --- protocol v1 (the simulated watch)

@check("v1-info")
def v1_info(path):
    """`info --json` is the simulated watch's, with its standard services."""
    d = tail(path)
    assert d["model"] == "TS-Sim W10" and alarm_limits(d)[0] == 10, d
    assert set(d["services"]) >= {"protocol-v1", "device-information", "battery", "heart-rate"}, d["services"]
    assert d["deviceInformation"]["manufacturer"] == "tsgateway project" and d["deviceInformation"]["serialNumber"] == "SIM-0001", d


@check("v1-alarms")
def v1_alarms(path):
    """`alarms get --json` returns the 07:00 Work workdays alarm `alarms set` wrote."""
    a = whole(path)["alarms"]
    assert len(a) == 1 and a[0]["time"] == "07:00" and a[0]["label"] == "Work" and a[0]["repeat"] == ["mon", "tue", "wed", "thu", "fri"], a


@check("has-alarms")
def has_alarms(path):
    """`alarms get --json` gave an alarm table."""
    assert "alarms" in whole(path)


@check("monitor-heart-rate")
def monitor_heart_rate(path):
    """`monitor get --json`: heart rate 08:00-22:00 every 10 min, alerts 120/45."""
    m = [x for x in whole(path)["monitors"] if x["type"] == "heartRate"][0]
    s, a = m["schedule"], m["alert"]
    assert (s["startMinute"], s["endMinute"], s["intervalMinutes"], a["upper"], a["lower"]) == (480, 1320, 10, 120, 45), m


@check("hr-watch-sim")
def hr_watch_sim(path):
    """`hr watch --count 3 --json` on the simulated watch: 3 samples of its night, 50-80 bpm,
    contact detected, one RR interval each."""
    samples = lines(path)
    print("heart rate " + ", ".join(str(s["bpm"]) for s in samples) + " bpm")
    assert len(samples) == 3 and all(50 <= s["bpm"] <= 80 and s["sensorContact"] == "detected" and len(s["rrIntervals"]) == 1 for s in samples)


@check("sleep-equals-truth")
def sleep_equals_truth(truth_path, export_path, since_iso):
    """The records of `sleep export --format json` starting at SINCE or later are exactly the
    simulator's ground truth from then: none missing, none extra, none twice."""
    truth = json.load(open(truth_path))
    stored = json.load(open(export_path))["records"]
    since = epoch(since_iso)
    key = lambda r: (r["start"], r["stage"], r["duration"])
    want = sorted(key(r) for r in truth if r["start"] >= since)
    got = sorted(key(r) for r in stored if r["start"] >= since)
    dups = len(got) - len(set(got))
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    print(f"ground truth {len(want)} records since {since_iso}; stored {len(got)}; missing {len(missing)}; extra {len(extra)}; duplicated {dups}")
    assert not missing and not extra and not dups


@check("capture-records")
def capture_records(decode_path, export_path):
    """The sleep records `protocol decode --btsnoop --json` decodes from the capture's
    notifications are exactly the (non-empty) records the captured sync stored."""
    key = lambda r: (r["start"], r["stage"], r["duration"])
    decoded = set()
    for d in lines(decode_path):
        message = d.get("message") if isinstance(d.get("message"), dict) else {}
        if d.get("type") == "frame" and message.get("kind") == "sleepPage.stream" and d.get("direction") == "notification":
            decoded |= {key(r) for r in message["body"]["records"]}
    synced = {key(r) for r in json.load(open(export_path))["records"]}
    print(f"decoded {len(decoded)} sleep records from the capture; synced {len(synced)}; missing {len(synced - decoded)}; extra {len(decoded - synced)}")
    assert decoded == synced and synced


@check("capture-sleep-records")
def capture_sleep_records(decode_path, export_path, dialect, since_iso):
    """Any dialect: `protocol decode --btsnoop --json` found DIALECT's exchange, showed every
    frame (none failed its checks), and the sleep items its notifications carry from SINCE_ISO on
    (v1: sleepPage.stream's body.records; NPK, QRing: the frame's records) are exactly the
    records the captured sync stored. A Huami band's items are read from its samples, and its
    sync keeps the one under way at SINCE whole (those that end after it:
    HuamiWatch+Activity.swift), so for huami "from SINCE on" means ending after it."""
    key = lambda r: (r["start"], str(r["stage"]), r["duration"])
    since = epoch(since_iso)
    in_range = (lambda r: r["start"] + r["duration"] > since) if dialect == "huami" else (lambda r: r["start"] >= since)
    decoded_lines = lines(decode_path)
    dialects = {d.get("dialect") for d in decoded_lines}
    assert dialects == {dialect}, f"decoded as {dialects}, expected {dialect}"
    failed = [d for d in decoded_lines if d.get("type") != "frame"]
    decoded = set()
    for d in decoded_lines:
        if d.get("type") != "frame" or d.get("direction") != "notification":
            continue
        message = d.get("message") or {}
        records = message.get("records")
        if records is None and message.get("kind") == "sleepPage.stream":
            records = message["body"]["records"]
        decoded |= {key(r) for r in records or [] if in_range(r)}
    synced = {key(r) for r in json.load(open(export_path))["records"]}
    print(f"{dialect}: {len(decoded_lines)} frame(s), {len(failed)} failing their checks; decoded {len(decoded)} sleep records "
          f"from the capture; synced {len(synced)}; missing {len(synced - decoded)}; extra {len(decoded - synced)}")
    assert decoded == synced and synced


@check("replayable-capture")
def replayable_capture(path, decode_path):
    """`--to-capture` wrote the exchange as a replayable capture: an open per connection, and as
    many writes and notifications as the decoded exchange has values on each pair."""
    entries = lines(path)
    opens = [e for e in entries if e["direction"] == "open"]
    values = [e for e in entries if e["direction"] in ("write", "notification")]
    pairs = {e.get("channel", "main") for e in values}
    print(f"{len(opens)} connection(s), {len(values)} value(s) on pair(s) {sorted(pairs)}")
    assert opens and values and entries[0]["direction"] == "open"


@check("tshark-att")
def tshark_att(path, write_handles, notify_handles):
    """tshark's fields (frame, ATT opcode, handle) show frames, ATT writes (0x12/0x52) on the
    write handles and notifications (0x1b on the notify handles, or 0x23)."""
    frames, ops = 0, []
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) != 3 or not f[0].isdigit():
            continue
        frames += 1
        if f[1]:
            ops.append((int(f[1].split(",")[0], 16), int(f[2].split(",")[0], 16) if f[2] else None))
    want_w = {int(h, 16) for h in write_handles.split(",")}
    want_n = {int(h, 16) for h in notify_handles.split(",")}
    writes = sum(1 for o, h in ops if o in (0x12, 0x52) and h in want_w)
    notes = sum(1 for o, h in ops if o == 0x1b and h in want_n)
    multiple = sum(1 for o, h in ops if o == 0x23)
    print(f"tshark: {frames} frames; {writes} ATT writes on {write_handles}; {notes} notifications on {notify_handles}; {multiple} multiple-handle notifications")
    assert frames > 0 and writes > 0 and notes + multiple > 0


@check("notification-size")
def notification_size(simulator_line, central_mtu, less):
    """The simulator's "largest notification so far: N bytes (ATT MTU M)" line: M is the MTU the
    central negotiated (more than 23) and N = M - LESS (5 for v1; NPK's may be set)."""
    m = re.search(r"so far: (\d+) bytes \(ATT MTU (\d+)\)", simulator_line)
    assert m, f"no 'largest notification so far' line: {simulator_line!r}"
    central, less = int(central_mtu), int(less)
    largest, peripheral = map(int, m.groups())
    print(f"ATT MTU {central} at the central, {peripheral} at the peripheral; largest notification {largest} B = MTU - {peripheral - largest}")
    assert central > 23 and peripheral == central and largest == peripheral - less


@check("resumed-sync")
def resumed_sync(path):
    """The v1 sync after a dropped link resumed where it stopped: it fetched some records, and
    fewer than the 2000 of a sync from the start; prints its `from`."""
    d = tail(path)
    print(d["from"])
    assert 0 < d["fetched"] < 2000, d


@check("v1-daemon-alarms")
def daemon_alarms(path, address, time, label):
    """`alarms get --json` through the daemon: watch ADDRESS, its table exactly [(TIME, LABEL)]."""
    d = tail(path)
    assert d["watch"] == address and [(a["time"], a["label"]) for a in d["alarms"]] == [(time, label)], d


@check("v1-daemon-info")
def v1_daemon_info(path):
    """`info --json` through the daemon is the simulated watch's, with a battery level."""
    d = tail(path)
    assert d["model"] == "TS-Sim W10" and d["battery"]["level"] > 0, d


@check("smart-wake-rang")
def smart_wake_rang(path, address):
    """`events --type smartWake --count 1`: one event, outcome rang, slot 0, at a light or awake
    stage, for ADDRESS."""
    events = lines(path)
    assert len(events) == 1 and events[0]["type"] == "smartWake" and events[0]["outcome"] == "rang" and events[0]["alarmSlot"] == 0 \
        and events[0]["stage"] in ("light", "awake") and events[0]["watch"] == address, events


@check("alarm-table-is")
def alarm_table_is(path, time):
    """`alarms get --json`: the table is exactly slot 0 at TIME, enabled."""
    d = tail(path)
    assert [(a["slot"], a["time"], a["enabled"]) for a in d["alarms"]] == [(0, time, True)], d


# --- a peer with standard services only (BlueZ's example GATT server)

@check("example-info")
def example_info(path, name):
    """`info --json` of BlueZ's example peripheral: battery and heart rate, no protocol v1, a
    battery level 0-100, and its GAP name NAME as its model."""
    d = tail(path)
    assert "protocol-v1" not in d["services"] and {"battery", "heart-rate"} <= set(d["services"]), d["services"]
    assert 0 <= d["battery"]["level"] <= 100, d
    assert d["model"] == name != "", (d["model"], name)
    print("services " + ", ".join(d["services"]) + f" / battery {d['battery']['level']} %")


@check("hr-watch-example")
def hr_watch_example(path, address):
    """`hr watch --count 3 --json` on the example server: 3 samples of ADDRESS, 90-130 bpm, contact."""
    samples = lines(path)
    print("heart rate " + ", ".join(str(s["bpm"]) for s in samples) + " bpm")
    assert len(samples) == 3 and all(90 <= s["bpm"] <= 130 and s["sensorContact"] == "detected" and s["watch"] == address for s in samples)


@check("hr-count-since")
def hr_count_since(path, since):
    """Prints how many samples of `hr history --json` (PATH - reads stdin) are at epoch second
    SINCE or later."""
    since = datetime.datetime.fromtimestamp(int(since), datetime.timezone.utc)
    source = sys.stdin if path == "-" else open(path)
    print(sum(1 for line in source if line.startswith("{")
              and datetime.datetime.fromisoformat(json.loads(line)["time"].replace("Z", "+00:00")) >= since))


# --- NPK

@check("npk-info")
def npk_info(path):
    """`info --json` is the simulated NPK watch's: model, dialect npk, 8 alarms, battery 76 %."""
    d = tail(path)
    assert d["model"] == "NPK Simulator" and d["dialect"] == "npk" and alarm_limits(d)[0] == 8, d
    assert d["battery"]["level"] == 76, d


@check("npk-info-remembered")
def npk_info_remembered(path):
    """`info --json` without --dialect speaks NPK (remembered by pair)."""
    d = tail(path)
    assert d["dialect"] == "npk" and d["model"] == "NPK Simulator", d


@check("npk-alarms-initial")
def npk_alarms_initial(path):
    """`alarms get --json` shows the simulated NPK watch's own Work alarm at 06:45, workdays."""
    a = whole(path)["alarms"]
    assert [(x["time"], x["label"], x["repeat"]) for x in a] == [("06:45", "Work", ["mon", "tue", "wed", "thu", "fri"])], a


@check("npk-alarms")
def npk_alarms(path):
    """`alarms get --json` returns the 07:00 Gym everyday alarm `alarms set` wrote."""
    a = whole(path)["alarms"]
    assert len(a) == 1 and a[0]["time"] == "07:00" and a[0]["label"] == "Gym" and len(a[0]["repeat"]) == 7, a


@check("npk-resumed")
def npk_resumed(path, truth_path):
    """The NPK sync after the lost link started from the cursor (fetched some, fewer than the
    whole ground truth) and asked again after the corrupted day."""
    d = tail(path)
    assert d["reconnects"] >= 1 and 0 < d["fetched"] < len(json.load(open(truth_path))), d
    print("from", d["from"], "-", d["fetched"], "records, asked again", d["reconnects"], "times")


@check("npk-daemon-info")
def npk_daemon_info(path):
    """`info --json` through the daemon is the NPK watch's: model, dialect npk (Watch2.Dialect),
    limits 8/63/0, a battery level."""
    d = tail(path)
    assert d["model"] == "NPK Simulator" and d["dialect"] == "npk" and alarm_limits(d) == (8, 63, 0) and d["battery"]["level"] > 0, d


# --- QRing

@check("qring-info")
def qring_info(path, name):
    """`info --json` is the simulated ring's: model NAME, dialect qring, firmware, Device
    Information's hardware revision, no alarms, battery 64 %."""
    d = tail(path)
    assert d["model"] == name and d["dialect"] == "qring" and d["firmware"] == "R02_3.00.06_240523", d
    assert d["deviceInformation"]["hardwareRevision"] == "R02_V3.0" and alarm_limits(d)[0] == 0, d
    assert d["battery"]["level"] == 64, d


@check("qring-sync-stored")
def qring_sync_stored(path):
    """The ring's 7-day sync stored every record it fetched (some) and more than 6 × 280
    heart-rate samples, without a heart-rate error."""
    d = tail(path)
    assert d["fetched"] == d["stored"] > 0 and d["heartRateStored"] > 6 * 280 and d.get("heartRateError") is None, d


@check("garmin-sync-stored")
def garmin_sync_stored(path):
    """The watch's 7-day sync stored some records and more than 6 × 280 heart-rate samples,
    without a heart-rate error; every record it fetched when it reconnected once (the fault's cut,
    which comes before any sleep file). A further reconnect can come after sleep files were read
    and stored but not yet archived: the next link reads them again, and the store keeps each
    record once (fetched > stored); the journey's truth comparison then says whether the store
    holds exactly the watch's nights."""
    d = tail(path)
    assert d["stored"] > 0 and d["heartRateStored"] > 6 * 280 and d.get("heartRateError") is None, d
    assert d["fetched"] == d["stored"] if d["reconnects"] <= 1 else d["fetched"] >= d["stored"], d


@check("qring-sync-nothing-new")
@check("sync-nothing-new")
def qring_sync_nothing_new(path):
    """A second sync stored no sleep record and no heart-rate sample."""
    d = tail(path)
    assert d["stored"] == 0 and d["heartRateStored"] == 0, d


@check("garmin-ble-read")
def garmin_ble_read(path, model, firmware, truth_path, battery, request_refused):
    """garmin-ble's steps (scripts/garmin/garmin_ble_steps.py) read the watch's DEVICE_INFORMATION
    (MODEL, FIRMWARE), its battery through PROTOBUF (BATTERY percent, status ok; it may have had
    no answer only when the watch refused garmin-ble's battery request, REQUEST_REFUSED > 0: the
    24-byte frame goes in two 20-byte slices, which EATT can reorder and garmin-ble's own
    acknowledgements, written from other tasks, can come between; docs/testing.md), a time
    request after its sync_time was answered, and three live heart rates, each a bpm of the
    watch's history (TRUTH: --heart-rate-truth)."""
    d = tail(path)
    bpms = {s["bpm"] for s in json.load(open(truth_path))}
    assert d["model"] == model and d["firmware"] == firmware and d["timeAnswered"] is True, d
    assert d["battery"] == {"percent": int(battery), "status": "ok"} or (int(request_refused) > 0 and d["battery"] is None), d
    assert len(d["heartRates"]) == 3 and all(rate in bpms for rate in d["heartRates"]), d
    read = f"{d['battery']['percent']} % ({d['battery']['status']})" if d["battery"] else "no answer (the watch refused its broken request)"
    print(f"garmin-ble read {d['name']}: model {d['model']}, firmware {d['firmware']}, battery {read}; "
          f"its time answer taken; live heart rate {d['heartRates']}")


@check("hr-watch-truth")
def hr_watch_truth(path, truth_path, count):
    """`hr watch --count COUNT --json` printed COUNT readings, each a bpm of the watch's history (TRUTH)."""
    bpms = {s["bpm"] for s in json.load(open(truth_path))}
    got = [d["bpm"] for d in lines(path)]
    assert len(got) == int(count) and all(rate in bpms for rate in got), got
    print(f"hr watch read {got}, each a heart rate of the watch's history")


@check("hr-equals-truth")
def hr_equals_truth(truth_path, history_path, since_iso):
    """`hr history --json` from SINCE is exactly the watch's (non-empty) heart-rate log (--heart-rate-truth), none twice."""
    since = epoch(since_iso)
    want = {(s["time"], s["bpm"]) for s in json.load(open(truth_path)) if s["time"] >= since}
    got = [(epoch(d["time"]), d["bpm"]) for d in lines(history_path)]
    dups = len(got) - len(set(got))
    got = set(got)
    print(f"the watch's log {len(want)} samples since {since_iso}; stored {len(got)}; missing {len(want - got)}; extra {len(got - want)}; duplicated {dups}")
    assert want and want == got and not dups


@check("hr-watch-ring")
def hr_watch_ring(path):
    """`hr watch --count 2 --json` printed the ring's first two real-time readings, 67 and 74."""
    samples = lines(path)
    print("heart rate " + ", ".join(str(s["bpm"]) for s in samples) + " bpm")
    assert [s["bpm"] for s in samples] == [67, 74]


@check("qring-monitors")
def qring_monitors(path):
    """`monitor get --json`: the heart-rate log on every 10 min all day, stress on, SpO2 still on."""
    m = {x["type"]: x["schedule"] for x in tail(path)["monitors"]}
    h = m["heartRate"]
    assert (h["enabled"], h["intervalMinutes"], h["startMinute"], h["endMinute"]) == (True, 10, 0, 1440) and m["stress"]["enabled"] and m["spo2"]["enabled"], m


@check("qring-hr-log-interval")
def qring_hr_log_interval(path, minutes):
    """`monitor get --json`: the heart-rate log on, every MINUTES minutes."""
    h = [x for x in tail(path)["monitors"] if x["type"] == "heartRate"][0]["schedule"]
    assert (h["enabled"], h["intervalMinutes"]) == (True, int(minutes)), h


@check("colmi-hr-log")
def colmi_hr_log(colmi_path, truth_path, stored_path, day):
    """colmi-r02-client's heart-rate log of DAY (its "HH:MM, bpm" lines), the ring's ground truth
    of that day (all 288 five-minute readings) and what tsgateway stored are the same."""
    local = lambda t: datetime.datetime.fromtimestamp(t).astimezone()
    colmi = {(m.group(1), int(m.group(2))) for m in re.finditer(r"^(\d\d:\d\d), (\d+)$", open(colmi_path).read(), re.M)}
    truth = {(local(s["time"]).strftime("%H:%M"), s["bpm"]) for s in json.load(open(truth_path)) if str(local(s["time"]).date()) == day}
    stored = set()
    for d in lines(stored_path):
        t = datetime.datetime.fromisoformat(d["time"].replace("Z", "+00:00")).astimezone()
        if str(t.date()) == day:
            stored.add((t.strftime("%H:%M"), d["bpm"]))
    print(f"colmi-r02-client read {len(colmi)} readings of {day}; the ring's ground truth {len(truth)}; tsgateway stored {len(stored)}; "
          f"colmi vs truth: missing {len(truth - colmi)}, extra {len(colmi - truth)}; tsgateway vs colmi: differ in {len(stored ^ colmi)}")
    assert len(truth) == 288 and colmi == truth == stored


@check("colmi-steps")
def colmi_steps(path, truth_path):
    """colmi_steps.py's quarter-hours of today (its last JSON line) equal the ring's steps ground
    truth in order, and its parser printed each ("Details:" lines)."""
    text = open(path).read().splitlines()
    got = [(q["year"], q["month"], q["day"], q["time_index"], q["steps"], q["calories"], q["distance"])
           for q in json.loads([l for l in text if l.startswith("{")][-1])["quarters"]]
    truth = json.load(open(truth_path))
    year, month, day = map(int, truth["day"].split("-"))
    want = [(year, month, day, q["quarter"], q["steps"], q["calories"], q["distanceMeters"]) for q in truth["quarters"]]
    printed = sum(l.startswith("Details:") for l in text)
    print(f"colmi-r02-client parsed {len(got)} quarter-hours of {truth['day']} ({printed} printed by its parser), {sum(g[4] for g in got)} steps; "
          f"the ring's ground truth {len(want)} quarter-hours, {sum(w[4] for w in want)} steps; differ in {len(set(got) ^ set(want))}")
    assert got == want and printed == len(got)


# --- figures (measurements printed into figures.txt; the sync's own output must parse)

def sync_figure(path, wall):
    text = open(path).read()
    d = json.loads(text[text.index("{"):text.rindex("}") + 1])
    first = re.search(r"link open after (\d+) ms, first byte after (\d+) ms", text)
    mtu = re.search(r"MTU (\d+)", text)
    return d, first, mtu, float(wall)


@check("figure-v1-sync")
def figure_v1_sync(path, wall, days, mode):
    """The figures line of a v1 DAYS-day sync that took WALL seconds."""
    d, first, mtu, wall = sync_figure(path, wall)
    print(f"{mode:>4}  {days:>2}-day sync: {d['fetched']} records in {wall:.2f} s = {d['fetched'] / wall:.0f} records/s (whole command); "
          f"link open {first.group(1)} ms, first byte {first.group(2)} ms after connect; ATT MTU {mtu.group(1)}")


@check("figure-npk-sync")
def figure_npk_sync(path, wall, mode):
    """The figures line of NPK's 90-day sync that took WALL seconds."""
    d, first, mtu, wall = sync_figure(path, wall)
    print(f"{mode:>4}  npk 90-day sync: {d['fetched']} records in {wall:.2f} s = {d['fetched'] / wall:.0f} records/s (whole command), "
          f"asked again {d['reconnects']}x; link open {first.group(1)} ms, first byte {first.group(2)} ms after connect; ATT MTU {mtu.group(1)}")


def sleep_and_heart_rate_figure(name, path, wall, mode):
    """The figures line of NAME's 7-day sync (sleep records and heart-rate samples) that took WALL seconds."""
    d, first, mtu, wall = sync_figure(path, wall)
    link = f"link open {first.group(1)} ms, first byte {first.group(2)} ms after connect" if first else "link timings not reported"
    print(f"{mode:>4}  {name} 7-day sync: {d['fetched']} sleep records and {d['heartRateFetched']} heart-rate samples in {wall:.2f} s (whole command); "
          f"{link}; ATT MTU {mtu.group(1) if mtu else '?'}")


@check("figure-qring-sync")
def figure_qring_sync(path, wall, mode):
    """The figures line of the ring's 7-day sync that took WALL seconds."""
    sleep_and_heart_rate_figure("qring", path, wall, mode)


@check("figure-huami-sync")
def figure_huami_sync(path, wall, mode):
    """The figures line of the Huami band's 7-day sync that took WALL seconds."""
    sleep_and_heart_rate_figure("huami", path, wall, mode)


@check("miband2-vs-band")
def miband2_vs_band(steps_path, sim_log):
    """What miband2 0.1.1 returned (scripts/e2e/miband2_steps.py's JSON lines) is what the simulated
    band says it did (its `band: …` lines): the wrong key refused and ours accepted, the clock set
    to the time sent and read back, the battery level, the alarms in the band's table, and the one-off
    heart-rate reading."""
    got = {line["step"]: line for line in lines(steps_path)}
    band = [line.split("band: ", 1)[1].strip() for line in open(sim_log) if "band: " in line]
    start = next((line for line in open(sim_log) if "advertising on" in line), "")
    def said(text):
        assert text in band, f"the band never said \"{text}\"; it said {band}"
    missing = {"auth-wrong-key", "auth", "set-datetime", "get-datetime", "get-battery", "set-regular-alarm",
               "set-onetime-alarm", "unset-alarm", "request-heartbeat"} - set(got)
    assert not missing, f"miband2 did not get through {sorted(missing)} (its output above)"
    assert got["auth-wrong-key"]["status"] == "KEY_MISMATCH", f"miband2's auth with a wrong key: {got['auth-wrong-key']['status']}"
    said("auth refused: not the band's key")
    assert got["auth"]["status"] == "AUTH_OK", f"miband2's auth with the band's key: {got['auth']['status']}"
    said("auth accepted")
    said("clock set to 2026-01-02 03:04:05 +00:00")
    read = datetime.datetime.fromisoformat(got["get-datetime"]["read"])
    assert datetime.datetime(2026, 1, 2, 3, 4, 5) <= read < datetime.datetime(2026, 1, 2, 3, 5, 5), f"get_datetime read {read}, set 2026-01-02T03:04:05"
    level = re.search(r"battery (\d+) %", start)
    assert level, f"the band's start line names no battery level: {start}"
    assert got["get-battery"]["level"] == int(level.group(1)) and got["get-battery"]["status"] == "normal", \
        f"get_battery: {got['get-battery']}, the band holds {level.group(1)} %, not charging"
    said("alarm slot 2: 07:30 Mon,Fri, on, no snooze")
    said("alarm slot 3: 22:15 once, on, no snooze")
    said("alarm slot 4: cleared")
    bpm = got["request-heartbeat"]["bpm"]
    said(f"heart rate measured: {bpm} bpm")
    print(f"miband2 0.1.1: wrong key refused, key accepted; clock {read.isoformat()} read back; battery {level.group(1)} %; "
          f"alarms 2 (07:30 Mon,Fri) and 3 (22:15 once) set, 4 cleared; heart rate {bpm} bpm — each as the band says")
# --- Huami (the simulated band, tsgateway's own central)

def band_said(sim_log):
    """The simulated band's `band: …` lines (what the central changed or read on it)."""
    return [line.split("band: ", 1)[1].strip() for line in open(sim_log) if "band: " in line]


def band_start(sim_log):
    """Model, firmware and battery level of the band's last start line."""
    starts = [line for line in open(sim_log) if "advertising on" in line]
    assert starts, "the band never said it advertises"
    m = re.search(r"simulated band (.+?) advertising on .*, firmware (\S+), battery (\d+) %", starts[-1])
    assert m, f"the band's start line names no model, firmware and battery: {starts[-1]}"
    return m.group(1), m.group(2), int(m.group(3))


@check("huami-info")
def huami_info(path, sim_log):
    """`info --json` is the simulated band's: the model, firmware and battery level its start line
    names, dialect huami, 10 alarm slots and no labels."""
    d = tail(path)
    model, firmware, level = band_start(sim_log)
    got = (d["model"], d["dialect"], d["firmware"], d["battery"]["level"], alarm_limits(d)[0], alarm_limits(d)[1])
    assert got == (model, "huami", firmware, level, 10, 0), f"info {got}; the band: {(model, 'huami', firmware, level, 10, 0)}"
    print(f"info: {model}, firmware {firmware}, battery {level} %, 10 alarm slots, no labels — as the band says")


@check("huami-clock")
def huami_clock(sim_log, before, after):
    """The band's last `clock set to` (local time and offset) lies between BEFORE and AFTER (Unix
    seconds around `time sync`, a second either side) and carries this computer's offset then."""
    sets = [t[len("clock set to "):] for t in band_said(sim_log) if t.startswith("clock set to ")]
    assert sets, "the band never said its clock was set"
    clock = datetime.datetime.strptime(sets[-1], "%Y-%m-%d %H:%M:%S %z")
    at = clock.timestamp()
    assert int(before) - 1 <= at <= int(after) + 1, f"the band's clock was set to {sets[-1]}, not between {before} and {after}"
    local = datetime.datetime.fromtimestamp(at).astimezone().utcoffset()
    assert clock.utcoffset() == local, f"the band's zone is {clock.utcoffset()}, this computer's {local}"
    print(f"the band's clock set to {sets[-1]}, {at - int(before):.0f} s after the command started")


HUAMI_ALARMS = [(0, "07:00", True, ["mon", "tue", "wed", "thu", "fri"]), (9, "22:15", True, [])]


@check("alarms-empty")
def alarms_empty(path):
    """`alarms get --json` gave an empty alarm table."""
    a = whole(path)["alarms"]
    assert a == [], a


@check("huami-alarms")
def huami_alarms(path, sim_log):
    """`alarms get --json` returns slot 0 07:00 workdays and slot 9 22:15 once, both on, without
    labels, and the band says it was given exactly these (its `alarm slot N: …` lines)."""
    a = whole(path)["alarms"]
    got = [(x["slot"], x["time"], x["enabled"], x["repeat"]) for x in a]
    assert got == HUAMI_ALARMS and all(not x.get("label") for x in a), a
    said = band_said(sim_log)
    for line in ("alarm slot 0: 07:00 Mon,Tue,Wed,Thu,Fri, on, no snooze", "alarm slot 9: 22:15 once, on, no snooze"):
        assert line in said, f"the band never said \"{line}\"; it said {[t for t in said if t.startswith('alarm')]}"
    print("alarms: slot 0 07:00 workdays, slot 9 22:15 once — read back, and as the band holds them")


@check("huami-monitors")
def huami_monitors(path, sim_log):
    """`monitor get --json`: heart rate all day every 15 minutes, heart rate during sleep off, as
    `monitor set` wrote them and the band says it took them."""
    m = {x["type"]: x["schedule"] for x in tail(path)["monitors"]}
    h = m["heartRate"]
    assert (h["enabled"], h["intervalMinutes"], h["startMinute"], h["endMinute"]) == (True, 15, 0, 1440), m
    assert not m["sleep"]["enabled"], m
    said = band_said(sim_log)
    for line in ("heart rate measured every 15 minutes (0: off)", "heart rate during sleep off"):
        assert line in said, f"the band never said \"{line}\""
    print("monitors: heart rate every 15 min all day, during sleep off — read back, and as the band took them")


@check("huami-sync-stored")
def huami_sync_stored(path):
    """The band's sync stored every sleep record it fetched (some) and every heart-rate sample it
    fetched (some), without a heart-rate error."""
    d = tail(path)
    assert d["fetched"] == d["stored"] > 0 and d["heartRateFetched"] == d["heartRateStored"] > 0 and d.get("heartRateError") is None, d
    print(f"stored {d['stored']} sleep records and {d['heartRateStored']} heart-rate samples from {d['from']}")


@check("huami-resumed")
def huami_resumed(path):
    """The sync whose link the band cut went on after reconnecting (reconnects at least 1) and
    stored what it fetched, sleep records and heart rate (some of each), without a heart-rate error."""
    d = tail(path)
    assert d["reconnects"] >= 1 and d["fetched"] == d["stored"] > 0 and d["heartRateFetched"] == d["heartRateStored"] > 0, d
    assert d.get("heartRateError") is None, d
    print(f"reconnected {d['reconnects']} time(s); stored {d['stored']} sleep records and {d['heartRateStored']} heart-rate samples")


@check("no-sleep-records")
def no_sleep_records(export_path):
    """`sleep export --format json` holds no records (a sync that failed stored none)."""
    records = json.load(open(export_path))["records"]
    assert not records, f"{len(records)} records stored"


# --- probe and report-problem

@check("probe-identifies")
def probe_identifies(path, address, verdict, dialect=None):
    """`probe --json` of ADDRESS ends in VERDICT (identified, standard-services-only, unknown)
    with DIALECT, a GATT table, and a next step naming `pair ADDRESS --dialect DIALECT`."""
    d = tail(path)
    assert d["address"] == address, d
    assert d["verdict"] == verdict, {k: d.get(k) for k in ("verdict", "dialect", "attempts", "next")}
    assert d.get("dialect") == dialect, {k: d.get(k) for k in ("verdict", "dialect", "attempts")}
    assert d["services"], "no GATT table"
    if dialect:
        assert d["next"].startswith(f"tsgateway pair {address} --dialect {dialect}"), d["next"]
    answered = [a for a in d["attempts"] if a.get("answer")]
    said = "; ".join(f"{a['dialect']}: {a['answer']['model']} {a['answer']['firmware']}" for a in answered) or "no dialect answered"
    print(f"probe: {verdict} {dialect or ''} ({len(d['services'])} services; {said})")


@check("report-archive")
def report_archive(path, address):
    """The report-problem archive at PATH is 0600, its MANIFEST lists version, system, BlueZ,
    adapter, probe, command, log and the decoded exchange, the raw capture is left out, and no
    Bluetooth address but ADDRESS appears in it."""
    import os
    import stat
    import tarfile
    mode = stat.S_IMODE(os.stat(path).st_mode)
    assert mode == 0o600, oct(mode)
    with tarfile.open(path) as archive:
        files = {m.name.split("/", 1)[1]: archive.extractfile(m).read().decode("utf-8", "replace") for m in archive.getmembers() if m.isfile()}
    manifest = files["MANIFEST"]
    for held in ("version.txt", "system.txt", "bluez.txt", "adapter.txt", "probe.json", "command.txt", "log.txt", "exchange.txt"):
        assert f"\n  {held}  " in manifest, f"MANIFEST does not list {held}:\n{manifest}"
        assert held in files, f"the archive lacks {held}"
    assert "capture.btsnoop" not in files and "capture.btsnoop  the raw capture is left out" in manifest, manifest
    probe = json.loads(files["probe.json"])
    assert probe["verdict"] == "identified", probe
    others = {a.upper() for text in files.values() for a in re.findall(r"(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}", text)} - {address.upper()}
    assert not others, f"addresses other than the watch's: {others}"
    frames = files["exchange.txt"].count("\n")
    print(f"report-problem: {len(files)} files, 0600, {frames} decoded frame(s) without payloads, no other address")


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help", "--list"):
        for name, function in CHECKS.items():
            print(f"{name}: {' '.join((function.__doc__ or '').split())}")
        return 0 if len(argv) >= 2 else 64
    name, args = argv[1], argv[2:]
    if name not in CHECKS:
        print(f"checks.py: no check named {name} (try --list)", file=sys.stderr)
        return 64
    try:
        CHECKS[name](*args)
    except AssertionError as error:
        print(f"checks.py {name}: does not hold: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
