#!/usr/bin/env python3
"""Generate the wire-protocol v1 and v1.1 test vectors (protocol-spec/v1/vectors/*.json).

The codec is scripts/v1/v1_codec.py, a second, independent implementation of
protocol-spec/v1/wire-protocol.md in Python (standard library only), written from the two spec
documents alone. The Swift codec's tests read the files this script writes, so a
disagreement between the two exposes a bug in one of them.

    python3 scripts/v1/v1_vectors.py          # (re)write valid.json, invalid.json, stream.json
    python3 scripts/v1/v1_vectors.py --check  # exit 1 if the files on disk differ

Layout of this file: sample data, the vectors themselves (each checked with protocol_v1's
decoder: round trip for valid vectors, the expected error for invalid ones; both readings of
the reassembler's timeout for the streams; version 1.1's in valid_vectors_v11 /
invalid_vectors_v11), and the writer.
"""

import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))  # scripts/lib: vector_files
import vector_files  # noqa: E402  (writing and --check of the vector files)
from v1_codec import *  # noqa: E402,F401,F403  (the codec's names, as the vectors use them)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTOR_DIR = os.path.join(ROOT, "protocol-spec", "v1", "vectors")

# --------------------------------------------------------------------------- sample data

T0 = 1763000000  # 2025-11-13 02:13:20 UTC


def alarm(slot, enabled, snooze, hour, minute, repeat, label, remark):
    return {"slot": slot, "enabled": enabled, "snooze": snooze, "hour": hour,
            "minute": minute, "repeat": repeat, "label": label, "remark": remark}


def config(type_, sched_on, start, end, interval, alert_on, upper, lower):
    return {"type": type_,
            "schedule": {"enabled": sched_on, "startMinute": start, "endMinute": end,
                         "intervalMinutes": interval},
            "alert": {"enabled": alert_on, "upper": upper, "lower": lower}}


def record(stage, start, duration):
    return {"stage": stage, "start": start, "duration": duration}


def error_body(status, command, sequence, message):
    return {"status": status, "command": command, "sequence": sequence, "message": message}


def device_info(model, firmware, max_alarms, label_max, remark_max, rule, naps, deletes, live,
                types):
    return {"model": model, "firmware": firmware, "capabilities": {
        "maxAlarms": max_alarms, "labelMaxBytes": label_max, "remarkMaxBytes": remark_max,
        "statisticsRule": rule, "supportsNaps": naps, "deletesSyncedRecords": deletes,
        "supportsLiveSleep": live, "monitorTypes": types}}


A_WORK = alarm(0, True, True, 7, 0, 0x1F, "Work", "Morning alarm")
A_WEEKEND = alarm(1, True, False, 9, 30, 0x60, "Wochenende", "Brötchen holen")
A_MED = alarm(2, True, True, 8, 15, 0x7F, "Medizin 💊", "Blutdruck-Tablette")
A_CN = alarm(3, False, False, 21, 45, 0x7F, "吃药", "饭后半小时")
A_ONCE = alarm(4, True, False, 5, 40, 0x00, "Flight", "Terminal 2, gate B")
A_EMPTY = alarm(9, True, True, 23, 59, 0x15, "", "")
A_LABEL32 = alarm(10, True, False, 12, 0, 0x1F, "Physiotherapie & Dehnübungen 3x", "")
A_PILLS32 = alarm(11, True, True, 20, 0, 0x7F, "💊" * 8, "💊")
A_REMARK255 = alarm(255, False, True, 0, 0, 0x41, "max remark", ("Remark " * 37)[:255])
assert len(A_LABEL32["label"].encode()) == 32
assert len(A_PILLS32["label"].encode()) == 32
assert len(A_REMARK255["remark"].encode()) == 255


def utf8_exact(text, size):
    """`text` repeated and cut at a character boundary, padded with '.' to `size` bytes."""
    out = ""
    for ch in text * (size // max(1, len(text)) + 2):
        if len((out + ch).encode()) > size:
            break
        out += ch
    out += "." * (size - len(out.encode()))
    assert len(out.encode()) == size
    return out


MESSAGE_200 = utf8_exact("slot 3: label is 40 bytes, limit 32 – Grenze überschritten; 标签太长. ", 200)

ALL_COMMAND_IDS = sorted(V1_COMMAND_IDS)


def sleep_records(rng, count, start):
    """`count` consecutive records cycling through all four stages."""
    out, t = [], start
    cycle = ["awake", "light", "deep", "light", "rem"]
    for i in range(count):
        stage = cycle[i % len(cycle)]
        duration = rng.randrange(60, 3600) if stage != "awake" else rng.randrange(30, 600)
        out.append(record(stage, t, duration))
        t += duration
    return out


# --------------------------------------------------------------------------- valid vectors

def valid_vectors():
    rng = random.Random(20251113)
    vs = []

    def v(name, kind, sequence, body):
        vs.append((name, kind, sequence, body))

    # HELLO
    v("central greets the watch", "hello.request", 0,
      {"minVersion": 1, "maxVersion": 1, "attMTU": 247, "maxPayload": 2048})
    v("hello with the smallest MTU and payload", "hello.request", 0,
      {"minVersion": 1, "maxVersion": 1, "attMTU": 23, "maxPayload": 256})
    v("hello from a central speaking versions 1 to 3, MTU 517", "hello.request", 255,
      {"minVersion": 1, "maxVersion": 3, "attMTU": 517, "maxPayload": 512})
    v("watch answers hello with every command of section 6", "hello.response", 0,
      {"version": 1, "maxPayload": 2048, "maxWindow": 16, "commands": ALL_COMMAND_IDS})
    v("watch without live sleep, smallest limits", "hello.response", 1,
      {"version": 1, "maxPayload": 256, "maxWindow": 1,
       "commands": [c for c in ALL_COMMAND_IDS if c not in (0x0040, 0x0041)]})
    v("watch listing a vendor extension command", "hello.response", 200,
      {"version": 1, "maxPayload": 1024, "maxWindow": 32,
       "commands": ALL_COMMAND_IDS + [0x8001]})

    # DEVICE_INFO
    v("device info request", "deviceInfo.request", 1, {})
    v("device info request, sequence 255", "deviceInfo.request", 255, {})
    v("full-featured watch", "deviceInfo.response", 1,
      device_info("TS-W10", "2.4.1", 10, 32, 64, 1, True, False, True, list(MONITOR_TYPES)))
    v("watch without remarks and without monitors", "deviceInfo.response", 2,
      device_info("TS-B2", "1.0.0", 5, 16, 0, 0, False, True, False, []))
    v("watch without alarms, rule 3, 32-byte model", "deviceInfo.response", 77,
      device_info("TopStep Fitness Band Pro Max 2 X", "3.10.12-beta+build.20251113",
                  0, 0, 255, 3, True, True, True, ["heartRate", "sleep"]))
    v("watch with UTF-8 model and some monitors", "deviceInfo.response", 128,
      device_info("Uhr Ü7", "0.9", 255, 20, 100, 2, False, False, False,
                  ["spo2", "stress", "temperature"]))

    # TIME_SET
    v("time with Berlin zone", "timeSet.request", 2,
      {"utc": 1763600000, "utcOffset": 3600, "zone": "Europe/Berlin"})
    v("time without zone", "timeSet.request", 3, {"utc": 1763000123, "utcOffset": 0})
    v("time with negative offset", "timeSet.request", 4,
      {"utc": 1763012345, "utcOffset": -18000, "zone": "America/New_York"})
    v("time with half-hour offset", "timeSet.request", 5,
      {"utc": 1763020000, "utcOffset": 19800, "zone": "Asia/Kolkata"})
    v("time with offset -64800, no zone", "timeSet.request", 6,
      {"utc": 1763030000, "utcOffset": -64800})
    v("time with offset +64800 and a 64-byte zone", "timeSet.request", 7,
      {"utc": 1763040000, "utcOffset": 64800, "zone": "Etc/" + "Z" * 60})
    v("time set done", "timeSet.response", 2, {})

    # BATTERY
    v("battery request", "battery.request", 8, {})
    v("battery discharging", "battery.response", 8, {"level": 87, "state": "discharging"})
    v("battery charging", "battery.response", 9, {"level": 42, "state": "charging"})
    v("battery full", "battery.response", 10, {"level": 100, "state": "full"})
    v("battery unknown, level 0", "battery.response", 11, {"level": 0, "state": "unknown"})

    # ALARMS
    v("alarms get request", "alarmsGet.request", 12, {})
    v("empty alarm table", "alarmsGet.response", 12, {"alarms": []})
    v("one alarm", "alarmsGet.response", 13, {"alarms": [A_WORK]})
    v("several alarms with UTF-8 labels", "alarmsGet.response", 14,
      {"alarms": [A_WORK, A_WEEKEND, A_MED, A_CN, A_ONCE]})
    v("clear all alarms", "alarmsSet.request", 0, {"alarms": []})
    v("set one alarm, workdays", "alarmsSet.request", 3, {"alarms": [A_WORK]})
    v("set several alarms: once, weekend, every day, multi-byte labels", "alarmsSet.request",
      255, {"alarms": [A_ONCE, A_WEEKEND, A_MED, A_CN]})
    v("set alarms with 32-byte labels, empty label and remark, 255-byte remark",
      "alarmsSet.request", 15, {"alarms": [A_LABEL32, A_PILLS32, A_EMPTY, A_REMARK255]})
    v("alarms set done", "alarmsSet.response", 15, {})
    v("alarm edited on the watch", "alarmsChanged.event", 0,
      {"origin": "watch", "alarms": [A_WORK, dict(A_MED, hour=8, minute=30)]})
    v("alarms set by another central", "alarmsChanged.event", 1,
      {"origin": "otherCentral", "alarms": [A_CN]})
    v("once alarm rang and turned off", "alarmsChanged.event", 2,
      {"origin": "onceAlarmFired", "alarms": [A_WORK, dict(A_ONCE, enabled=False)]})
    v("all alarms deleted on the watch", "alarmsChanged.event", 3,
      {"origin": "watch", "alarms": []})
    v("alarms changed acknowledged", "alarmsChanged.eventAck", 2, {})

    # MONITORS
    for i, t in enumerate(MONITOR_TYPES):
        v("monitor get " + t, "monitorGet.request", 20 + i, {"type": t})
    configs = [
        ("heart rate all day every 10 min, alert 45..120",
         config("heartRate", True, 0, 1440, 10, True, 120, 45)),
        ("SpO2 at night every 30 min, alert below 90",
         config("spo2", True, 0, 420, 30, True, 100, 90)),
        ("blood pressure daytime hourly", config("bloodPressure", True, 480, 1320, 60, True, 140, 90)),
        ("stress, alert disabled", config("stress", True, 540, 1080, 30, False, 80, 0)),
        ("temperature every 5 min, tenths of a degree",
         config("temperature", True, 0, 1440, 5, True, 380, 350)),
        ("sleep monitoring, limits unused", config("sleep", True, 0, 600, 5, False, 0, 0)),
    ]
    for i, (name, c) in enumerate(configs):
        v("monitor set " + name, "monitorSet.request", 30 + i, c)
    v("monitor set: inverted limits are fine with the alert disabled", "monitorSet.request", 36,
      config("heartRate", False, 0, 1440, 10, False, 40, 120))
    v("monitor set: equal limits with the alert disabled", "monitorSet.request", 37,
      config("spo2", False, 0, 1440, 60, False, 95, 95))
    v("monitor set: negative limits (i16)", "monitorSet.request", 38,
      config("temperature", False, 1439, 1440, 1440, True, -10, -300))
    v("monitor set: shortest window, interval 5", "monitorSet.request", 39,
      config("stress", True, 0, 1, 5, True, 1, 0))
    v("monitor set done", "monitorSet.response", 30, {})
    v("monitor get response heart rate", "monitorGet.response", 20, configs[0][1])
    v("monitor get response temperature", "monitorGet.response", 24, configs[4][1])
    v("monitor get response sleep", "monitorGet.response", 25, configs[5][1])

    # SLEEP
    v("sleep query with end", "sleepQuery.request", 40,
      {"start": 1763000000, "end": 1763600000, "window": 8})
    v("sleep query without end", "sleepQuery.request", 41, {"start": 1762900000, "window": 32})
    v("sleep query from 0, window 1", "sleepQuery.request", 42,
      {"start": 0, "end": 1, "window": 1})
    v("sleep query answer", "sleepQuery.response", 40,
      {"transferId": 7, "total": 1260, "recordsPerPage": 67, "window": 8})
    v("sleep query answer, nothing to send", "sleepQuery.response", 41,
      {"transferId": 8, "total": 0, "recordsPerPage": 33, "window": 4})
    v("sleep query answer, transfer 65535, one record", "sleepQuery.response", 42,
      {"transferId": 65535, "total": 1, "recordsPerPage": 255, "window": 1})

    night = sleep_records(rng, 255, T0 - 6 * 3600)
    v("sleep page with one record, last", "sleepPage.stream", 0,
      {"transferId": 9, "page": 0, "last": True,
       "records": [record("deep", T0, 1800)]})
    v("sleep page with 33 records, all four stages", "sleepPage.stream", 1,
      {"transferId": 7, "page": 0, "last": False, "records": night[:33]})
    v("sleep page with 67 records (two notifications at MTU 247)", "sleepPage.stream", 2,
      {"transferId": 7, "page": 1, "last": False, "records": night[33:100]})
    v("last sleep page with 100 records", "sleepPage.stream", 255,
      {"transferId": 7, "page": 18, "last": True, "records": night[:100]})
    v("sleep page with 255 records, largest page", "sleepPage.stream", 3,
      {"transferId": 300, "page": 65534, "last": True, "records": night})
    v("sleep page with extreme record values", "sleepPage.stream", 4,
      {"transferId": 1, "page": 2, "last": False,
       "records": [record("awake", 0, 1), record("rem", 0xFFFFFFFF, 65535),
                   record("light", T0, 0x01A5)]})
    v("page ack", "sleepPageAck.request", 43,
      {"transferId": 7, "nextExpected": 4, "retransmit": False})
    v("page ack with retransmit", "sleepPageAck.request", 44,
      {"transferId": 7, "nextExpected": 5, "retransmit": True})
    v("final page ack", "sleepPageAck.request", 45,
      {"transferId": 65535, "nextExpected": 65535, "retransmit": False})
    v("page ack, nothing received yet", "sleepPageAck.request", 46,
      {"transferId": 1, "nextExpected": 0, "retransmit": True})
    v("sleep commit", "sleepCommit.request", 47,
      {"start": 1763000000, "end": 1763600000, "count": 1260})
    v("sleep commit of an empty range", "sleepCommit.request", 48,
      {"start": 1763000000, "end": 1763000001, "count": 0})
    v("sleep commit answer, records deleted", "sleepCommit.response", 47, {"deleted": 1260})
    v("sleep commit answer, watch keeps records", "sleepCommit.response", 48, {"deleted": 0})
    v("sleep abort", "sleepAbort.request", 49, {"transferId": 7})
    v("sleep abort done", "sleepAbort.response", 49, {})

    # LIVE
    v("live subscribe", "liveSubscribe.request", 50, {"enable": True})
    v("live unsubscribe", "liveSubscribe.request", 51, {"enable": False})
    v("live subscribe done", "liveSubscribe.response", 50, {})
    v("fell asleep", "liveStage.event", 5,
      {"kind": "fellAsleep", "stage": "light", "time": 1763590000})
    v("stage changed to deep", "liveStage.event", 6,
      {"kind": "stageChanged", "stage": "deep", "time": 1763591200})
    v("stage changed to REM", "liveStage.event", 7,
      {"kind": "stageChanged", "stage": "rem", "time": 1763595000})
    v("woke up", "liveStage.event", 8, {"kind": "wokeUp", "stage": "awake", "time": 1763612000})
    v("live stage acknowledged", "liveStage.eventAck", 8, {})

    # ERROR
    v("error: alarm hour out of range", "error.response", 3,
      error_body("invalidValue", 0x0011, 3, "slot 3: hour 24 is out of range 0…23"))
    v("error: busy during a sleep transfer", "error.response", 60,
      error_body("busy", 0x0002, 60, "sleep transfer 7 running"))
    v("error: unknown command, empty message", "error.response", 61,
      error_body("unknownCommand", 0x0099, 61, ""))
    v("error: label limit, 200-byte message", "error.response", 62,
      error_body("limitExceeded", 0x0011, 62, MESSAGE_200))
    v("error: hello required", "error.response", 0,
      error_body("helloRequired", 0x0010, 0, "send HELLO first"))
    v("error: count mismatch", "error.response", 47,
      error_body("countMismatch", 0x0033, 47, "watch has 1259 records in range, central 1260"))
    for i, st in enumerate(["badLength", "unsupportedVersion", "notSupported",
                            "unknownTransfer", "internal"]):
        v("error status " + st, "error.response", 70 + i,
          error_body(st, [0x0001, 0x0001, 0x0020, 0x0032, 0x0033][i], 70 + i, st))
    v("NACK of a corrupt frame", "error.nack", 9,
      error_body("crcMismatch", 0x0011, 4, "CRC mismatch"))
    v("NACK naming an unknown command", "error.nack", 255,
      error_body("crcMismatch", 0xFFFF, 0, ""))
    valid_vectors_v11(v)
    return vs


# --------------------------------------------------------------------------- v1.1 vectors

A_SMART = dict(A_WORK, smart=30)
A_SMART_MAX = dict(A_MED, smart=255)
A_SMART_ONCE = dict(A_ONCE, smart=1)


def valid_vectors_v11(v):
    """Spec section 9: EXTENSIONS, alarm records with SMART, RING, ALARM_ALERT."""
    v("v1.1 watch lists EXTENSIONS, RING and ALARM_ALERT in hello", "hello.response", 0,
      {"version": 1, "maxPayload": 2048, "maxWindow": 16,
       "commands": sorted(V1_COMMAND_IDS + list(V11_COMMANDS.values()))})
    v("extensions: smart windows and alarm alerts wanted", "extensions.request", 1,
      {"wanted": ["smartWindows", "alarmAlerts"]})
    v("extensions: nothing wanted (turns both off)", "extensions.request", 2, {"wanted": []})
    v("extensions: a later central also asks for bits 2 and 7", "extensions.request", 3,
      {"wanted": ["smartWindows", "alarmAlerts", "bit2", "bit7"]})
    v("extensions enabled, smart windows up to 60 minutes", "extensions.response", 1,
      {"enabled": ["smartWindows", "alarmAlerts"], "maxSmartWindow": 60})
    v("extensions: alarm alerts only, no smart windows", "extensions.response", 2,
      {"enabled": ["alarmAlerts"], "maxSmartWindow": 0})
    v("extensions: smart windows up to 255 minutes, no alerts", "extensions.response", 3,
      {"enabled": ["smartWindows"], "maxSmartWindow": 255})
    v("extensions: nothing enabled", "extensions.response", 4,
      {"enabled": [], "maxSmartWindow": 0})
    v("set an alarm with a 30-minute smart window", "alarmsSet.request", 16,
      {"alarms": [A_SMART]})
    v("set alarms with and without smart windows (1 and 255 minutes)", "alarmsSet.request", 17,
      {"alarms": [A_SMART_ONCE, A_WEEKEND, A_SMART_MAX]})
    v("alarm table with a smart window", "alarmsGet.response", 18,
      {"alarms": [A_SMART, A_CN]})
    v("smart window edited on the watch", "alarmsChanged.event", 4,
      {"origin": "watch", "alarms": [dict(A_SMART, smart=45)]})
    v("once alarm with a smart window rang early and turned off", "alarmsChanged.event", 5,
      {"origin": "onceAlarmFired", "alarms": [dict(A_SMART_ONCE, enabled=False)]})
    v("ring now: the gateway's smart wake", "ring.request", 19,
      {"slot": 0, "reason": "smartWake"})
    v("ring slot 255 as a test", "ring.request", 20, {"slot": 255, "reason": "test"})
    v("ring answered: ringing", "ring.response", 19, {"result": "ringing"})
    v("ring answered: already ringing", "ring.response", 20, {"result": "alreadyRinging"})
    v("ring answered: already rang", "ring.response", 21, {"result": "alreadyRang"})
    t = 1763620860  # 2025-11-20 06:41 UTC
    v("alarm rings early in its smart window", "alarmAlert.event", 9,
      {"kind": "ringing", "slot": 0, "trigger": "smartWindow", "time": t, "snoozeMinutes": 0})
    v("alarm snoozed for 9 minutes", "alarmAlert.event", 10,
      {"kind": "snoozed", "slot": 0, "trigger": "smartWindow", "time": t + 60,
       "snoozeMinutes": 9})
    v("alarm rings again after the snooze", "alarmAlert.event", 11,
      {"kind": "ringing", "slot": 0, "trigger": "snoozeEnded", "time": t + 600,
       "snoozeMinutes": 0})
    v("alarm dismissed", "alarmAlert.event", 12,
      {"kind": "dismissed", "slot": 0, "trigger": "snoozeEnded", "time": t + 630,
       "snoozeMinutes": 0})
    v("alarm rings at its time", "alarmAlert.event", 13,
      {"kind": "ringing", "slot": 3, "trigger": "alarmTime", "time": t + 1140,
       "snoozeMinutes": 0})
    v("alarm rang unanswered until the watch stopped it", "alarmAlert.event", 14,
      {"kind": "timedOut", "slot": 3, "trigger": "alarmTime", "time": t + 1200,
       "snoozeMinutes": 0})
    v("ring from the gateway's smart wake", "alarmAlert.event", 15,
      {"kind": "ringing", "slot": 255, "trigger": "ringSmartWake", "time": t,
       "snoozeMinutes": 0})
    v("test ring dismissed", "alarmAlert.event", 16,
      {"kind": "dismissed", "slot": 1, "trigger": "ringTest", "time": t, "snoozeMinutes": 0})
    v("snoozed for 255 minutes", "alarmAlert.event", 17,
      {"kind": "snoozed", "slot": 1, "trigger": "alarmTime", "time": 0, "snoozeMinutes": 255})
    v("alarm alert acknowledged", "alarmAlert.eventAck", 9, {})


def invalid_vectors_v11(payload_case, E):
    """Spec section 9: what a v1.1 codec rejects."""
    smart = E("alarmsSet.request", {"alarms": [A_SMART]})
    payload_case("alarm with SMART and a window of 0", "alarmsSet.request",
                 smart[:-1] + b"\x00", "valueOutOfRange", sequence=16)
    payload_case("alarm with SMART but no window byte", "alarmsSet.request", smart[:-1],
                 "truncatedPayload", sequence=16)
    payload_case("alarm without SMART followed by a window byte", "alarmsSet.request",
                 set_byte(smart, 2, 0x03), "trailingBytes", sequence=16)
    payload_case("alarm table response with SMART window 0", "alarmsGet.response",
                 E("alarmsGet.response", {"alarms": [A_CN, dict(A_SMART, smart=0)]}),
                 "valueOutOfRange", sequence=18)
    payload_case("alarms changed with SMART window 0", "alarmsChanged.event",
                 E("alarmsChanged.event", {"origin": "watch", "alarms": [dict(A_SMART, smart=0)]}),
                 "valueOutOfRange")

    payload_case("extensions request of 0 bytes", "extensions.request", b"", "truncatedPayload")
    payload_case("extensions request of 2 bytes", "extensions.request", b"\x03\x00",
                 "trailingBytes")
    payload_case("extensions response enabling bit 2", "extensions.response", b"\x05\x3c",
                 "reservedBitsSet")
    payload_case("extensions response enabling bit 7", "extensions.response", b"\x80\x00",
                 "reservedBitsSet")
    payload_case("extensions response with smart windows of at most 0 minutes",
                 "extensions.response", b"\x01\x00", "valueOutOfRange")
    payload_case("extensions response with a maximum but no smart windows",
                 "extensions.response", b"\x02\x3c", "valueOutOfRange")
    payload_case("extensions response of 1 byte", "extensions.response", b"\x03",
                 "truncatedPayload")
    payload_case("extensions response of 3 bytes", "extensions.response", b"\x03\x3c\x00",
                 "trailingBytes")

    payload_case("ring reason 2", "ring.request", E("ring.request", {"slot": 0, "reason": 2}),
                 "valueOutOfRange")
    payload_case("ring reason 255", "ring.request", E("ring.request", {"slot": 0, "reason": 255}),
                 "valueOutOfRange")
    payload_case("ring request of 1 byte", "ring.request", b"\x00", "truncatedPayload")
    payload_case("ring request of 3 bytes", "ring.request", b"\x00\x00\x00", "trailingBytes")
    payload_case("ring result 3", "ring.response", b"\x03", "valueOutOfRange")
    payload_case("ring response without result", "ring.response", b"", "truncatedPayload")
    payload_case("RING with EVENT flag", None, b"\x00\x00", "unexpectedDirection",
                 command=0x0101, flags=FLAG_EVENT)

    al = {"kind": "ringing", "slot": 0, "trigger": "smartWindow", "time": 1763620860,
          "snoozeMinutes": 0}
    payload_case("alarm alert kind 4", "alarmAlert.event", E("alarmAlert.event", dict(al, kind=4)),
                 "valueOutOfRange")
    payload_case("alarm alert trigger 5", "alarmAlert.event",
                 E("alarmAlert.event", dict(al, trigger=5)), "valueOutOfRange")
    payload_case("alarm alert snoozed for 0 minutes", "alarmAlert.event",
                 E("alarmAlert.event", dict(al, kind="snoozed")), "valueOutOfRange")
    payload_case("alarm alert ringing with snooze minutes", "alarmAlert.event",
                 E("alarmAlert.event", dict(al, snoozeMinutes=9)), "valueOutOfRange")
    payload_case("alarm alert dismissed with snooze minutes", "alarmAlert.event",
                 E("alarmAlert.event", dict(al, kind="dismissed", snoozeMinutes=1)),
                 "valueOutOfRange")
    payload_case("alarm alert of 7 bytes", "alarmAlert.event", E("alarmAlert.event", al)[:7],
                 "truncatedPayload")
    payload_case("alarm alert of 9 bytes", "alarmAlert.event",
                 E("alarmAlert.event", al) + b"\x00", "trailingBytes")
    payload_case("ALARM_ALERT without EVENT flag", None, E("alarmAlert.event", al),
                 "unexpectedDirection", command=0x0102, flags=0)
    payload_case("alarm alert event ack with payload", "alarmAlert.eventAck", b"\x00",
                 "trailingBytes")


def build_valid():
    out = []
    for name, kind, sequence, body in valid_vectors():
        frame = frame_for(kind, sequence, body)
        dkind, dseq, dbody = decode_message(frame)
        assert (dkind, dseq) == (kind, sequence), (name, dkind, dseq)
        assert dbody == body, (name, dbody, body)
        # re-encode the decoded body: byte-exact round trip
        assert frame_for(dkind, dseq, dbody) == frame, name
        assert len(frame) <= HEADER_SIZE + MAX_PAYLOAD + CRC_SIZE
        out.append({
            "name": name,
            "kind": kind,
            "sequence": sequence,
            "body": dbody,  # decoder builds keys in the README's order
            "frame": frame.hex(),
            "fragments": {str(m): [c.hex() for c in fragment(frame, m)] for m in MTUS},
        })
    names = [v["name"] for v in out]
    assert len(names) == len(set(names)), "duplicate vector names"
    return out


# --------------------------------------------------------------------------- invalid vectors

def set_byte(data, offset, value):
    b = bytearray(data)
    b[offset] = value
    return bytes(b)


def set_bytes(data, offset, values):
    b = bytearray(data)
    b[offset:offset + len(values)] = values
    return bytes(b)


def build_invalid():
    out = []

    def frame_case(name, data, error):
        try:
            decode_frame(data)
        except DecodeError as e:
            assert e.code == error, (name, e.code, error)
        else:
            raise AssertionError("frame vector decodes: " + name)
        out.append({"name": name, "layer": "frame", "input": bytes(data).hex(), "error": error})

    def payload_case(name, kind, payload, error, sequence=1, command=None, flags=None):
        """A well-formed frame (correct CRC) whose payload or flags are wrong."""
        if kind is not None:
            message, form = kind.split(".")
            command = COMMANDS[message] if command is None else command
            flags = FORM_FLAGS[form] if flags is None else flags
        data = build_frame(command, flags, sequence, payload)
        decode_frame(data)  # the frame layer must accept it
        try:
            decode_message(data)
        except DecodeError as e:
            assert e.code == error, (name, e.code, e.detail, error)
        else:
            raise AssertionError("payload vector decodes: " + name)
        item = {"name": name, "layer": "payload", "input": data.hex()}
        if kind is not None:
            item["kind"] = kind
        item["error"] = error
        out.append(item)

    E = encode_payload

    # ---- frame layer
    good = frame_for("battery.response", 9, {"level": 87, "state": "discharging"})
    good_empty = frame_for("deviceInfo.request", 1, {})
    # spec section 2 example
    assert good_empty == bytes.fromhex("a5010001020000000edc91b6"), good_empty.hex()
    frame_case("bad CRC (last byte flipped)", set_byte(good, len(good) - 1, good[-1] ^ 0x01),
               "crcMismatch")
    frame_case("bad CRC (payload bit flipped)", set_byte(good, 8, good[8] ^ 0x10), "crcMismatch")
    frame_case("bad CRC (empty payload, CRC zero)", good_empty[:8] + b"\0\0\0\0", "crcMismatch")
    frame_case("CRC stored big-endian", good[:-4] + good[-4:][::-1], "crcMismatch")
    frame_case("truncated: header only", good[:8], "truncatedFrame")
    big = frame_for("alarmsSet.request", 3, {"alarms": [A_WORK, A_MED]})
    n = len(big) - 12
    frame_case("truncated: header and half the payload", big[:8 + n // 2], "truncatedFrame")
    frame_case("truncated: CRC missing its last byte", big[:-1], "truncatedFrame")
    frame_case("truncated: five bytes", good[:5], "truncatedFrame")
    frame_case("length mismatch: one extra byte after the CRC", good + b"\x00", "lengthMismatch")
    frame_case("length mismatch: a second frame appended", good + good_empty, "lengthMismatch")
    frame_case("bad start marker 0x5A", build_frame(0x0004, 1, 9, b"\x57\x01", marker=0x5A),
               "badStartMarker")
    frame_case("bad start marker: leading garbage byte", b"\x00" + good, "badStartMarker")
    frame_case("version 2", build_frame(0x0004, 1, 9, b"\x57\x01", version=2),
               "unsupportedVersion")
    frame_case("version 0", build_frame(0x0002, 0, 1, b"", version=0), "unsupportedVersion")
    frame_case("payload length 2049 with 2049 payload bytes",
               build_frame(0x0011, 0, 3, bytes(2049)), "payloadTooLarge")
    frame_case("payload length 65535, header only (header checks come first)",
               build_frame(0x0011, 0, 3, b"", length=0xFFFF)[:8], "payloadTooLarge")
    frame_case("payload length 2049, header only (header checks come first)",
               build_frame(0x0011, 0, 3, b"", length=2049)[:8], "payloadTooLarge")
    frame_case("version 2 and payload length 2049 (version is checked first)",
               build_frame(0x0011, 0, 3, bytes(2049), version=2), "unsupportedVersion")
    frame_case("length field 2 larger than the payload present",
               build_frame(0x0004, 1, 9, b"\x57\x01\x00\x00", length=6), "truncatedFrame")

    # ---- command / direction
    payload_case("unknown command 0x0099", None, b"\x01", "unknownCommand", command=0x0099,
                 flags=0)
    payload_case("unknown command 0x0000", None, b"", "unknownCommand", command=0x0000, flags=0)
    payload_case("unknown command 0x0103 (reserved for later versions)", None, b"",
                 "unknownCommand", command=0x0103, flags=0)
    payload_case("unknown command 0x8001 (vendor extension)", None, b"\x00\x01",
                 "unknownCommand", command=0x8001, flags=1)
    payload_case("unknown command 0x0005 as a response", None, b"", "unknownCommand",
                 command=0x0005, flags=1)
    page1 = E("sleepPage.stream", {"transferId": 7, "page": 0, "last": True,
                                   "records": [record("deep", T0, 1800)]})
    payload_case("SLEEP_PAGE with RESPONSE flag", None, page1, "unexpectedDirection",
                 command=0x0031, flags=FLAG_RESPONSE)
    payload_case("SLEEP_PAGE with EVENT flag", None, page1, "unexpectedDirection",
                 command=0x0031, flags=FLAG_EVENT)
    payload_case("request command with EVENT flag (DEVICE_INFO)", None, b"",
                 "unexpectedDirection", command=0x0002, flags=FLAG_EVENT)
    payload_case("BATTERY with RESPONSE|EVENT", None, b"\x57\x01", "unexpectedDirection",
                 command=0x0004, flags=FLAG_RESPONSE | FLAG_EVENT)
    payload_case("SLEEP_PAGE_ACK with RESPONSE flag", None,
                 E("sleepPageAck.request", {"transferId": 7, "nextExpected": 1,
                                            "retransmit": False}),
                 "unexpectedDirection", command=0x0032, flags=FLAG_RESPONSE)
    payload_case("ALARMS_CHANGED without EVENT flag", None,
                 E("alarmsChanged.event", {"origin": "watch", "alarms": []}),
                 "unexpectedDirection", command=0x0012, flags=0)
    payload_case("LIVE_STAGE without EVENT flag", None,
                 E("liveStage.event", {"kind": "wokeUp", "stage": "awake", "time": T0}),
                 "unexpectedDirection", command=0x0041, flags=0)
    payload_case("LIVE_STAGE with RESPONSE|EVENT", None, b"", "unexpectedDirection",
                 command=0x0041, flags=FLAG_RESPONSE | FLAG_EVENT)
    payload_case("ERROR with EVENT flag", None,
                 E("error.nack", error_body("crcMismatch", 0x0011, 4, "")),
                 "unexpectedDirection", command=0x00FF, flags=FLAG_EVENT)

    # ---- HELLO
    hello_req = {"minVersion": 1, "maxVersion": 1, "attMTU": 247, "maxPayload": 2048}
    for name, patch, err in [
        ("hello maxVersion < minVersion", {"minVersion": 2, "maxVersion": 1}, "valueOutOfRange"),
        ("hello minVersion 0", {"minVersion": 0, "maxVersion": 1}, "valueOutOfRange"),
        ("hello attMTU 22", {"attMTU": 22}, "valueOutOfRange"),
        ("hello attMTU 518", {"attMTU": 518}, "valueOutOfRange"),
        ("hello maxPayload 255", {"maxPayload": 255}, "valueOutOfRange"),
        ("hello maxPayload 2049", {"maxPayload": 2049}, "valueOutOfRange"),
    ]:
        payload_case(name, "hello.request", E("hello.request", dict(hello_req, **patch)), err,
                     sequence=0)
    payload_case("hello request of 5 bytes", "hello.request",
                 E("hello.request", hello_req)[:5], "truncatedPayload", sequence=0)
    payload_case("hello request of 7 bytes", "hello.request",
                 E("hello.request", hello_req) + b"\x00", "trailingBytes", sequence=0)
    hello_resp = {"version": 1, "maxPayload": 2048, "maxWindow": 16, "commands": [1, 2, 3, 4]}
    payload_case("hello response maxWindow 0", "hello.response",
                 E("hello.response", dict(hello_resp, maxWindow=0)), "valueOutOfRange", 0)
    payload_case("hello response maxWindow 33", "hello.response",
                 E("hello.response", dict(hello_resp, maxWindow=33)), "valueOutOfRange", 0)
    payload_case("hello response maxPayload 255", "hello.response",
                 E("hello.response", dict(hello_resp, maxPayload=255)), "valueOutOfRange", 0)
    payload_case("hello response version 0", "hello.response",
                 E("hello.response", dict(hello_resp, version=0)), "valueOutOfRange", 0)
    full = E("hello.response", hello_resp)
    payload_case("hello response odd-length command list (count 4, 7 bytes)", "hello.response",
                 full[:-1], "truncatedPayload", 0)
    payload_case("hello response odd-length command list (count 4, 9 bytes)", "hello.response",
                 full + b"\x10", "trailingBytes", 0)

    # ---- DEVICE_INFO
    payload_case("device info request with 1 payload byte", "deviceInfo.request", b"\x00",
                 "trailingBytes")
    di = device_info("TS-W10", "2.4.1", 10, 32, 64, 1, True, False, True, list(MONITOR_TYPES))
    di_bytes = E("deviceInfo.response", di)
    tail = len(di_bytes) - 6  # offset of maxAlarms
    payload_case("device info statisticsRule 4", "deviceInfo.response",
                 set_byte(di_bytes, tail + 3, 4), "valueOutOfRange")
    payload_case("device info labelMaxBytes 33", "deviceInfo.response",
                 set_byte(di_bytes, tail + 1, 33), "valueOutOfRange")
    payload_case("device info reserved feature bit 3", "deviceInfo.response",
                 set_byte(di_bytes, tail + 4, 0x05 | 0x08), "reservedBitsSet")
    payload_case("device info reserved feature bit 7", "deviceInfo.response",
                 set_byte(di_bytes, tail + 4, 0x80), "reservedBitsSet")
    payload_case("device info reserved monitor type bit 6", "deviceInfo.response",
                 set_byte(di_bytes, tail + 5, 0x7F), "reservedBitsSet")
    payload_case("device info model of 33 bytes", "deviceInfo.response",
                 E("deviceInfo.response", dict(di, model="M" * 33)), "stringTooLong")
    payload_case("device info firmware of 33 bytes", "deviceInfo.response",
                 E("deviceInfo.response", dict(di, firmware="1." * 16 + "9")), "stringTooLong")
    payload_case("device info model invalid UTF-8", "deviceInfo.response",
                 E("deviceInfo.response", dict(di, model=b"TS-\xc3\x28")), "invalidUTF8")
    payload_case("device info missing monitorTypes byte", "deviceInfo.response", di_bytes[:-1],
                 "truncatedPayload")
    payload_case("device info with a trailing byte", "deviceInfo.response", di_bytes + b"\x00",
                 "trailingBytes")

    # ---- TIME_SET
    ts = {"utc": 1763600000, "utcOffset": 3600, "zone": "Europe/Berlin"}
    payload_case("time set utcOffset 64801", "timeSet.request",
                 E("timeSet.request", dict(ts, utcOffset=64801)), "valueOutOfRange")
    payload_case("time set utcOffset -64801", "timeSet.request",
                 E("timeSet.request", dict(ts, utcOffset=-64801)), "valueOutOfRange")
    payload_case("time set zone of 65 bytes", "timeSet.request",
                 E("timeSet.request", dict(ts, zone="Etc/" + "Z" * 61)), "stringTooLong")
    payload_case("time set zone invalid UTF-8", "timeSet.request",
                 E("timeSet.request", dict(ts, zone=b"Europe/\xff")), "invalidUTF8")
    payload_case("time set without the zone length byte", "timeSet.request",
                 E("timeSet.request", ts)[:8], "truncatedPayload")
    payload_case("time set zone length beyond the payload", "timeSet.request",
                 E("timeSet.request", ts)[:-3], "truncatedPayload")
    payload_case("time set response with a payload byte", "timeSet.response", b"\x00",
                 "trailingBytes")

    # ---- BATTERY
    payload_case("battery level 101", "battery.response",
                 E("battery.response", {"level": 101, "state": "discharging"}),
                 "valueOutOfRange")
    payload_case("battery state 4", "battery.response",
                 E("battery.response", {"level": 50, "state": 4}), "valueOutOfRange")
    payload_case("battery response of 1 byte", "battery.response", b"\x57", "truncatedPayload")
    payload_case("battery request with a payload byte", "battery.request", b"\x01",
                 "trailingBytes")

    # ---- ALARMS
    def table(*alarms):
        return {"alarms": list(alarms)}

    def alarm_case(name, alarms, error, kind="alarmsSet.request"):
        payload_case(name, kind, E(kind, table(*alarms)), error, sequence=3)

    alarm_case("alarm label of 40 bytes", [dict(A_WORK, label="L" * 40)], "labelTooLong")
    alarm_case("alarm label of 33 bytes (11 CJK characters)", [dict(A_WORK, label="吃" * 11)],
               "labelTooLong")
    alarm_case("alarm hour 24", [dict(A_WORK, hour=24)], "hourOutOfRange")
    alarm_case("alarm minute 60", [dict(A_WORK, minute=60)], "minuteOutOfRange")
    alarm_case("alarm repeat bit 7", [dict(A_WORK, repeat=0x80 | 0x1F)], "reservedBitsSet")
    alarm_case("duplicate slot", [A_WORK, dict(A_MED, slot=0)], "duplicateSlot")
    alarm_case("alarm label invalid UTF-8", [dict(A_WORK, label=b"\xe5\x90")], "invalidUTF8")
    alarm_case("alarm label UTF-16 surrogate encoded in UTF-8",
               [dict(A_WORK, label=b"\xed\xa0\x80")], "invalidUTF8")
    alarm_case("alarm remark invalid UTF-8", [dict(A_WORK, remark=b"Morgen \xfc")],
               "invalidUTF8")
    alarm_case("alarm hour 24 in ALARMS_GET response", [A_WORK, dict(A_CN, hour=24)],
               "hourOutOfRange", kind="alarmsGet.response")
    one = E("alarmsSet.request", table(A_WORK))
    payload_case("alarm reserved flag bit 3", "alarmsSet.request", set_byte(one, 2, 0x0B),
                 "reservedBitsSet", sequence=3)
    payload_case("alarm reserved flag bit 7", "alarmsSet.request", set_byte(one, 2, 0x81),
                 "reservedBitsSet", sequence=3)
    two = E("alarmsSet.request", table(A_WORK, A_MED))
    payload_case("alarm table count 3 with 2 records present", "alarmsSet.request",
                 set_byte(two, 0, 3), "truncatedPayload", sequence=3)
    payload_case("alarm table count 1 with 2 records present", "alarmsSet.request",
                 set_byte(two, 0, 1), "trailingBytes", sequence=3)
    payload_case("alarm table missing its count", "alarmsSet.request", b"", "truncatedPayload",
                 sequence=3)
    payload_case("alarm record cut inside the remark", "alarmsSet.request", one[:-2],
                 "truncatedPayload", sequence=3)
    payload_case("alarms get request with a payload byte", "alarmsGet.request", b"\x00",
                 "trailingBytes")
    payload_case("alarms set response with a payload byte", "alarmsSet.response", b"\x00",
                 "trailingBytes")
    payload_case("alarms changed origin 3", "alarmsChanged.event",
                 E("alarmsChanged.event", {"origin": 3, "alarms": [A_WORK]}), "valueOutOfRange")
    payload_case("alarms changed with minute 60", "alarmsChanged.event",
                 E("alarmsChanged.event", {"origin": "watch", "alarms": [dict(A_WORK, minute=60)]}),
                 "minuteOutOfRange")
    payload_case("alarms changed without a table", "alarmsChanged.event", b"\x00",
                 "truncatedPayload")
    payload_case("alarms changed event ack with payload", "alarmsChanged.eventAck", b"\x00",
                 "trailingBytes")

    # ---- MONITORS
    hr = config("heartRate", True, 0, 1440, 10, True, 120, 45)

    def monitor_case(name, cfg, error, kind="monitorSet.request"):
        payload_case(name, kind, E(kind, cfg), error, sequence=30)

    def sched(**kw):
        return dict(hr, schedule=dict(hr["schedule"], **kw))

    def alert(**kw):
        return dict(hr, alert=dict(hr["alert"], **kw))

    payload_case("monitor get type 6", "monitorGet.request", b"\x06", "unknownMonitorType")
    payload_case("monitor get with 2 bytes", "monitorGet.request", b"\x00\x00", "trailingBytes")
    payload_case("monitor get with no payload", "monitorGet.request", b"", "truncatedPayload")
    monitor_case("monitor set type 6", dict(hr, type=6), "unknownMonitorType")
    monitor_case("monitor interval 7 (not a multiple of 5)", sched(intervalMinutes=7),
                 "intervalNotMultipleOf5")
    monitor_case("monitor interval 0", sched(intervalMinutes=0), "intervalOutOfRange")
    monitor_case("monitor interval 1445", sched(intervalMinutes=1445), "intervalOutOfRange")
    monitor_case("monitor end minute equal to start minute", sched(startMinute=600, endMinute=600),
                 "windowEndNotAfterStart")
    monitor_case("monitor end minute less than start minute",
                 sched(startMinute=1320, endMinute=420), "windowEndNotAfterStart")
    monitor_case("monitor end minute 1441", sched(endMinute=1441), "windowEndOutOfRange")
    monitor_case("monitor end minute 0", sched(startMinute=0, endMinute=0), "windowEndOutOfRange")
    monitor_case("monitor start minute 1440 (end 1440)", sched(startMinute=1440, endMinute=1440),
                 "windowStartOutOfRange")
    monitor_case("monitor alert limits inverted, alert enabled", alert(upper=45, lower=120),
                 "alertLimitsInverted")
    monitor_case("monitor alert limits equal, alert enabled", alert(upper=100, lower=100),
                 "alertLimitsInverted")
    monitor_case("monitor get response with interval 7", sched(intervalMinutes=7),
                 "intervalNotMultipleOf5", kind="monitorGet.response")
    hr_bytes = E("monitorSet.request", hr)
    payload_case("monitor reserved flag bit 2", "monitorSet.request", set_byte(hr_bytes, 1, 0x07),
                 "reservedBitsSet", sequence=30)
    payload_case("monitor config of 11 bytes", "monitorSet.request", hr_bytes[:11],
                 "truncatedPayload", sequence=30)
    payload_case("monitor config of 13 bytes", "monitorSet.request", hr_bytes + b"\x00",
                 "trailingBytes", sequence=30)
    payload_case("monitor set response with a payload byte", "monitorSet.response", b"\x00",
                 "trailingBytes")

    # ---- SLEEP_QUERY
    q = {"start": 1763000000, "end": 1763600000, "window": 8}
    payload_case("sleep query end equal to start", "sleepQuery.request",
                 E("sleepQuery.request", dict(q, end=q["start"])), "rangeEndNotAfterStart")
    payload_case("sleep query end before start", "sleepQuery.request",
                 E("sleepQuery.request", dict(q, end=q["start"] - 86400)),
                 "rangeEndNotAfterStart")
    # Not emitted: start 0xFFFFFFFF with the open end 0xFFFFFFFF. Read as integers, end is
    # not > start; read as "no end", any start is fine. The spec does not say which.
    payload_case("sleep query window 0", "sleepQuery.request",
                 E("sleepQuery.request", dict(q, window=0)), "valueOutOfRange")
    payload_case("sleep query window 33", "sleepQuery.request",
                 E("sleepQuery.request", dict(q, window=33)), "valueOutOfRange")
    payload_case("sleep query of 8 bytes", "sleepQuery.request",
                 E("sleepQuery.request", q)[:8], "truncatedPayload")
    qr = {"transferId": 7, "total": 1260, "recordsPerPage": 67, "window": 8}
    payload_case("sleep query response transferId 0", "sleepQuery.response",
                 E("sleepQuery.response", dict(qr, transferId=0)), "valueOutOfRange")
    payload_case("sleep query response recordsPerPage 0", "sleepQuery.response",
                 E("sleepQuery.response", dict(qr, recordsPerPage=0)), "valueOutOfRange")
    payload_case("sleep query response window 0", "sleepQuery.response",
                 E("sleepQuery.response", dict(qr, window=0)), "valueOutOfRange")
    payload_case("sleep query response of 9 bytes", "sleepQuery.response",
                 E("sleepQuery.response", qr) + b"\x00", "trailingBytes")

    # ---- SLEEP_PAGE
    recs = [record("light", T0, 420), record("deep", T0 + 420, 1800)]
    pg = {"transferId": 7, "page": 0, "last": False, "records": recs}

    def page_case(name, body, error):
        payload_case(name, "sleepPage.stream", E("sleepPage.stream", body), error, sequence=10)

    page_case("sleep record stage 4", dict(pg, records=[recs[0], record(4, T0 + 420, 60)]),
              "unknownSleepStage")
    page_case("sleep record duration 0", dict(pg, records=[recs[0], record("rem", T0 + 420, 0)]),
              "zeroDuration")
    page_case("sleep page with 0 records", dict(pg, records=[]), "emptyPage")
    pg_bytes = E("sleepPage.stream", pg)
    payload_case("sleep page count 3 with 2 records present", "sleepPage.stream",
                 set_byte(pg_bytes, 5, 3), "truncatedPayload", sequence=10)
    payload_case("sleep page count 1 with 2 records present", "sleepPage.stream",
                 set_byte(pg_bytes, 5, 1), "trailingBytes", sequence=10)
    payload_case("sleep page reserved flag bit 1", "sleepPage.stream",
                 set_byte(pg_bytes, 4, 0x03), "reservedBitsSet", sequence=10)
    payload_case("sleep page reserved flag bit 7", "sleepPage.stream",
                 set_byte(pg_bytes, 4, 0x80), "reservedBitsSet", sequence=10)
    payload_case("sleep page record cut short", "sleepPage.stream", pg_bytes[:-3],
                 "truncatedPayload", sequence=10)

    # ---- SLEEP_PAGE_ACK
    ack = E("sleepPageAck.request", {"transferId": 7, "nextExpected": 4, "retransmit": False})
    payload_case("page ack reserved flag bit 1", "sleepPageAck.request", set_byte(ack, 4, 0x02),
                 "reservedBitsSet")
    payload_case("page ack reserved flag bits 1-7", "sleepPageAck.request",
                 set_byte(ack, 4, 0xFF), "reservedBitsSet")
    payload_case("page ack of 4 bytes", "sleepPageAck.request", ack[:4], "truncatedPayload")
    payload_case("page ack of 6 bytes", "sleepPageAck.request", ack + b"\x00", "trailingBytes")

    # ---- SLEEP_COMMIT
    c = {"start": 1763000000, "end": 1763600000, "count": 1260}
    payload_case("sleep commit end equal to start", "sleepCommit.request",
                 E("sleepCommit.request", dict(c, end=c["start"])), "rangeEndNotAfterStart")
    payload_case("sleep commit end before start", "sleepCommit.request",
                 E("sleepCommit.request", dict(c, start=c["end"], end=c["start"])),
                 "rangeEndNotAfterStart")
    payload_case("sleep commit of 11 bytes", "sleepCommit.request",
                 E("sleepCommit.request", c)[:11], "truncatedPayload")
    payload_case("sleep commit response of 3 bytes", "sleepCommit.response", b"\xec\x04\x00",
                 "truncatedPayload")
    payload_case("sleep commit response of 5 bytes", "sleepCommit.response",
                 b"\xec\x04\x00\x00\x00", "trailingBytes")

    # ---- SLEEP_ABORT
    payload_case("sleep abort with empty payload", "sleepAbort.request", b"", "truncatedPayload")
    payload_case("sleep abort of 1 byte", "sleepAbort.request", b"\x07", "truncatedPayload")
    payload_case("sleep abort of 3 bytes", "sleepAbort.request", b"\x07\x00\x00",
                 "trailingBytes")
    payload_case("sleep abort response with payload", "sleepAbort.response", b"\x07\x00",
                 "trailingBytes")

    # ---- LIVE
    payload_case("live subscribe enable 2", "liveSubscribe.request", b"\x02", "valueOutOfRange")
    payload_case("live subscribe with empty payload", "liveSubscribe.request", b"",
                 "truncatedPayload")
    payload_case("live subscribe response with payload", "liveSubscribe.response", b"\x01",
                 "trailingBytes")
    ls = {"kind": "stageChanged", "stage": "deep", "time": 1763591200}
    payload_case("live stage kind 3", "liveStage.event", E("liveStage.event", dict(ls, kind=3)),
                 "valueOutOfRange")
    payload_case("live stage stage 5", "liveStage.event", E("liveStage.event", dict(ls, stage=5)),
                 "unknownSleepStage")
    payload_case("live stage of 5 bytes", "liveStage.event", E("liveStage.event", ls)[:5],
                 "truncatedPayload")
    payload_case("live stage event ack with payload", "liveStage.eventAck", b"\x00",
                 "trailingBytes")

    # ---- ERROR
    eb = error_body("invalidValue", 0x0011, 3, "slot 3: hour 24 is out of range 0…23")
    payload_case("error status 0", "error.response", E("error.response", dict(eb, status=0)),
                 "valueOutOfRange", sequence=3)
    payload_case("error message of 201 bytes", "error.response",
                 E("error.response", dict(eb, message="x" * 201)), "stringTooLong", sequence=3)
    payload_case("error message invalid UTF-8", "error.nack",
                 E("error.nack", dict(eb, message=b"CRC \xc0\xaf")), "invalidUTF8", sequence=3)
    payload_case("error of 4 bytes (no message length)", "error.nack",
                 E("error.nack", eb)[:4], "truncatedPayload", sequence=3)
    payload_case("error with a byte after the message", "error.response",
                 E("error.response", eb) + b"\x00", "trailingBytes", sequence=3)

    invalid_vectors_v11(payload_case, E)

    names = [v["name"] for v in out]
    assert len(names) == len(set(names)), "duplicate invalid names"
    # every command has at least one invalid payload vector
    covered = set()
    for item in out:
        if item["layer"] == "payload":
            covered.add(struct.unpack_from("<H", bytes.fromhex(item["input"]), 4)[0])
    missing = set(COMMANDS.values()) - covered
    assert not missing, "commands without an invalid vector: %s" % sorted(missing)
    return out


# --------------------------------------------------------------------------- stream vectors

def build_stream():
    out = []

    def case(name, chunks, must_contain=None, corrupt=None):
        chunks = [bytes(c) for c in chunks]
        assert all(chunks), name + ": empty chunk"
        frames, bad = reassemble(chunks, "once")
        frames2, bad2 = reassemble(chunks, "repeat")
        assert (frames, bad) == (frames2, bad2), name + ": timeout readings disagree"
        # chunking must not matter: the same stream one byte at a time
        stream = b"".join(chunks)
        assert reassemble([stream[i:i + 1] for i in range(len(stream))]) == (frames, bad), name
        for f in frames:
            decode_frame(f)
        if must_contain is not None:
            assert frames == must_contain, (name, [f.hex() for f in frames])
        if corrupt is not None:
            assert bad == corrupt, (name, bad)
        out.append({"name": name, "chunks": [c.hex() for c in chunks],
                    "frames": [f.hex() for f in frames], "corrupt": bad})

    f_batt = frame_for("battery.response", 1, {"level": 87, "state": "discharging"})
    f_info = frame_for("deviceInfo.request", 2, {})
    f_alarm = frame_for("alarmsSet.request", 3, {"alarms": [A_WORK, A_MED, A_CN]})
    f_live = frame_for("liveStage.event", 4, {"kind": "fellAsleep", "stage": "light",
                                              "time": 1763590000})
    f_ack = frame_for("sleepPageAck.request", 5, {"transferId": 7, "nextExpected": 4,
                                                  "retransmit": False})
    rng = random.Random(1)
    page_recs = sleep_records(rng, 20, T0)
    f_page = frame_for("sleepPage.stream", 6, {"transferId": 7, "page": 0, "last": False,
                                               "records": page_recs})
    for f in (f_batt, f_info, f_live, f_ack, f_page):
        assert START_MARKER not in f[1:-4], "sample frame must not hold 0xA5 in header/payload"
    # f_alarm does: "饭" is e9 a5 ad in UTF-8 (a stray marker with version byte 0xad)
    assert START_MARKER in f_alarm[8:-4]

    case("one frame in one chunk", [f_alarm], [f_alarm], 0)
    case("one byte per chunk", [f_alarm[i:i + 1] for i in range(len(f_alarm))], [f_alarm], 0)
    case("three frames packed into one chunk", [f_batt + f_info + f_live],
         [f_batt, f_info, f_live], 0)
    case("three frames cut at MTU 23", fragment(f_alarm + f_batt + f_live, 23),
         [f_alarm, f_batt, f_live], 0)
    case("frame ends and next begins in one chunk",
         [f_batt[:5], f_batt[5:] + f_info[:3], f_info[3:]], [f_batt, f_info], 0)
    case("garbage before a frame", [b"\x00\xff\x12", f_batt], [f_batt], 0)
    case("garbage before and between frames, stray 0xA5 bytes",
         [b"\x13\xa5\x00\xa5\xa5\x02\x37", f_batt + b"\xa5\xff\xa5\x7f\x00",
          b"\x42" + f_info + b"\xa5", f_live],
         [f_batt, f_info, f_live], 0)
    case("0xA5 right before a frame start", [b"\xa5" + f_batt], [f_batt], 0)
    case("fake header with payload length 2049 is skipped",
         [bytes([0xA5, 0x01, 0x00, 0x00, 0x11, 0x00]) + u16(2049) + b"\x00" * 4, f_batt],
         [f_batt], 0)
    case("version-2 frame is skipped byte by byte",
         [build_frame(0x0004, 1, 1, b"\x57\x01", version=2), f_info], [f_info], 0)

    # lost middle chunk: the damaged frame's length reads into the following frames
    lost = fragment(f_page, 23)
    assert len(lost) >= 3
    assert len(lost[1]) <= len(f_batt) + len(f_live)
    case("lost middle chunk, then two good frames", [lost[0]] + lost[2:] + [f_batt, f_live],
         [f_batt, f_live], 1)
    # lost chunk where the damaged frame's length reaches past the end of the stream
    case("lost middle chunk at the end of the stream (timeout)",
         [lost[0]] + lost[2:] + [f_info], [f_info], 0)

    flipped = set_byte(f_alarm, 20, f_alarm[20] ^ 0x04)
    case("one flipped payload bit between two good frames", [f_batt, flipped, f_live],
         [f_batt, f_live], 1)
    case("flipped CRC bit", [f_info[:-1] + bytes([f_info[-1] ^ 0x80]), f_batt], [f_batt], 1)

    # truncated frame at the end; a complete frame is hidden inside its bytes
    outer = frame_for("sleepCommit.request", 8, {"start": 1763000000, "end": 1763600000,
                                                 "count": 1260})
    hidden = frame_for("battery.request", 9, {})
    truncated = outer[:8] + hidden + outer[8:10]  # header claims 12 payload bytes + CRC
    assert len(truncated) < len(outer)
    case("truncated frame at the end, nothing inside", [f_batt, outer[:-5]], [f_batt], 0)
    case("truncated frame at the end hiding a complete frame", [f_batt, truncated],
         [f_batt, hidden], 0)
    case("partial header at the end", [f_info, b"\xa5\x01\x00"], [f_info], 0)

    # payload containing A5 01 (a page whose record holds duration 0x01A5 and a start time
    # whose bytes are a5 01) - must not confuse the scanner
    tricky_recs = [record("light", 0x6901A500 + 0x33, 0x01A5),
                   record("deep", 1763000000, 0x01A5), record("rem", 1763000421, 0x01A5)]
    tricky_body = {"transferId": 0x01A5, "page": 0x01A5, "last": False, "records": tricky_recs}
    f_tricky = frame_for("sleepPage.stream", 0xA5, tricky_body)
    assert b"\xa5\x01" in f_tricky[8:-4]
    case("payload containing a5 01 bytes", [f_tricky, f_batt], [f_tricky, f_batt], 0)
    case("payload containing a5 01 bytes, one byte per chunk",
         [bytes([b]) for b in f_tricky + f_info], [f_tricky, f_info], 0)
    # a whole frame as the payload of an error message cannot occur (UTF-8), but a frame
    # inside a corrupt frame is found after the corrupt one is rejected:
    inner = frame_for("liveSubscribe.request", 10, {"enable": True})
    # a frame damaged in transit (CRC zeroed) whose payload holds a complete frame
    carrier = build_frame(0x0031, 0, 11, b"\x07\x00\x03\x00\x00\x01" + inner)
    corrupt_carrier = carrier[:-4] + b"\x00\x00\x00\x00"
    case("corrupt frame carrying a complete frame in its payload",
         [corrupt_carrier, f_info], [inner, f_info], 1)

    # duplicated chunks
    dup = fragment(f_alarm, 23)
    assert len(dup) >= 3
    case("duplicated middle chunk", [dup[0], dup[1], dup[1]] + dup[2:] + [f_batt, f_info],
         [f_batt, f_info], 1)
    case("duplicated chunk holding a whole frame (delivered twice)", [f_batt, f_batt, f_info],
         [f_batt, f_batt, f_info], 0)

    case("largest frame (255-record page) at MTU 185",
         fragment(frame_for("sleepPage.stream", 12,
                            {"transferId": 7, "page": 1, "last": True,
                             "records": sleep_records(random.Random(9), 255, T0)}), 185),
         None, 0)
    case("only garbage", [b"\x00\x01\x02", b"\xa5\x00", b"\xa5"], [], 0)
    return out


# --------------------------------------------------------------------------- output

def render(obj):
    return vector_files.render(obj, indent=2)


def generate():
    return {
        "valid.json": render(build_valid()),
        "invalid.json": render(build_invalid()),
        "stream.json": render(build_stream()),
    }


def main(argv=None):
    return vector_files.run(__doc__.splitlines()[0], VECTOR_DIR, generate, "vectors",
                            "scripts/v1/v1_vectors.py", argv)


if __name__ == "__main__":
    sys.exit(main())
