#!/usr/bin/env python3
"""Test vectors for tsgateway wire protocol v1, written from protocol-spec/wire-protocol.md alone
(not from the Swift codec), so the two implementations check each other.

    python3 scripts/gen-vectors.py           rewrite protocol-spec/vectors/{valid,invalid,stream}.json
    python3 scripts/gen-vectors.py --check   exit 1 if the files differ from what this generates
"""
import json
import struct
import sys
import zlib
from pathlib import Path

assert zlib.crc32(b"123456789") == 0xCBF43926, "CRC-32/ISO-HDLC check value"

OUT = Path(__file__).resolve().parent.parent / "protocol-spec" / "vectors"
MTUS = [23, 185, 247, 517]

CMD = {"hello": 0x0001, "deviceInfo": 0x0002, "timeSet": 0x0003, "battery": 0x0004,
       "alarmsGet": 0x0010, "alarmsSet": 0x0011, "alarmsChanged": 0x0012,
       "monitorGet": 0x0020, "monitorSet": 0x0021, "sleepQuery": 0x0030, "sleepPage": 0x0031,
       "sleepPageAck": 0x0032, "sleepCommit": 0x0033, "sleepAbort": 0x0034,
       "liveSubscribe": 0x0040, "liveStage": 0x0041, "error": 0x00FF}
FORM_FLAGS = {"request": 0x00, "response": 0x01, "event": 0x02, "eventAck": 0x01, "stream": 0x00, "nack": 0x00}
MONITOR = ["heartRate", "spo2", "bloodPressure", "stress", "temperature", "sleep"]
STAGE = ["awake", "light", "deep", "rem"]
BATTERY = ["unknown", "discharging", "charging", "full"]
ORIGIN = ["watch", "otherCentral", "onceAlarmFired"]
LIVE = ["fellAsleep", "stageChanged", "wokeUp"]
STATUS = {"crcMismatch": 1, "unknownCommand": 2, "badLength": 3, "invalidValue": 4, "unsupportedVersion": 5,
          "busy": 6, "helloRequired": 7, "limitExceeded": 8, "notSupported": 9, "unknownTransfer": 10,
          "countMismatch": 11, "internal": 12}


# --- primitive encoders (little-endian; string = u8 length + UTF-8) ---------------------------
def u8(v): return struct.pack("<B", v)
def u16(v): return struct.pack("<H", v)
def u32(v): return struct.pack("<I", v)
def i16(v): return struct.pack("<h", v)
def i32(v): return struct.pack("<i", v)
def s(text):
    raw = text.encode("utf-8")
    return u8(len(raw)) + raw


def alarm(a):
    flags = (1 if a["enabled"] else 0) | (2 if a["snooze"] else 0)
    return u8(a["slot"]) + u8(flags) + u8(a["hour"]) + u8(a["minute"]) + u8(a["repeat"]) + s(a["label"]) + s(a["remark"])


def table(alarms):
    return u8(len(alarms)) + b"".join(alarm(a) for a in alarms)


def config(c):
    flags = (1 if c["schedule"]["enabled"] else 0) | (2 if c["alert"]["enabled"] else 0)
    sch, al = c["schedule"], c["alert"]
    return (u8(MONITOR.index(c["type"])) + u8(flags) + u16(sch["startMinute"]) + u16(sch["endMinute"])
            + u16(sch["intervalMinutes"]) + i16(al["upper"]) + i16(al["lower"]))


def record(r):
    return u8(STAGE.index(r["stage"])) + u32(r["start"]) + u16(r["duration"])


def error_report(e):
    return u8(STATUS[e["status"]]) + u16(e["command"]) + u8(e["sequence"]) + s(e["message"])


def payload(kind, b):
    """The payload bytes of a message body, following the tables of wire-protocol.md §6."""
    name, form = kind.split(".")
    if form == "eventAck" or (form == "response" and name in ("timeSet", "alarmsSet", "monitorSet", "sleepAbort", "liveSubscribe")):
        return b""
    if form == "request" and name in ("deviceInfo", "battery", "alarmsGet"):
        return b""
    if kind == "hello.request":
        return u8(b["minVersion"]) + u8(b["maxVersion"]) + u16(b["attMTU"]) + u16(b["maxPayload"])
    if kind == "hello.response":
        return u8(b["version"]) + u16(b["maxPayload"]) + u8(b["maxWindow"]) + u8(len(b["commands"])) + b"".join(u16(c) for c in b["commands"])
    if kind == "deviceInfo.response":
        c = b["capabilities"]
        features = (1 if c["supportsNaps"] else 0) | (2 if c["deletesSyncedRecords"] else 0) | (4 if c["supportsLiveSleep"] else 0)
        types = sum(1 << MONITOR.index(t) for t in c["monitorTypes"])
        return (s(b["model"]) + s(b["firmware"]) + u8(c["maxAlarms"]) + u8(c["labelMaxBytes"]) + u8(c["remarkMaxBytes"])
                + u8(c["statisticsRule"]) + u8(features) + u8(types))
    if kind == "timeSet.request":
        return u32(b["utc"]) + i32(b["utcOffset"]) + s(b.get("zone", ""))
    if kind == "battery.response":
        return u8(b["level"]) + u8(BATTERY.index(b["state"]))
    if kind in ("alarmsGet.response", "alarmsSet.request"):
        return table(b["alarms"])
    if kind == "alarmsChanged.event":
        return u8(ORIGIN.index(b["origin"])) + table(b["alarms"])
    if kind == "monitorGet.request":
        return u8(MONITOR.index(b["type"]))
    if kind in ("monitorGet.response", "monitorSet.request"):
        return config(b)
    if kind == "sleepQuery.request":
        return u32(b["start"]) + u32(b.get("end", 0xFFFFFFFF)) + u8(b["window"])
    if kind == "sleepQuery.response":
        return u16(b["transferId"]) + u32(b["total"]) + u8(b["recordsPerPage"]) + u8(b["window"])
    if kind == "sleepPage.stream":
        return u16(b["transferId"]) + u16(b["page"]) + u8(1 if b["last"] else 0) + u8(len(b["records"])) + b"".join(record(r) for r in b["records"])
    if kind == "sleepPageAck.request":
        return u16(b["transferId"]) + u16(b["nextExpected"]) + u8(1 if b["retransmit"] else 0)
    if kind == "sleepCommit.request":
        return u32(b["start"]) + u32(b["end"]) + u32(b["count"])
    if kind == "sleepCommit.response":
        return u32(b["deleted"])
    if kind == "sleepAbort.request":
        return u16(b["transferId"])
    if kind == "liveSubscribe.request":
        return u8(1 if b["enable"] else 0)
    if kind == "liveStage.event":
        return u8(LIVE.index(b["kind"])) + u8(STAGE.index(b["stage"])) + u32(b["time"])
    if kind in ("error.response", "error.nack"):
        return error_report(b)
    raise ValueError(kind)


def frame(flags, seq, command, body):
    """Header (marker, version, flags, seq, command, length), payload, CRC-32 over both, LE."""
    head = bytes([0xA5, 0x01, flags, seq]) + u16(command) + u16(len(body))
    return head + body + u32(zlib.crc32(head + body))


def message_frame(kind, seq, body):
    name, form = kind.split(".")
    return frame(FORM_FLAGS[form], seq, CMD[name], payload(kind, body))


def chunks(data, mtu):
    size = mtu - 3
    return [data[i:i + size] for i in range(0, len(data), size)]


# --- the reassembler of wire-protocol.md §3 (for stream.json expectations) -------------------
def reassemble(parts):
    buf, frames, corrupt = b"".join(parts), [], 0

    def scan(final):
        nonlocal buf, corrupt
        while buf:
            i = buf.find(b"\xA5")
            if i < 0:
                buf = b""
                return
            buf = buf[i:]
            if len(buf) < 8:
                if final:
                    buf = buf[1:]
                    continue
                return
            length = buf[6] | buf[7] << 8
            if buf[1] != 1 or length > 2048:
                buf = buf[1:]
                continue
            total = 12 + length
            if len(buf) < total:
                if final:
                    buf = buf[1:]
                    continue
                return
            if zlib.crc32(buf[:8 + length]) == struct.unpack("<I", buf[8 + length:total])[0]:
                frames.append(buf[:total])
                buf = buf[total:]
            else:
                corrupt += 1
                buf = buf[1:]

    scan(False)
    scan(True)  # the quiet-period timeout, fired once at the end
    return frames, corrupt


# --- valid vectors -----------------------------------------------------------------------------
T0 = 1763590000
ALL_COMMANDS = [0x0001, 0x0002, 0x0003, 0x0004, 0x0010, 0x0011, 0x0012, 0x0020, 0x0021,
                0x0030, 0x0031, 0x0032, 0x0033, 0x0034, 0x0040, 0x0041, 0x00FF]


def A(slot, hour, minute, repeat=0, label="", remark="", enabled=True, snooze=False):
    return {"slot": slot, "enabled": enabled, "snooze": snooze, "hour": hour, "minute": minute,
            "repeat": repeat, "label": label, "remark": remark}


def C(type_, enabled, start, end, interval, alert, upper, lower):
    return {"type": type_, "schedule": {"enabled": enabled, "startMinute": start, "endMinute": end, "intervalMinutes": interval},
            "alert": {"enabled": alert, "upper": upper, "lower": lower}}


def records(count, start=T0):
    out, t = [], start
    for i in range(count):
        duration = 60 + (i * 137) % 1500
        out.append({"stage": STAGE[(i * 3 + 1) % 4], "start": t, "duration": duration})
        t += duration
    return out


CAPS = {"maxAlarms": 10, "labelMaxBytes": 32, "remarkMaxBytes": 64, "statisticsRule": 1, "supportsNaps": True,
        "deletesSyncedRecords": False, "supportsLiveSleep": True, "monitorTypes": MONITOR}

VALID = [
    ("central greets the watch", "hello.request", 0, {"minVersion": 1, "maxVersion": 1, "attMTU": 247, "maxPayload": 2048}),
    ("central that also speaks version 2, at the minimum MTU", "hello.request", 0, {"minVersion": 1, "maxVersion": 2, "attMTU": 23, "maxPayload": 256}),
    ("watch implementing every command", "hello.response", 0, {"version": 1, "maxPayload": 2048, "maxWindow": 16, "commands": ALL_COMMANDS}),
    ("watch without sleep transfer or live events", "hello.response", 7, {"version": 1, "maxPayload": 512, "maxWindow": 1, "commands": [1, 2, 3, 4, 0x10, 0x11, 0x12, 0xFF]}),
    ("device info request", "deviceInfo.request", 1, {}),
    ("a 10-alarm watch with every monitor", "deviceInfo.response", 1, {"model": "TS-W10", "firmware": "2.4.1", "capabilities": CAPS}),
    ("a watch without remarks, monitors or naps that deletes synced data", "deviceInfo.response", 200,
     {"model": "TopStep Band 3", "firmware": "0.9.17-beta", "capabilities": {"maxAlarms": 5, "labelMaxBytes": 16, "remarkMaxBytes": 0, "statisticsRule": 3,
      "supportsNaps": False, "deletesSyncedRecords": True, "supportsLiveSleep": False, "monitorTypes": []}}),
    ("time in Berlin (CET)", "timeSet.request", 2, {"utc": 1763600000, "utcOffset": 3600, "zone": "Europe/Berlin"}),
    ("time in New York without a zone name", "timeSet.request", 3, {"utc": 1763600000, "utcOffset": -18000}),
    ("time set answered", "timeSet.response", 2, {}),
    ("battery request", "battery.request", 4, {}),
    ("battery discharging", "battery.response", 4, {"level": 87, "state": "discharging"}),
    ("battery full", "battery.response", 5, {"level": 100, "state": "full"}),
    ("battery charging, empty", "battery.response", 6, {"level": 0, "state": "charging"}),
    ("battery state unknown", "battery.response", 7, {"level": 50, "state": "unknown"}),
    ("alarms request", "alarmsGet.request", 8, {}),
    ("no alarms", "alarmsGet.response", 8, {"alarms": []}),
    ("one workday alarm", "alarmsGet.response", 9, {"alarms": [A(0, 7, 0, 0x1F, "Work", "Morning alarm", snooze=True)]}),
    ("several alarms with UTF-8 labels and every repeat composite", "alarmsGet.response", 10, {"alarms": [
        A(0, 6, 30, 0x1F, "Work", "Morning alarm", snooze=True),
        A(1, 9, 0, 0x60, "Weekend"),
        A(2, 21, 45, 0x7F, "Medizin 💊", "吃药", enabled=False),
        A(7, 23, 59, 0x00, "", ""),
        A(255, 0, 0, 0x15, "x" * 32, "r" * 64, snooze=True)]}),
    ("set two alarms", "alarmsSet.request", 3, {"alarms": [A(0, 7, 0, 0x1F, "Work", "Morning alarm", snooze=True), A(1, 9, 0, 0x60, "Weekend")]}),
    ("clear every alarm", "alarmsSet.request", 4, {"alarms": []}),
    ("alarms set answered", "alarmsSet.response", 3, {}),
    ("edited on the watch", "alarmsChanged.event", 0, {"origin": "watch", "alarms": [A(0, 7, 15, 0x1F, "Work", "", snooze=True)]}),
    ("a once-alarm rang and switched off", "alarmsChanged.event", 1, {"origin": "onceAlarmFired", "alarms": [A(3, 5, 0, 0, "Flight", "LH 123", enabled=False)]}),
    ("set by another central: table cleared", "alarmsChanged.event", 2, {"origin": "otherCentral", "alarms": []}),
    ("alarms change acknowledged", "alarmsChanged.eventAck", 2, {}),
] + [
    ("read the %s config" % t, "monitorGet.request", 20 + i, {"type": t}) for i, t in enumerate(MONITOR)
] + [
    ("heart rate all day every 10 min, alerts 45–120 bpm", "monitorGet.response", 20, C("heartRate", True, 0, 1440, 10, True, 120, 45)),
    ("SpO2 at night", "monitorGet.response", 21, C("spo2", True, 0, 420, 30, True, 100, 90)),
    ("blood pressure off", "monitorGet.response", 22, C("bloodPressure", False, 480, 1320, 60, False, 140, 90)),
    ("stress in working hours", "monitorGet.response", 23, C("stress", True, 540, 1020, 5, False, 80, 0)),
    ("temperature with tenth-degree limits", "monitorGet.response", 24, C("temperature", True, 0, 1440, 1440, True, 380, 355)),
    ("sleep monitoring", "monitorGet.response", 25, C("sleep", True, 1200, 1440, 5, False, 0, 0)),
    ("set heart rate", "monitorSet.request", 30, C("heartRate", True, 480, 1320, 15, True, 130, 40)),
    ("inverted limits are fine while the alert is off", "monitorSet.request", 31, C("stress", True, 0, 1440, 30, False, 10, 90)),
    ("negative limits", "monitorSet.request", 32, C("temperature", False, 0, 1, 5, True, -5, -300)),
    ("monitor set answered", "monitorSet.response", 30, {}),
    ("a week of records", "sleepQuery.request", 40, {"start": 1763000000, "end": 1763600000, "window": 8}),
    ("everything from a start time", "sleepQuery.request", 41, {"start": 1763000000, "window": 32}),
    ("a one-second range, stop-and-wait", "sleepQuery.request", 42, {"start": 0, "end": 1, "window": 1}),
    ("1260 records in pages of 67", "sleepQuery.response", 40, {"transferId": 7, "total": 1260, "recordsPerPage": 67, "window": 8}),
    ("nothing in the range", "sleepQuery.response", 41, {"transferId": 65535, "total": 0, "recordsPerPage": 1, "window": 1}),
    ("a page of one record, the last", "sleepPage.stream", 0, {"transferId": 7, "page": 0, "last": True, "records": [{"stage": "deep", "start": T0, "duration": 1}]}),
    ("a full page of 33 records", "sleepPage.stream", 1, {"transferId": 7, "page": 3, "last": False, "records": records(33)}),
    ("a page of 67 records (two notifications at MTU 247)", "sleepPage.stream", 2, {"transferId": 9, "page": 18, "last": False, "records": records(67, T0 + 86400)}),
    ("the last page, 100 records, longest duration", "sleepPage.stream", 255, {"transferId": 9, "page": 65535, "last": True,
     "records": records(99, 1600000000) + [{"stage": "awake", "start": 4294967295, "duration": 65535}]}),
    ("cumulative page ack", "sleepPageAck.request", 50, {"transferId": 7, "nextExpected": 4, "retransmit": False}),
    ("go back to page 5", "sleepPageAck.request", 51, {"transferId": 7, "nextExpected": 5, "retransmit": True}),
    ("final page ack", "sleepPageAck.request", 52, {"transferId": 7, "nextExpected": 19, "retransmit": False}),
    ("commit a week", "sleepCommit.request", 60, {"start": 1763000000, "end": 1763600000, "count": 1260}),
    ("the watch deleted what was committed", "sleepCommit.response", 60, {"deleted": 1260}),
    ("a watch that keeps synced data", "sleepCommit.response", 61, {"deleted": 0}),
    ("abort a transfer", "sleepAbort.request", 70, {"transferId": 7}),
    ("abort answered", "sleepAbort.response", 70, {}),
    ("subscribe to live stages", "liveSubscribe.request", 80, {"enable": True}),
    ("unsubscribe", "liveSubscribe.request", 81, {"enable": False}),
    ("subscription answered", "liveSubscribe.response", 80, {}),
    ("fell asleep", "liveStage.event", 3, {"kind": "fellAsleep", "stage": "light", "time": T0}),
    ("into deep sleep", "liveStage.event", 4, {"kind": "stageChanged", "stage": "deep", "time": T0 + 1500}),
    ("into REM", "liveStage.event", 5, {"kind": "stageChanged", "stage": "rem", "time": T0 + 5400}),
    ("woke up", "liveStage.event", 6, {"kind": "wokeUp", "stage": "awake", "time": T0 + 27000}),
    ("live stage acknowledged", "liveStage.eventAck", 6, {}),
    ("hour out of range", "error.response", 3, {"status": "invalidValue", "command": 0x11, "sequence": 3, "message": "slot 3: hour 24 is out of range 0…23"}),
    ("too many alarms", "error.response", 4, {"status": "limitExceeded", "command": 0x11, "sequence": 4, "message": "11 alarms given, but this watch holds at most 10"}),
    ("busy, no message", "error.response", 5, {"status": "busy", "command": 0x10, "sequence": 5, "message": ""}),
    ("count mismatch with a 200-byte message", "error.response", 6, {"status": "countMismatch", "command": 0x33, "sequence": 6, "message": "m" * 200}),
    ("NACK of a corrupt frame", "error.nack", 9, {"status": "crcMismatch", "command": 0x11, "sequence": 12, "message": "frame arrived with a bad CRC"}),
    ("NACK naming an unknown command", "error.nack", 10, {"status": "crcMismatch", "command": 0xFFFF, "sequence": 0, "message": ""}),
]


# --- invalid vectors ---------------------------------------------------------------------------
def raw(kind, seq, body_bytes):
    name, form = kind.split(".")
    return frame(FORM_FLAGS[form], seq, CMD[name], body_bytes)


def pay(kind, body):
    return payload(kind, body)


GOOD = message_frame("battery.request", 9, {})
ALARM_OK = A(1, 7, 0, 0x1F, "Work", "")
CFG_OK = C("heartRate", True, 0, 1440, 10, True, 120, 45)


def with_alarm(**changes):
    a = dict(ALARM_OK)
    a.update(changes)
    return table([a])


def cfg(**changes):
    c = json.loads(json.dumps(CFG_OK))
    for key, value in changes.items():
        if key in c["schedule"]:
            c["schedule"][key] = value
        else:
            c["alert"][key] = value
    return config(c)


def bad_crc(data):
    return data[:-1] + bytes([data[-1] ^ 0x01])


page_one = pay("sleepPage.stream", {"transferId": 7, "page": 0, "last": False, "records": records(1)})
INVALID = [
    # frame layer
    ("bad CRC", "frame", bad_crc(GOOD), "crcMismatch"),
    ("header only", "frame", GOOD[:8][:6] + b"\x02\x00", "truncatedFrame"),
    ("header and half the payload", "frame", message_frame("battery.response", 1, {"level": 5, "state": "full"})[:9], "truncatedFrame"),
    ("five bytes", "frame", GOOD[:5], "truncatedFrame"),
    ("one byte after the CRC", "frame", GOOD + b"\x00", "lengthMismatch"),
    ("bad start marker", "frame", b"\x5A" + GOOD[1:], "badStartMarker"),
    ("protocol version 2", "frame", frame(0, 0, 4, b"")[:1] + b"\x02" + frame(0, 0, 4, b"")[2:], "unsupportedVersion"),
    ("payload length 2049", "frame", bytes([0xA5, 1, 0, 0, 0x31, 0]) + u16(2049) + b"\x00" * 2053, "payloadTooLarge"),
    # payload layer, one or more per command
    ("unknown command 0x0099", "payload", frame(0, 0, 0x0099, b""), "unknownCommand"),
    ("vendor command 0x8001", "payload", frame(0, 1, 0x8001, b"\x01"), "unknownCommand"),
    ("sleep page marked RESPONSE", "payload", frame(0x01, 0, CMD["sleepPage"], page_one), "unexpectedDirection"),
    ("a request marked EVENT", "payload", frame(0x02, 0, CMD["battery"], b""), "unexpectedDirection"),
    ("RESPONSE and EVENT together", "payload", frame(0x03, 0, CMD["alarmsChanged"], pay("alarmsChanged.event", {"origin": "watch", "alarms": []})), "unexpectedDirection"),
    ("live stage without the EVENT flag", "payload", frame(0x00, 0, CMD["liveStage"], pay("liveStage.event", {"kind": "wokeUp", "stage": "awake", "time": T0})), "unexpectedDirection"),
    ("hello: maxVersion below minVersion", "payload", raw("hello.request", 0, u8(2) + u8(1) + u16(247) + u16(2048)), "valueOutOfRange"),
    ("hello: ATT MTU 22", "payload", raw("hello.request", 0, u8(1) + u8(1) + u16(22) + u16(2048)), "valueOutOfRange"),
    ("hello: ATT MTU 518", "payload", raw("hello.request", 0, u8(1) + u8(1) + u16(518) + u16(2048)), "valueOutOfRange"),
    ("hello: maxPayload 255", "payload", raw("hello.request", 0, u8(1) + u8(1) + u16(247) + u16(255)), "valueOutOfRange"),
    ("hello response: maxWindow 0", "payload", raw("hello.response", 0, u8(1) + u16(2048) + u8(0) + u8(0)), "valueOutOfRange"),
    ("hello response: command list one byte short", "payload", raw("hello.response", 0, u8(1) + u16(2048) + u8(8) + u8(2) + u16(1) + u8(2)), "truncatedPayload"),
    ("device info request with a payload byte", "payload", raw("deviceInfo.request", 1, b"\x00"), "trailingBytes"),
    ("device info: statistics rule 4", "payload", raw("deviceInfo.response", 1, s("W") + s("1") + bytes([10, 32, 64, 4, 1, 0x3F])), "valueOutOfRange"),
    ("device info: labelMaxBytes 33", "payload", raw("deviceInfo.response", 1, s("W") + s("1") + bytes([10, 33, 64, 1, 1, 0x3F])), "valueOutOfRange"),
    ("device info: reserved feature bit", "payload", raw("deviceInfo.response", 1, s("W") + s("1") + bytes([10, 32, 64, 1, 0x08, 0x3F])), "reservedBitsSet"),
    ("device info: reserved monitor bit", "payload", raw("deviceInfo.response", 1, s("W") + s("1") + bytes([10, 32, 64, 1, 0, 0x40])), "reservedBitsSet"),
    ("device info: model of 33 bytes", "payload", raw("deviceInfo.response", 1, s("M" * 33) + s("1") + bytes([10, 32, 64, 1, 0, 0])), "stringTooLong"),
    ("device info: firmware is not UTF-8", "payload", raw("deviceInfo.response", 1, s("W") + b"\x02\xC3\x28" + bytes([10, 32, 64, 1, 0, 0])), "invalidUTF8"),
    ("time: offset 64801 s", "payload", raw("timeSet.request", 2, u32(1763600000) + i32(64801) + s("")), "valueOutOfRange"),
    ("time: zone of 65 bytes", "payload", raw("timeSet.request", 2, u32(1763600000) + i32(0) + s("Z" * 65)), "stringTooLong"),
    ("time set answered with a payload", "payload", raw("timeSet.response", 2, b"\x01"), "trailingBytes"),
    ("battery level 101", "payload", raw("battery.response", 4, u8(101) + u8(1)), "valueOutOfRange"),
    ("battery state 4", "payload", raw("battery.response", 4, u8(50) + u8(4)), "valueOutOfRange"),
    ("battery request with a payload", "payload", raw("battery.request", 4, b"\x00\x00"), "trailingBytes"),
    ("alarms request with a payload", "payload", raw("alarmsGet.request", 8, b"\x00"), "trailingBytes"),
    ("alarm hour 24", "payload", raw("alarmsGet.response", 8, with_alarm(hour=24)), "hourOutOfRange"),
    ("alarm minute 60", "payload", raw("alarmsGet.response", 8, with_alarm(minute=60)), "minuteOutOfRange"),
    ("alarm table says 2, holds 1", "payload", raw("alarmsGet.response", 8, u8(2) + alarm(ALARM_OK)), "truncatedPayload"),
    ("alarm label of 40 bytes", "payload", raw("alarmsSet.request", 3, with_alarm(label="L" * 40)), "labelTooLong"),
    ("alarm label is not UTF-8", "payload", raw("alarmsSet.request", 3, u8(1) + u8(1) + u8(1) + u8(7) + u8(0) + u8(0) + b"\x02\xFF\xFE" + u8(0)), "invalidUTF8"),
    ("two alarms in slot 1", "payload", raw("alarmsSet.request", 3, table([ALARM_OK, dict(ALARM_OK, hour=8)])), "duplicateSlot"),
    ("repeat bit 7", "payload", raw("alarmsSet.request", 3, with_alarm(repeat=0x80)), "reservedBitsSet"),
    ("reserved alarm flag bits", "payload", raw("alarmsSet.request", 3, u8(1) + u8(1) + u8(0x04) + u8(7) + u8(0) + u8(0) + s("") + s("")), "reservedBitsSet"),
    ("alarms set answered with a payload", "payload", raw("alarmsSet.response", 3, b"\x00"), "trailingBytes"),
    ("alarm change origin 3", "payload", raw("alarmsChanged.event", 0, u8(3) + table([])), "valueOutOfRange"),
    ("alarm change ack with a payload", "payload", raw("alarmsChanged.eventAck", 0, b"\x00"), "trailingBytes"),
    ("monitor type 6", "payload", raw("monitorGet.request", 20, u8(6)), "unknownMonitorType"),
    ("monitor request without a type", "payload", raw("monitorGet.request", 20, b""), "truncatedPayload"),
    ("start minute 1440", "payload", raw("monitorGet.response", 20, cfg(startMinute=1440, endMinute=1440)), "windowStartOutOfRange"),
    ("interval 7", "payload", raw("monitorSet.request", 30, cfg(intervalMinutes=7)), "intervalNotMultipleOf5"),
    ("interval 0", "payload", raw("monitorSet.request", 30, cfg(intervalMinutes=0)), "intervalOutOfRange"),
    ("interval 1445", "payload", raw("monitorSet.request", 30, cfg(intervalMinutes=1445)), "intervalOutOfRange"),
    ("end minute equal to start", "payload", raw("monitorSet.request", 30, cfg(startMinute=600, endMinute=600)), "windowEndNotAfterStart"),
    ("end minute before start (22:00-07:00)", "payload", raw("monitorSet.request", 30, cfg(startMinute=1320, endMinute=420)), "windowEndNotAfterStart"),
    ("end minute 1441", "payload", raw("monitorSet.request", 30, cfg(endMinute=1441)), "windowEndOutOfRange"),
    ("end minute 0", "payload", raw("monitorSet.request", 30, cfg(endMinute=0)), "windowEndOutOfRange"),
    ("alert limits inverted with the alert on", "payload", raw("monitorSet.request", 30, cfg(upper=45, lower=120)), "alertLimitsInverted"),
    ("reserved monitor flag bits", "payload", raw("monitorSet.request", 30, u8(0) + u8(0x07) + cfg()[2:]), "reservedBitsSet"),
    ("monitor set answered with a payload", "payload", raw("monitorSet.response", 30, b"\x00"), "trailingBytes"),
    ("query end equal to start", "payload", raw("sleepQuery.request", 40, u32(1763000000) + u32(1763000000) + u8(8)), "rangeEndNotAfterStart"),
    ("query end before start", "payload", raw("sleepQuery.request", 40, u32(1763000000) + u32(1762000000) + u8(8)), "rangeEndNotAfterStart"),
    ("query window 0", "payload", raw("sleepQuery.request", 40, u32(1) + u32(2) + u8(0)), "valueOutOfRange"),
    ("query window 33", "payload", raw("sleepQuery.request", 40, u32(1) + u32(2) + u8(33)), "valueOutOfRange"),
    ("transfer id 0", "payload", raw("sleepQuery.response", 40, u16(0) + u32(10) + u8(5) + u8(8)), "valueOutOfRange"),
    ("records per page 0", "payload", raw("sleepQuery.response", 40, u16(1) + u32(10) + u8(0) + u8(8)), "valueOutOfRange"),
    ("sleep stage 4", "payload", raw("sleepPage.stream", 0, u16(7) + u16(0) + u8(0) + u8(1) + u8(4) + u32(T0) + u16(60)), "unknownSleepStage"),
    ("record of duration 0", "payload", raw("sleepPage.stream", 0, u16(7) + u16(0) + u8(0) + u8(1) + u8(1) + u32(T0) + u16(0)), "zeroDuration"),
    ("page without records", "payload", raw("sleepPage.stream", 0, u16(7) + u16(0) + u8(1) + u8(0)), "emptyPage"),
    ("page says 3 records, holds 2", "payload", raw("sleepPage.stream", 0, u16(7) + u16(0) + u8(0) + u8(3) + b"".join(record(r) for r in records(2))), "truncatedPayload"),
    ("reserved page flag", "payload", raw("sleepPage.stream", 0, u16(7) + u16(0) + u8(0x02) + u8(1) + record(records(1)[0])), "reservedBitsSet"),
    ("reserved page-ack flag", "payload", raw("sleepPageAck.request", 50, u16(7) + u16(4) + u8(0x02)), "reservedBitsSet"),
    ("page ack of 4 bytes", "payload", raw("sleepPageAck.request", 50, u16(7) + u16(4)), "truncatedPayload"),
    ("commit end equal to start", "payload", raw("sleepCommit.request", 60, u32(5) + u32(5) + u32(0)), "rangeEndNotAfterStart"),
    ("commit with a byte too many", "payload", raw("sleepCommit.request", 60, u32(5) + u32(6) + u32(1) + b"\x00"), "trailingBytes"),
    ("commit answer of 3 bytes", "payload", raw("sleepCommit.response", 60, b"\x01\x00\x00"), "truncatedPayload"),
    ("abort without a transfer id", "payload", raw("sleepAbort.request", 70, b""), "truncatedPayload"),
    ("abort answered with a payload", "payload", raw("sleepAbort.response", 70, b"\x00"), "trailingBytes"),
    ("subscribe with enable 2", "payload", raw("liveSubscribe.request", 80, u8(2)), "valueOutOfRange"),
    ("subscription answered with a payload", "payload", raw("liveSubscribe.response", 80, b"\x00"), "trailingBytes"),
    ("live event kind 3", "payload", raw("liveStage.event", 3, u8(3) + u8(1) + u32(T0)), "valueOutOfRange"),
    ("live stage 5", "payload", raw("liveStage.event", 3, u8(0) + u8(5) + u32(T0)), "unknownSleepStage"),
    ("live stage ack with a payload", "payload", raw("liveStage.eventAck", 3, b"\x00"), "trailingBytes"),
    ("error status 0", "payload", raw("error.response", 3, u8(0) + u16(0x11) + u8(3) + s("")), "valueOutOfRange"),
    ("error message of 201 bytes", "payload", raw("error.nack", 3, u8(1) + u16(0x11) + u8(3) + s("e" * 201)), "stringTooLong"),
]


# --- stream vectors ----------------------------------------------------------------------------
F1 = message_frame("battery.response", 1, {"level": 80, "state": "charging"})
F2 = message_frame("alarmsGet.response", 2, {"alarms": [A(3, 7, 0, 0x1F, "Work", "")]})
F3 = message_frame("liveStage.event", 3, {"kind": "fellAsleep", "stage": "light", "time": T0})
TRICKY = message_frame("alarmsSet.request", 0xA5, {"alarms": [A(0xA5, 1, 0, 0, "\u00a5\u0001", "")]})
BIG = message_frame("sleepPage.stream", 4, {"transferId": 7, "page": 0, "last": True, "records": records(40)})
HIDDEN_INSIDE = bytes([0xA5, 0x01, 0x00, 0x07, 0x10, 0x00, 100, 0x00]) + F3  # claims 100 payload bytes, then silence


def flip(data, index):
    return data[:index] + bytes([data[index] ^ 0x10]) + data[index + 1:]


STREAMS = [
    ("one frame in one chunk", [F1]),
    ("one byte per chunk", [bytes([b]) for b in F2]),
    ("three frames packed into one chunk", [F1 + F2 + F3]),
    ("three frames cut at MTU 23", chunks(F1 + F2 + F3, 23)),
    ("garbage before and between frames, stray markers", [b"\x00\xA5\x07\xFF" + F1, b"\xA5\x02\x00\xA5" + F2, b"\x11\xA5"]),
    ("the middle chunk of a frame is lost", chunks(F1, 23) + chunks(BIG, 23)[:2] + chunks(BIG, 23)[3:] + [F2, F3]),
    ("a flipped payload bit between two good frames", [F1, flip(F2, 12), F3]),
    ("a truncated frame at the end", [F1, F2[:10]]),
    ("a complete frame hidden inside an abandoned one", [HIDDEN_INSIDE]),
    ("payload bytes that look like a header", [TRICKY + F1]),
    ("a duplicated chunk", [chunks(F2, 23)[0]] + chunks(F2, 23) + [F3]),
    ("a length beyond the maximum is not waited for", [bytes([0xA5, 0x01, 0, 0, 0, 0, 0xFF, 0xFF]) + F1]),
]


# --- output ------------------------------------------------------------------------------------
def hexs(data):
    return data.hex()


def build():
    valid = []
    for name, kind, seq, body in VALID:
        data = message_frame(kind, seq, body)
        valid.append({"name": name, "kind": kind, "sequence": seq, "body": body, "frame": hexs(data),
                      "fragments": {str(m): [hexs(c) for c in chunks(data, m)] for m in MTUS}})
    invalid = [{"name": name, "layer": layer, "input": hexs(data), "error": error} for name, layer, data, error in INVALID]
    stream = []
    for name, parts in STREAMS:
        frames, corrupt = reassemble(parts)
        stream.append({"name": name, "chunks": [hexs(p) for p in parts], "frames": [hexs(f) for f in frames], "corrupt": corrupt})
    return {"valid.json": valid, "invalid.json": invalid, "stream.json": stream}


def render(entries):
    return json.dumps(entries, indent=2, ensure_ascii=False) + "\n"


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for file, entries in build().items():
        path = OUT / file
        text = render(entries)
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(file)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(OUT.parent.parent)}: {len(entries)} vectors")
    if stale:
        print(f"gen-vectors: {', '.join(stale)} differ from what scripts/gen-vectors.py generates; run it and commit the result", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
