"""Wire protocol v1 and its v1.1 additions (protocol-spec/v1/wire-protocol.md) in Python,
standard library only: the project's second, independent implementation, written from the
spec documents alone.

Used by scripts/v1/v1_vectors.py (which writes the test vectors the Swift codec is checked
against) and by scripts/e2e/bleak_peer.py (a central on bleak, the peer the e2e harness times
tsgateway against; it speaks v1 only and never sends EXTENSIONS).

  * constants and names (spec sections 2, 5, 6; vectors/README.md)
  * encoders: one per body shape, JSON body -> payload bytes (no validation, so that
    invalid values can be encoded on purpose)
  * frame builder, fragmenter
  * decoder: frame -> (kind, sequence, body) with the error codes of spec section 8
  * version 1.1 (spec section 9): its constants, encoders and decoders in one block
    after the version-1 decoder; the alarm record's SMART byte in enc_alarm/dec_alarm
  * reassembler: the scanning rules of spec section 3 (steps 1-3 and the timeout)
"""

import struct
import zlib

# CRC-32/ISO-HDLC is zlib's CRC-32; make sure of it (spec section 2, check value).
assert zlib.crc32(b"123456789") == 0xCBF43926, "zlib.crc32 is not CRC-32/ISO-HDLC"

# --------------------------------------------------------------------------- constants

START_MARKER = 0xA5
VERSION = 1
HEADER_SIZE = 8
CRC_SIZE = 4
MAX_PAYLOAD = 2048
FLAG_RESPONSE = 0x01
FLAG_EVENT = 0x02
MTUS = (23, 185, 247, 517)

COMMANDS = {
    "hello": 0x0001,
    "deviceInfo": 0x0002,
    "timeSet": 0x0003,
    "battery": 0x0004,
    "alarmsGet": 0x0010,
    "alarmsSet": 0x0011,
    "alarmsChanged": 0x0012,
    "monitorGet": 0x0020,
    "monitorSet": 0x0021,
    "sleepQuery": 0x0030,
    "sleepPage": 0x0031,
    "sleepPageAck": 0x0032,
    "sleepCommit": 0x0033,
    "sleepAbort": 0x0034,
    "liveSubscribe": 0x0040,
    "liveStage": 0x0041,
    "error": 0x00FF,
}
COMMAND_NAMES = {v: k for k, v in COMMANDS.items()}

# form -> frame flags (vectors/README.md)
FORM_FLAGS = {
    "request": 0x00,
    "response": FLAG_RESPONSE,
    "event": FLAG_EVENT,
    "eventAck": FLAG_RESPONSE,
    "stream": 0x00,
    "nack": 0x00,
}

# command -> {flags & 0x03: form}; any other flags value is unexpectedDirection.
_REQ_RESP = {0x00: "request", FLAG_RESPONSE: "response"}
DIRECTIONS = {
    "hello": _REQ_RESP,
    "deviceInfo": _REQ_RESP,
    "timeSet": _REQ_RESP,
    "battery": _REQ_RESP,
    "alarmsGet": _REQ_RESP,
    "alarmsSet": _REQ_RESP,
    "alarmsChanged": {FLAG_EVENT: "event", FLAG_RESPONSE: "eventAck"},
    "monitorGet": _REQ_RESP,
    "monitorSet": _REQ_RESP,
    "sleepQuery": _REQ_RESP,
    "sleepPage": {0x00: "stream"},
    "sleepPageAck": {0x00: "request"},
    "sleepCommit": _REQ_RESP,
    "sleepAbort": _REQ_RESP,
    "liveSubscribe": _REQ_RESP,
    "liveStage": {FLAG_EVENT: "event", FLAG_RESPONSE: "eventAck"},
    "error": {0x00: "nack", FLAG_RESPONSE: "response"},
}

BATTERY_STATES = ["unknown", "discharging", "charging", "full"]
ORIGINS = ["watch", "otherCentral", "onceAlarmFired"]
MONITOR_TYPES = ["heartRate", "spo2", "bloodPressure", "stress", "temperature", "sleep"]
STAGES = ["awake", "light", "deep", "rem"]
LIVE_KINDS = ["fellAsleep", "stageChanged", "wokeUp"]
STATUSES = [None, "crcMismatch", "unknownCommand", "badLength", "invalidValue",
            "unsupportedVersion", "busy", "helloRequired", "limitExceeded",
            "notSupported", "unknownTransfer", "countMismatch", "internal"]

OPEN_END = 0xFFFFFFFF


# --------------------------------------------------------------------------- encoders

def u8(v):
    return struct.pack("<B", v)


def u16(v):
    return struct.pack("<H", v)


def u32(v):
    return struct.pack("<I", v)


def i16(v):
    return struct.pack("<h", v)


def i32(v):
    return struct.pack("<i", v)


def string(s):
    """u8 byte count + UTF-8 bytes. `bytes` are taken raw (for invalid UTF-8 vectors)."""
    b = s if isinstance(s, (bytes, bytearray)) else s.encode("utf-8")
    return u8(len(b)) + bytes(b)


def enum(value, names):
    """A name from `names`, or a raw int (so that out-of-range values can be encoded)."""
    return names.index(value) if isinstance(value, str) else value


def flag_byte(*bits):
    return sum((1 << i) for i, b in enumerate(bits) if b)


def enc_empty(body):
    assert body == {}, body
    return b""


def enc_hello_request(b):
    return u8(b["minVersion"]) + u8(b["maxVersion"]) + u16(b["attMTU"]) + u16(b["maxPayload"])


def enc_hello_response(b):
    cmds = b["commands"]
    return (u8(b["version"]) + u16(b["maxPayload"]) + u8(b["maxWindow"]) + u8(len(cmds))
            + b"".join(u16(c) for c in cmds))


def enc_device_info_response(b):
    c = b["capabilities"]
    types = 0
    for t in c["monitorTypes"]:
        types |= 1 << enum(t, MONITOR_TYPES)
    features = flag_byte(c["supportsNaps"], c["deletesSyncedRecords"], c["supportsLiveSleep"])
    return (string(b["model"]) + string(b["firmware"]) + u8(c["maxAlarms"])
            + u8(c["labelMaxBytes"]) + u8(c["remarkMaxBytes"]) + u8(c["statisticsRule"])
            + u8(features) + u8(types))


def enc_time_set_request(b):
    return u32(b["utc"]) + i32(b["utcOffset"]) + string(b.get("zone", ""))


def enc_battery_response(b):
    return u8(b["level"]) + u8(enum(b["state"], BATTERY_STATES))


def enc_alarm(a):
    # v1.1 (spec 9.3): "smart" present -> SMART flag and one byte after the remark
    smart = "smart" in a
    return (u8(a["slot"]) + u8(flag_byte(a["enabled"], a["snooze"], smart)) + u8(a["hour"])
            + u8(a["minute"]) + u8(a["repeat"]) + string(a["label"]) + string(a["remark"])
            + (u8(a["smart"]) if smart else b""))


def enc_alarm_table(b):
    alarms = b["alarms"]
    return u8(len(alarms)) + b"".join(enc_alarm(a) for a in alarms)


def enc_alarms_changed(b):
    return u8(enum(b["origin"], ORIGINS)) + enc_alarm_table(b)


def enc_monitor_get_request(b):
    return u8(enum(b["type"], MONITOR_TYPES))


def enc_config(b):
    s, a = b["schedule"], b["alert"]
    return (u8(enum(b["type"], MONITOR_TYPES)) + u8(flag_byte(s["enabled"], a["enabled"]))
            + u16(s["startMinute"]) + u16(s["endMinute"]) + u16(s["intervalMinutes"])
            + i16(a["upper"]) + i16(a["lower"]))


def enc_sleep_query_request(b):
    return u32(b["start"]) + u32(b.get("end", OPEN_END)) + u8(b["window"])


def enc_sleep_query_response(b):
    return u16(b["transferId"]) + u32(b["total"]) + u8(b["recordsPerPage"]) + u8(b["window"])


def enc_record(r):
    return u8(enum(r["stage"], STAGES)) + u32(r["start"]) + u16(r["duration"])


def enc_sleep_page(b):
    recs = b["records"]
    return (u16(b["transferId"]) + u16(b["page"]) + u8(flag_byte(b["last"])) + u8(len(recs))
            + b"".join(enc_record(r) for r in recs))


def enc_sleep_page_ack(b):
    return u16(b["transferId"]) + u16(b["nextExpected"]) + u8(flag_byte(b["retransmit"]))


def enc_sleep_commit_request(b):
    return u32(b["start"]) + u32(b["end"]) + u32(b["count"])


def enc_sleep_commit_response(b):
    return u32(b["deleted"])


def enc_sleep_abort_request(b):
    return u16(b["transferId"])


def enc_live_subscribe_request(b):
    e = b["enable"]
    return u8(int(e) if isinstance(e, bool) else e)


def enc_live_stage(b):
    return u8(enum(b["kind"], LIVE_KINDS)) + u8(enum(b["stage"], STAGES)) + u32(b["time"])


def enc_error(b):
    return (u8(enum(b["status"], STATUSES)) + u16(b["command"]) + u8(b["sequence"])
            + string(b["message"]))


ENCODERS = {
    "hello.request": enc_hello_request,
    "hello.response": enc_hello_response,
    "deviceInfo.request": enc_empty,
    "deviceInfo.response": enc_device_info_response,
    "timeSet.request": enc_time_set_request,
    "timeSet.response": enc_empty,
    "battery.request": enc_empty,
    "battery.response": enc_battery_response,
    "alarmsGet.request": enc_empty,
    "alarmsGet.response": enc_alarm_table,
    "alarmsSet.request": enc_alarm_table,
    "alarmsSet.response": enc_empty,
    "alarmsChanged.event": enc_alarms_changed,
    "alarmsChanged.eventAck": enc_empty,
    "monitorGet.request": enc_monitor_get_request,
    "monitorGet.response": enc_config,
    "monitorSet.request": enc_config,
    "monitorSet.response": enc_empty,
    "sleepQuery.request": enc_sleep_query_request,
    "sleepQuery.response": enc_sleep_query_response,
    "sleepPage.stream": enc_sleep_page,
    "sleepPageAck.request": enc_sleep_page_ack,
    "sleepCommit.request": enc_sleep_commit_request,
    "sleepCommit.response": enc_sleep_commit_response,
    "sleepAbort.request": enc_sleep_abort_request,
    "sleepAbort.response": enc_empty,
    "liveSubscribe.request": enc_live_subscribe_request,
    "liveSubscribe.response": enc_empty,
    "liveStage.event": enc_live_stage,
    "liveStage.eventAck": enc_empty,
    "error.response": enc_error,
    "error.nack": enc_error,
}


def encode_payload(kind, body):
    return ENCODERS[kind](body)


# --------------------------------------------------------------------------- frames

def crc32(data):
    return zlib.crc32(bytes(data)) & 0xFFFFFFFF


def build_frame(command, flags, sequence, payload, *, version=VERSION, marker=START_MARKER,
                length=None):
    """Header + payload + little-endian CRC-32 over header and payload.

    `length` overrides the payload length field (for invalid vectors); the CRC is always
    computed correctly over the bytes actually emitted."""
    n = len(payload) if length is None else length
    head = bytes([marker, version, flags, sequence]) + u16(command) + u16(n)
    body = head + bytes(payload)
    return body + u32(crc32(body))


def frame_for(kind, sequence, body):
    message, form = kind.split(".")
    return build_frame(COMMANDS[message], FORM_FLAGS[form], sequence, encode_payload(kind, body))


def fragment(data, mtu):
    """Cut a byte stream into ATT values of at most MTU - 3 bytes (spec section 3)."""
    size = mtu - 3
    return [data[i:i + size] for i in range(0, len(data), size)]


# --------------------------------------------------------------------------- decoder

class DecodeError(Exception):
    def __init__(self, code, detail=""):
        super().__init__(code, detail)
        self.code = code
        self.detail = detail


def decode_frame(data):
    """Whole-frame decode (spec section 8 frame codes). Header checks (marker, version,
    payload length) come first, as in the scanning rules of section 3, then the length
    sufficiency, then the CRC."""
    data = bytes(data)
    if len(data) >= 1 and data[0] != START_MARKER:
        raise DecodeError("badStartMarker")
    if len(data) < HEADER_SIZE:
        raise DecodeError("truncatedFrame", "shorter than the header")
    version, flags, sequence = data[1], data[2], data[3]
    command, n = struct.unpack_from("<HH", data, 4)
    if version != VERSION:
        raise DecodeError("unsupportedVersion")
    if n > MAX_PAYLOAD:
        raise DecodeError("payloadTooLarge")
    total = HEADER_SIZE + n + CRC_SIZE
    if len(data) < total:
        raise DecodeError("truncatedFrame")
    if len(data) > total:
        raise DecodeError("lengthMismatch")
    (crc,) = struct.unpack_from("<I", data, HEADER_SIZE + n)
    if crc != crc32(data[:HEADER_SIZE + n]):
        raise DecodeError("crcMismatch")
    return flags, sequence, command, data[HEADER_SIZE:HEADER_SIZE + n]


class Reader:
    def __init__(self, data):
        self.data = bytes(data)
        self.pos = 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise DecodeError("truncatedPayload")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def i16(self):
        return struct.unpack("<h", self.take(2))[0]

    def i32(self):
        return struct.unpack("<i", self.take(4))[0]

    def string(self, limit, too_long="stringTooLong"):
        n = self.u8()
        raw = self.take(n)
        if n > limit:
            raise DecodeError(too_long)
        try:
            return raw.decode("utf-8", errors="strict")
        except UnicodeDecodeError:
            raise DecodeError("invalidUTF8")

    def end(self):
        if self.pos != len(self.data):
            raise DecodeError("trailingBytes")


def check(cond, code, detail=""):
    if not cond:
        raise DecodeError(code, detail)


def dec_empty(r):
    return {}


def dec_hello_request(r):
    mn, mx, mtu, mp = r.u8(), r.u8(), r.u16(), r.u16()
    check(mn >= 1, "valueOutOfRange", "minVersion")
    check(mx >= mn, "valueOutOfRange", "maxVersion")
    check(23 <= mtu <= 517, "valueOutOfRange", "attMTU")
    check(256 <= mp <= 2048, "valueOutOfRange", "maxPayload")
    return {"minVersion": mn, "maxVersion": mx, "attMTU": mtu, "maxPayload": mp}


def dec_hello_response(r):
    version = r.u8()
    check(version >= 1, "valueOutOfRange", "version")
    mp = r.u16()
    check(256 <= mp <= 2048, "valueOutOfRange", "maxPayload")
    win = r.u8()
    check(1 <= win <= 32, "valueOutOfRange", "maxWindow")
    n = r.u8()
    cmds = [r.u16() for _ in range(n)]
    return {"version": version, "maxPayload": mp, "maxWindow": win, "commands": cmds}


def dec_device_info_response(r):
    model = r.string(32)
    firmware = r.string(32)
    max_alarms = r.u8()
    label_max = r.u8()
    check(label_max <= 32, "valueOutOfRange", "labelMaxBytes")
    remark_max = r.u8()
    rule = r.u8()
    check(rule <= 3, "valueOutOfRange", "statisticsRule")
    features = r.u8()
    check(features & 0xF8 == 0, "reservedBitsSet", "features")
    types = r.u8()
    check(types & 0xC0 == 0, "reservedBitsSet", "monitorTypes")
    return {"model": model, "firmware": firmware, "capabilities": {
        "maxAlarms": max_alarms, "labelMaxBytes": label_max, "remarkMaxBytes": remark_max,
        "statisticsRule": rule, "supportsNaps": bool(features & 1),
        "deletesSyncedRecords": bool(features & 2), "supportsLiveSleep": bool(features & 4),
        "monitorTypes": [MONITOR_TYPES[t] for t in range(6) if types & (1 << t)]}}


def dec_time_set_request(r):
    utc = r.u32()
    offset = r.i32()
    check(-64800 <= offset <= 64800, "valueOutOfRange", "utcOffset")
    zone = r.string(64)
    body = {"utc": utc, "utcOffset": offset}
    if zone:
        body["zone"] = zone
    return body


def dec_battery_response(r):
    level = r.u8()
    check(level <= 100, "valueOutOfRange", "level")
    state = r.u8()
    check(state <= 3, "valueOutOfRange", "state")
    return {"level": level, "state": BATTERY_STATES[state]}


def dec_alarm(r):
    slot = r.u8()
    flags = r.u8()
    check(flags & 0xF8 == 0, "reservedBitsSet", "alarm flags")  # bit 2: v1.1 SMART
    hour = r.u8()
    check(hour <= 23, "hourOutOfRange")
    minute = r.u8()
    check(minute <= 59, "minuteOutOfRange")
    repeat = r.u8()
    check(repeat & 0x80 == 0, "reservedBitsSet", "repeat")
    label = r.string(32, "labelTooLong")
    remark = r.string(255)
    body = {"slot": slot, "enabled": bool(flags & 1), "snooze": bool(flags & 2), "hour": hour,
            "minute": minute, "repeat": repeat, "label": label, "remark": remark}
    if flags & 4:
        smart = r.u8()
        check(smart >= 1, "valueOutOfRange", "SMART with a window of 0")
        body["smart"] = smart
    return body


def dec_alarm_table(r):
    k = r.u8()
    alarms, slots = [], set()
    for _ in range(k):
        a = dec_alarm(r)
        check(a["slot"] not in slots, "duplicateSlot")
        slots.add(a["slot"])
        alarms.append(a)
    return {"alarms": alarms}


def dec_alarms_changed(r):
    origin = r.u8()
    check(origin <= 2, "valueOutOfRange", "origin")
    return {"origin": ORIGINS[origin], **dec_alarm_table(r)}


def dec_monitor_type(r):
    t = r.u8()
    check(t <= 5, "unknownMonitorType")
    return MONITOR_TYPES[t]


def dec_monitor_get_request(r):
    return {"type": dec_monitor_type(r)}


def dec_config(r):
    t = dec_monitor_type(r)
    flags = r.u8()
    check(flags & 0xFC == 0, "reservedBitsSet", "monitor flags")
    start = r.u16()
    check(start <= 1439, "windowStartOutOfRange")
    end = r.u16()
    check(1 <= end <= 1440, "windowEndOutOfRange")
    check(end > start, "windowEndNotAfterStart")
    interval = r.u16()
    check(interval % 5 == 0, "intervalNotMultipleOf5")
    check(5 <= interval <= 1440, "intervalOutOfRange")
    upper = r.i16()
    lower = r.i16()
    alert = bool(flags & 2)
    check(not alert or lower < upper, "alertLimitsInverted")
    return {"type": t,
            "schedule": {"enabled": bool(flags & 1), "startMinute": start, "endMinute": end,
                         "intervalMinutes": interval},
            "alert": {"enabled": alert, "upper": upper, "lower": lower}}


def dec_sleep_query_request(r):
    start, end = r.u32(), r.u32()
    check(end > start, "rangeEndNotAfterStart")
    window = r.u8()
    check(1 <= window <= 32, "valueOutOfRange", "window")
    body = {"start": start}
    if end != OPEN_END:
        body["end"] = end
    body["window"] = window
    return body


def dec_sleep_query_response(r):
    tid = r.u16()
    check(tid >= 1, "valueOutOfRange", "transferId")
    total = r.u32()
    rpp = r.u8()
    check(rpp >= 1, "valueOutOfRange", "recordsPerPage")
    window = r.u8()
    check(1 <= window <= 32, "valueOutOfRange", "window")
    return {"transferId": tid, "total": total, "recordsPerPage": rpp, "window": window}


def dec_record(r):
    stage = r.u8()
    check(stage <= 3, "unknownSleepStage")
    start = r.u32()
    duration = r.u16()
    check(duration >= 1, "zeroDuration")
    return {"stage": STAGES[stage], "start": start, "duration": duration}


def dec_sleep_page(r):
    tid, page, flags = r.u16(), r.u16(), r.u8()
    check(flags & 0xFE == 0, "reservedBitsSet", "page flags")
    k = r.u8()
    check(k >= 1, "emptyPage")
    records = [dec_record(r) for _ in range(k)]
    return {"transferId": tid, "page": page, "last": bool(flags & 1), "records": records}


def dec_sleep_page_ack(r):
    tid, nxt, flags = r.u16(), r.u16(), r.u8()
    check(flags & 0xFE == 0, "reservedBitsSet", "ack flags")
    return {"transferId": tid, "nextExpected": nxt, "retransmit": bool(flags & 1)}


def dec_sleep_commit_request(r):
    start, end, count = r.u32(), r.u32(), r.u32()
    check(end > start, "rangeEndNotAfterStart")
    return {"start": start, "end": end, "count": count}


def dec_sleep_commit_response(r):
    return {"deleted": r.u32()}


def dec_sleep_abort_request(r):
    return {"transferId": r.u16()}


def dec_live_subscribe_request(r):
    e = r.u8()
    check(e <= 1, "valueOutOfRange", "enable")
    return {"enable": bool(e)}


def dec_live_stage(r):
    kind = r.u8()
    check(kind <= 2, "valueOutOfRange", "kind")
    stage = r.u8()
    check(stage <= 3, "unknownSleepStage")
    return {"kind": LIVE_KINDS[kind], "stage": STAGES[stage], "time": r.u32()}


def dec_error(r):
    status = r.u8()
    check(status != 0, "valueOutOfRange", "status")
    command, sequence = r.u16(), r.u8()
    message = r.string(200)
    # Receivers treat an unknown status code as INTERNAL (spec section 5).
    name = STATUSES[status] if status < len(STATUSES) else "internal"
    return {"status": name, "command": command, "sequence": sequence, "message": message}


DECODERS = {
    "hello.request": dec_hello_request,
    "hello.response": dec_hello_response,
    "deviceInfo.request": dec_empty,
    "deviceInfo.response": dec_device_info_response,
    "timeSet.request": dec_time_set_request,
    "timeSet.response": dec_empty,
    "battery.request": dec_empty,
    "battery.response": dec_battery_response,
    "alarmsGet.request": dec_empty,
    "alarmsGet.response": dec_alarm_table,
    "alarmsSet.request": dec_alarm_table,
    "alarmsSet.response": dec_empty,
    "alarmsChanged.event": dec_alarms_changed,
    "alarmsChanged.eventAck": dec_empty,
    "monitorGet.request": dec_monitor_get_request,
    "monitorGet.response": dec_config,
    "monitorSet.request": dec_config,
    "monitorSet.response": dec_empty,
    "sleepQuery.request": dec_sleep_query_request,
    "sleepQuery.response": dec_sleep_query_response,
    "sleepPage.stream": dec_sleep_page,
    "sleepPageAck.request": dec_sleep_page_ack,
    "sleepCommit.request": dec_sleep_commit_request,
    "sleepCommit.response": dec_sleep_commit_response,
    "sleepAbort.request": dec_sleep_abort_request,
    "sleepAbort.response": dec_empty,
    "liveSubscribe.request": dec_live_subscribe_request,
    "liveSubscribe.response": dec_empty,
    "liveStage.event": dec_live_stage,
    "liveStage.eventAck": dec_empty,
    "error.response": dec_error,
    "error.nack": dec_error,
}
assert set(DECODERS) == set(ENCODERS)


# --------------------------------------------------------------------------- version 1.1
# Spec section 9: EXTENSIONS, RING, ALARM_ALERT. Frames stay version 1; the alarm record's
# SMART byte lives in enc_alarm / dec_alarm above.

V1_COMMAND_IDS = list(COMMANDS.values())
V11_COMMANDS = {
    "extensions": 0x0100,
    "ring": 0x0101,
    "alarmAlert": 0x0102,
}
EXTENSION_FEATURES = ["smartWindows", "alarmAlerts"]  # bit 0, bit 1; bits 2-7 later versions
RING_REASONS = ["smartWake", "test"]
RING_RESULTS = ["ringing", "alreadyRinging", "alreadyRang"]
ALERT_KINDS = ["ringing", "dismissed", "snoozed", "timedOut"]
ALERT_TRIGGERS = ["alarmTime", "smartWindow", "ringSmartWake", "ringTest", "snoozeEnded"]


def feature_bits(names):
    """Feature names -> bit mask; "bitN" names a bit this version does not define."""
    mask = 0
    for name in names:
        bit = EXTENSION_FEATURES.index(name) if name in EXTENSION_FEATURES else int(name[3:])
        mask |= 1 << bit
    return mask


def feature_names(mask):
    return [EXTENSION_FEATURES[b] if b < len(EXTENSION_FEATURES) else "bit%d" % b
            for b in range(8) if mask & (1 << b)]


def enc_extensions_request(b):
    return u8(feature_bits(b["wanted"]))


def enc_extensions_response(b):
    return u8(feature_bits(b["enabled"])) + u8(b["maxSmartWindow"])


def enc_ring_request(b):
    return u8(b["slot"]) + u8(enum(b["reason"], RING_REASONS))


def enc_ring_response(b):
    return u8(enum(b["result"], RING_RESULTS))


def enc_alarm_alert(b):
    return (u8(enum(b["kind"], ALERT_KINDS)) + u8(b["slot"]) + u8(enum(b["trigger"], ALERT_TRIGGERS))
            + u32(b["time"]) + u8(b["snoozeMinutes"]))


def dec_extensions_request(r):
    # unknown bits are kept: a watch ignores them, they are not an error (spec 9.2)
    return {"wanted": feature_names(r.u8())}


def dec_extensions_response(r):
    enabled = r.u8()
    check(enabled & 0xFC == 0, "reservedBitsSet", "enabled")
    window = r.u8()
    if enabled & 1:
        check(window >= 1, "valueOutOfRange", "maxSmartWindow 0 with smartWindows")
    else:
        check(window == 0, "valueOutOfRange", "maxSmartWindow without smartWindows")
    return {"enabled": feature_names(enabled), "maxSmartWindow": window}


def dec_ring_request(r):
    slot, reason = r.u8(), r.u8()
    check(reason < len(RING_REASONS), "valueOutOfRange", "reason")
    return {"slot": slot, "reason": RING_REASONS[reason]}


def dec_ring_response(r):
    result = r.u8()
    check(result < len(RING_RESULTS), "valueOutOfRange", "result")
    return {"result": RING_RESULTS[result]}


def dec_alarm_alert(r):
    kind, slot, trigger = r.u8(), r.u8(), r.u8()
    check(kind < len(ALERT_KINDS), "valueOutOfRange", "kind")
    check(trigger < len(ALERT_TRIGGERS), "valueOutOfRange", "trigger")
    time, snooze = r.u32(), r.u8()
    if ALERT_KINDS[kind] == "snoozed":
        check(snooze >= 1, "valueOutOfRange", "snoozed with 0 minutes")
    else:
        check(snooze == 0, "valueOutOfRange", "snoozeMinutes on another kind")
    return {"kind": ALERT_KINDS[kind], "slot": slot, "trigger": ALERT_TRIGGERS[trigger],
            "time": time, "snoozeMinutes": snooze}


COMMANDS.update(V11_COMMANDS)
COMMAND_NAMES.update({v: k for k, v in V11_COMMANDS.items()})
DIRECTIONS.update({
    "extensions": _REQ_RESP,
    "ring": _REQ_RESP,
    "alarmAlert": {FLAG_EVENT: "event", FLAG_RESPONSE: "eventAck"},
})
ENCODERS.update({
    "extensions.request": enc_extensions_request,
    "extensions.response": enc_extensions_response,
    "ring.request": enc_ring_request,
    "ring.response": enc_ring_response,
    "alarmAlert.event": enc_alarm_alert,
    "alarmAlert.eventAck": enc_empty,
})
DECODERS.update({
    "extensions.request": dec_extensions_request,
    "extensions.response": dec_extensions_response,
    "ring.request": dec_ring_request,
    "ring.response": dec_ring_response,
    "alarmAlert.event": dec_alarm_alert,
    "alarmAlert.eventAck": dec_empty,
})
assert set(DECODERS) == set(ENCODERS)


def kind_of(command, flags):
    name = COMMAND_NAMES.get(command)
    if name is None:
        raise DecodeError("unknownCommand")
    form = DIRECTIONS[name].get(flags & (FLAG_RESPONSE | FLAG_EVENT))  # bits 2-7 ignored
    if form is None:
        raise DecodeError("unexpectedDirection")
    return name + "." + form


def decode_message(data):
    """Frame bytes -> (kind, sequence, body), or DecodeError."""
    flags, sequence, command, payload = decode_frame(data)
    kind = kind_of(command, flags)
    r = Reader(payload)
    body = DECODERS[kind](r)
    r.end()
    return kind, sequence, body


# --------------------------------------------------------------------------- reassembler

class Reassembler:
    """Receiving rules of spec section 3, steps 1-3, plus the partial-frame timeout."""

    def __init__(self, max_payload=MAX_PAYLOAD, timeout_mode="once"):
        self.buf = bytearray()
        self.frames = []
        self.corrupt = 0
        self.garbage = 0
        self.max_payload = max_payload
        self.timeout_mode = timeout_mode

    def feed(self, chunk):
        self.buf += chunk
        self._scan()

    def _scan(self):
        """Run steps 1-3 until they wait for bytes. Returns True when a partial frame (an
        0xA5 at buf[0] whose header or frame is incomplete) is pending."""
        while True:
            # 1. discard bytes up to the next 0xA5
            i = self.buf.find(START_MARKER)
            if i < 0:
                self.garbage += len(self.buf)
                del self.buf[:]
                return False
            self.garbage += i
            del self.buf[:i]
            # 2. header
            if len(self.buf) < HEADER_SIZE:
                return True
            version = self.buf[1]
            (n,) = struct.unpack_from("<H", self.buf, 6)
            if version != VERSION or n > self.max_payload:
                self.garbage += 1
                del self.buf[:1]
                continue
            # 3. whole frame, CRC
            total = HEADER_SIZE + n + CRC_SIZE
            if len(self.buf) < total:
                return True
            (crc,) = struct.unpack_from("<I", self.buf, HEADER_SIZE + n)
            if crc == crc32(self.buf[:HEADER_SIZE + n]):
                self.frames.append(bytes(self.buf[:total]))
                del self.buf[:total]
            else:
                self.corrupt += 1
                self.garbage += 1
                del self.buf[:1]

    def timeout(self):
        """No byte for 1000 ms: discard the pending frame's 0xA5, rescan the rest (delivering
        complete frames), discard what remains.

        mode "once": one rescan, then whatever is still pending is discarded.
        mode "repeat": each further pending partial frame is abandoned the same way, so
        complete frames behind it are still found. The vectors are built so that both
        readings agree (the generator asserts it)."""
        if not self.buf:
            return
        assert self.buf[0] == START_MARKER
        self.garbage += 1
        del self.buf[:1]
        pending = self._scan()
        while pending and self.timeout_mode == "repeat":
            self.garbage += 1
            del self.buf[:1]
            pending = self._scan()
        self.garbage += len(self.buf)
        del self.buf[:]


def reassemble(chunks, mode="once"):
    r = Reassembler(timeout_mode=mode)
    for c in chunks:
        r.feed(c)
    r.timeout()
    return r.frames, r.corrupt
