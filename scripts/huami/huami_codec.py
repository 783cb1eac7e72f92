"""The Huami dialect (protocol-spec/huami/huami.md) in Python: the project's second, independent
implementation of the codec, written from the spec. Standard library, plus the `cryptography`
package for AES-128 (Debian's python3-cryptography or PyPI's; the machine image has both).

Used by scripts/huami/huami_vectors.py, which writes protocol-spec/huami/vectors/*.json; the Swift
module TSHuami is tested against those files.

  * auth (0009): the key, the random-number request, the challenge, the encrypted answer, verdicts
  * time: the 11-byte Current Time (2A2B) and the 8-byte short form, in a named zone
  * configuration (0003): alarm set/clear, the status answer, the chunked alarm table
  * heart-rate control point (2A39), battery (0006)
  * the activity fetch (0004/0005): requests, answers, data packets, the assembler, CRC-32
  * per-minute samples (4 and 8 bytes) read into sleep items and heart rates

Errors are HuamiError(code, message); the codes are the ones the vectors name.
"""

import struct
import zlib
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

RESPONSE = 0x10
SUCCESS = 0x01


class HuamiError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def need(condition, code, message):
    if not condition:
        raise HuamiError(code, message)


# --------------------------------------------------------------------------- auth (§2)

AUTH_SEND_KEY, AUTH_REQUEST_RANDOM, AUTH_SEND_ENCRYPTED = 0x01, 0x02, 0x03
WRONG_KEY = 0x04


def parse_key(text):
    t = text.strip()
    if t[:2] in ("0x", "0X"):
        t = t[2:]
    need(len(t) == 32 and all(c in "0123456789abcdefABCDEF" for c in t), "badAuthKey",
         "an auth key is 32 hex digits")
    return bytes.fromhex(t)


def aes_ecb(key, block):
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    need(len(key) == 16, "badAuthKey", "an auth key has 16 bytes")
    need(len(block) == 16, "badLength", "the challenge has 16 bytes")
    enc = Cipher(algorithms.AES(bytes(key)), modes.ECB()).encryptor()
    return enc.update(bytes(block)) + enc.finalize()


def auth_request(kind, body):
    a, c = body.get("authFlags", 0), body.get("cryptFlags", 0)
    if kind == "sendKey":
        key = bytes.fromhex(body["key"])
        need(len(key) == 16, "badAuthKey", "an auth key has 16 bytes")
        return bytes([AUTH_SEND_KEY, a]) + key
    if kind == "requestRandom":
        return bytes([AUTH_REQUEST_RANDOM | c, a]) + (b"\x02\x01\x00" if c else b"")
    if kind == "sendEncrypted":
        return bytes([AUTH_SEND_ENCRYPTED | c, a]) + bytes.fromhex(body["encrypted"])
    raise ValueError(kind)


def read_auth_request(raw):
    need(len(raw) >= 2, "tooShort", "an auth request has at least 2 bytes")
    op, high, a = raw[0] & 0x0F, raw[0] & 0xF0, raw[1]
    if op == AUTH_SEND_KEY and high == 0:
        need(len(raw) == 18, "badLength", "send-key is 18 bytes")
        return "sendKey", {"authFlags": a, "key": raw[2:].hex()}
    if op == AUTH_REQUEST_RANDOM:
        if high == 0:
            need(len(raw) == 2, "badLength", "random request without crypt flag is 2 bytes")
        else:
            need(len(raw) == 5, "badLength", "random request with crypt flag is 5 bytes")
            need(raw[2:] == b"\x02\x01\x00", "invalidValue", "random request with crypt flag ends 02 01 00")
        return "requestRandom", {"authFlags": a, "cryptFlags": high}
    if op == AUTH_SEND_ENCRYPTED:
        need(len(raw) == 18, "badLength", "encrypted answer is 18 bytes")
        return "sendEncrypted", {"authFlags": a, "cryptFlags": high, "encrypted": raw[2:].hex()}
    raise HuamiError("unknownOpcode", "auth request opcode %02x" % raw[0])


def auth_answer(kind, body):
    c = body.get("cryptFlags", 0)
    if kind == "keyStored":
        return bytes([RESPONSE, AUTH_SEND_KEY, SUCCESS])
    if kind == "random":
        return bytes([RESPONSE, AUTH_REQUEST_RANDOM | c, SUCCESS]) + bytes.fromhex(body["random"])
    if kind == "accepted":
        return bytes([RESPONSE, AUTH_SEND_ENCRYPTED | c, SUCCESS])
    if kind == "refused":
        op = body["opcode"]
        return bytes([RESPONSE, op if op == AUTH_SEND_KEY else op | c, body["status"]])
    raise ValueError(kind)


def read_auth_answer(raw):
    """(kind, body); the opcode's high nibble is not read (it varies by model)."""
    need(len(raw) >= 3, "tooShort", "an auth answer has at least 3 bytes")
    need(raw[0] == RESPONSE, "notAResponse", "an auth answer starts with 10")
    op, status = raw[1] & 0x0F, raw[2]
    need(op in (1, 2, 3), "unknownOpcode", "auth answer opcode %02x" % raw[1])
    if status != SUCCESS:
        need(len(raw) == 3, "badLength", "a refusal is 3 bytes")
        return "refused", {"opcode": op, "status": status}
    if op == AUTH_REQUEST_RANDOM:
        need(len(raw) == 19, "badLength", "a challenge is 19 bytes")
        return "random", {"random": raw[3:].hex()}
    need(len(raw) == 3, "badLength", "auth answer is 3 bytes")
    return ("keyStored" if op == AUTH_SEND_KEY else "accepted"), {}


def auth_error(kind, body):
    """The error a refusal means, or None."""
    if kind != "refused":
        return None
    if body["opcode"] == AUTH_SEND_ENCRYPTED and body["status"] == WRONG_KEY:
        return "authKeyRefused"
    return "authFailed"


# --------------------------------------------------------------------------- time (§3)

def _days_in(year, month):
    if month == 2:
        return 29 if (year % 4 == 0 and year % 100 != 0) or year % 400 == 0 else 28
    return 30 if month in (4, 6, 9, 11) else 31


def time_fields(unix, zone):
    """The wall-clock fields of `unix` in the named zone, and its offset in quarter-hours
    (DST included; truncated toward zero)."""
    local = datetime.fromtimestamp(unix, tz=timezone.utc).astimezone(ZoneInfo(zone))
    offset = int(local.utcoffset().total_seconds())
    q = int(offset / 900)
    return {"year": local.year, "month": local.month, "day": local.day, "hour": local.hour,
            "minute": local.minute, "second": local.second, "weekday": local.isoweekday(),
            "fraction": 0, "zone": q}


def fields_unix(f):
    wall = datetime(f["year"], f["month"], f["day"], f["hour"], f["minute"], f["second"], tzinfo=timezone.utc)
    return int(wall.timestamp()) - f["zone"] * 900


def _check_fields(f):
    need(1 <= f["month"] <= 12 and 1 <= f["day"] <= _days_in(f["year"], f["month"]), "valueOutOfRange", "not a date")
    need(f["hour"] <= 23 and f["minute"] <= 59 and f["second"] <= 59, "valueOutOfRange", "not a time of day")
    need(-48 <= f["zone"] <= 56, "valueOutOfRange", "zone outside -48..56")


def current_time_bytes(f):
    return struct.pack("<HBBBBBBBBb", f["year"], f["month"], f["day"], f["hour"], f["minute"], f["second"],
                       f["weekday"], f["fraction"], 0, f["zone"])


def short_time_bytes(f):
    return struct.pack("<HBBBBBb", f["year"], f["month"], f["day"], f["hour"], f["minute"], f["second"], f["zone"])


def read_current_time(raw):
    need(len(raw) == 11, "badLength", "a current time is 11 bytes")
    y, mo, d, h, mi, s, wd, fr, _adj, z = struct.unpack("<HBBBBBBBBb", bytes(raw))
    f = {"year": y, "month": mo, "day": d, "hour": h, "minute": mi, "second": s, "weekday": wd, "fraction": fr, "zone": z}
    _check_fields(f)
    need(1 <= wd <= 7, "valueOutOfRange", "day of week 1..7")
    need(wd == datetime(y, mo, d).isoweekday(), "invalidValue", "day of week does not match the date")
    return f


def read_short_time(raw):
    need(len(raw) == 8, "badLength", "a short time is 8 bytes")
    y, mo, d, h, mi, s, z = struct.unpack("<HBBBBBb", bytes(raw))
    f = {"year": y, "month": mo, "day": d, "hour": h, "minute": mi, "second": s, "zone": z}
    _check_fields(f)
    return f


def short(f):
    return {k: f[k] for k in ("year", "month", "day", "hour", "minute", "second", "zone")}


# --------------------------------------------------------------------------- configuration (§4)

ALARM_SET, ALARM_STATUS = 0x02, 0x0D
ALARM_TABLE_REQUEST = bytes([0xFF, 0x01, 0x00, 0x00, 0x00])
ENABLED, NO_SNOOZE, ONCE = 0x80, 0x40, 0x80
SLOTS = 10
CHUNK_POSITIONS = {0x00: "first", 0x40: "middle", 0x80: "last", 0xC0: "complete"}
CHUNK_FLAGS = {v: k for k, v in CHUNK_POSITIONS.items()}
ALARM_TABLE_TYPE = 0x01
CHUNK_MAX = 4096


def alarm_entry(a):
    flags = a["slot"] & 0x0F
    if a["enabled"]:
        flags |= ENABLED | (0 if a["snooze"] else NO_SNOOZE)
    return bytes([flags, a["hour"], a["minute"], ONCE if a["days"] == 0 else a["days"]])


def read_alarm_entry(e):
    """(slot, alarm dict or None for a cleared slot)."""
    slot = e[0] & 0x0F
    need(slot < SLOTS, "valueOutOfRange", "alarm slot %d" % slot)
    need(e[0] & 0x30 == 0, "invalidValue", "alarm flags use 0x30")
    if e[0] & 0xF0 == 0 and e[3] == 0:
        return slot, None
    need(e[1] <= 23 and e[2] <= 59, "valueOutOfRange", "not a time of day")
    if e[3] == ONCE:
        days = 0
    elif 0x01 <= e[3] <= 0x7F:
        days = e[3]
    else:
        raise HuamiError("invalidValue", "alarm days %02x" % e[3])
    enabled = bool(e[0] & ENABLED)
    need(enabled or not e[0] & NO_SNOOZE, "invalidValue", "no-snooze flag on a disabled alarm")
    return slot, {"slot": slot, "enabled": enabled, "snooze": not e[0] & NO_SNOOZE,
                  "hour": e[1], "minute": e[2], "days": days}


def config_request(kind, body):
    if kind == "setAlarm":
        need(body["slot"] < SLOTS, "slotOutOfRange", "slots 0..9")
        need(body["hour"] <= 23 and body["minute"] <= 59, "timeOutOfRange", "not a time of day")
        need(body["days"] & 0x80 == 0, "timeOutOfRange", "repeat bit 7")
        return bytes([ALARM_SET]) + alarm_entry(body)
    if kind == "clearAlarm":
        return bytes([ALARM_SET, body["slot"], 0, 0, 0])
    if kind == "alarmStatus":
        return bytes([ALARM_STATUS])
    if kind == "alarmTable":
        return ALARM_TABLE_REQUEST
    raise ValueError(kind)


def read_config_request(raw):
    need(len(raw) >= 1, "tooShort", "empty configuration request")
    if raw[0] == ALARM_SET:
        need(len(raw) == 5, "badLength", "alarm request is 5 bytes")
        slot, alarm = read_alarm_entry(raw[1:])
        return ("setAlarm", alarm) if alarm else ("clearAlarm", {"slot": slot})
    if raw[0] == ALARM_STATUS:
        need(len(raw) == 1, "badLength", "alarm status request is 1 byte")
        return "alarmStatus", {}
    if raw[0] == 0xFF:
        need(bytes(raw) == ALARM_TABLE_REQUEST, "invalidValue", "ff 01 00 00 00 only")
        return "alarmTable", {}
    raise HuamiError("unknownOpcode", "configuration request opcode %02x" % raw[0])


def chunk_bytes(body):
    flag = CHUNK_FLAGS[body["position"]]
    payload = bytes.fromhex(body["payload"])
    if body["position"] in ("first", "complete"):
        return bytes([0x80, 0x01, flag, 0, body["type"], 0, 0, 0]) + payload
    return bytes([0x80, 0x01, flag, 0]) + payload


def config_answer(kind, body):
    if kind == "alarmSet":
        return bytes([RESPONSE, ALARM_SET, body["status"]])
    if kind == "alarmStatus":
        slots = body["slots"]
        return bytes([RESPONSE, ALARM_STATUS, SUCCESS, 0, 0, 0, 0, 0, len(slots)]) + bytes(
            (s["slot"] & 0x0F) | (0x10 if s["enabled"] else 0) for s in slots)
    if kind == "chunk":
        return chunk_bytes(body)
    if kind == "other":
        return bytes([RESPONSE, body["opcode"], body["status"]]) + bytes.fromhex(body["rest"])
    raise ValueError(kind)


def read_config_answer(raw):
    need(len(raw) >= 2, "tooShort", "configuration answer under 2 bytes")
    if raw[0] == 0x80 and raw[1] == 0x01:
        need(len(raw) >= 4, "tooShort", "chunk under 4 bytes")
        need(raw[2] in CHUNK_POSITIONS, "invalidValue", "chunk flags %02x" % raw[2])
        position = CHUNK_POSITIONS[raw[2]]
        if position in ("first", "complete"):
            need(len(raw) >= 8, "tooShort", "first chunk under 8 bytes")
            return "chunk", {"position": position, "type": raw[4], "payload": raw[8:].hex()}
        return "chunk", {"position": position, "payload": raw[4:].hex()}
    need(raw[0] == RESPONSE, "notAResponse", "configuration answer starts with 10 or 80 01")
    need(len(raw) >= 3, "tooShort", "configuration answer under 3 bytes")
    if raw[1] == ALARM_SET:
        need(len(raw) == 3, "badLength", "alarm-set answer is 3 bytes")
        return "alarmSet", {"status": raw[2]}
    if raw[1] == ALARM_STATUS and raw[2] == SUCCESS:
        need(len(raw) >= 9, "tooShort", "alarm status answer under 9 bytes")
        need(len(raw) == 9 + raw[8], "countMismatch", "alarm count does not match")
        slots = []
        for b in raw[9:]:
            need(b & 0x0F < SLOTS, "valueOutOfRange", "alarm slot %d" % (b & 0x0F))
            need(b & 0xE0 == 0, "invalidValue", "alarm status bits")
            slots.append({"slot": b & 0x0F, "enabled": bool(b & 0x10)})
        return "alarmStatus", {"slots": slots}
    return "other", {"opcode": raw[1], "status": raw[2], "rest": raw[3:].hex()}


class ChunkAssembler:
    def __init__(self):
        self.type = None
        self.buffer = b""

    def feed(self, chunk):
        """chunk: the body of a read chunk; returns (type, payload) when an answer is whole."""
        p = chunk["position"]
        data = bytes.fromhex(chunk["payload"])
        if p == "complete":
            self.type, self.buffer = None, b""
            return chunk["type"], data
        if p == "first":
            self.type, self.buffer = chunk["type"], data
            return None
        need(self.type is not None, "chunkOutOfOrder", "a %s chunk before a first one" % p)
        self.buffer += data
        if len(self.buffer) > CHUNK_MAX:
            self.type, self.buffer = None, b""
            raise HuamiError("badLength", "chunked answer too long")
        if p == "last":
            whole = (self.type, self.buffer)
            self.type, self.buffer = None, b""
            return whole
        return None


def alarm_table(payload):
    need(len(payload) >= 1 and (len(payload) - 1) % 4 == 0, "badLength", "alarm table is 1 + 4n bytes")
    out, seen = [], set()
    for at in range(1, len(payload), 4):
        slot, alarm = read_alarm_entry(payload[at:at + 4])
        need(slot not in seen, "invalidValue", "slot twice")
        seen.add(slot)
        if alarm:
            out.append(alarm)
    return out


def alarm_table_payload(alarms):
    return bytes([len(alarms)]) + b"".join(alarm_entry(a) for a in alarms)


def alarm_table_chunks(alarms, per_chunk=12):
    data = alarm_table_payload(alarms)
    if len(data) <= per_chunk:
        return [{"position": "complete", "type": ALARM_TABLE_TYPE, "payload": data.hex()}]
    parts = [data[i:i + per_chunk] for i in range(0, len(data), per_chunk)]
    out = [{"position": "first", "type": ALARM_TABLE_TYPE, "payload": parts[0].hex()}]
    for i, part in enumerate(parts[1:], 1):
        out.append({"position": "last" if i == len(parts) - 1 else "middle", "payload": part.hex()})
    return out


# --------------------------------------------------------------------------- heart rate, battery (§5, §6)

def heart_rate_command(kind, body):
    if kind == "interval":
        return bytes([0x14, body["minutes"]])
    if kind == "sleepMonitoring":
        return bytes([0x15, 0x00, 1 if body["on"] else 0])
    if kind == "manualMeasurement":
        return bytes([0x15, 0x02, 1 if body["on"] else 0])
    raise ValueError(kind)


def read_heart_rate_command(raw):
    need(len(raw) >= 1, "tooShort", "empty heart-rate command")
    if raw[0] == 0x14:
        need(len(raw) == 2, "badLength", "interval is 2 bytes")
        return "interval", {"minutes": raw[1]}
    if raw[0] == 0x15:
        need(len(raw) == 3, "badLength", "switch is 3 bytes")
        need(raw[2] in (0, 1), "invalidValue", "switch value")
        if raw[1] == 0x00:
            return "sleepMonitoring", {"on": raw[2] == 1}
        if raw[1] == 0x02:
            return "manualMeasurement", {"on": raw[2] == 1}
        raise HuamiError("unknownOpcode", "switch mode %02x" % raw[1])
    raise HuamiError("unknownOpcode", "heart-rate opcode %02x" % raw[0])


def battery_bytes(body):
    return bytes([0, body["level"], body["state"]]) + bytes(17)


def read_battery(raw):
    need(len(raw) >= 3, "tooShort", "battery under 3 bytes")
    need(raw[1] <= 100, "valueOutOfRange", "battery level over 100")
    state = {0: "discharging", 1: "charging"}.get(raw[2], "unknown")
    return "battery", {"level": raw[1], "state": raw[2], "status": state}


# --------------------------------------------------------------------------- the activity fetch (§7)

FETCH_START, FETCH_DATA, FETCH_ACK = 0x01, 0x02, 0x03


def fetch_request(kind, body):
    if kind == "start":
        return bytes([FETCH_START, body["type"]]) + short_time_bytes(body["since"])
    if kind == "fetchData":
        return bytes([FETCH_DATA])
    if kind == "acknowledge":
        return bytes([FETCH_ACK])
    raise ValueError(kind)


def read_fetch_request(raw):
    need(len(raw) >= 1, "tooShort", "empty fetch request")
    if raw[0] == FETCH_START:
        if len(raw) == 10:
            return "start", {"type": raw[1], "since": read_short_time(raw[2:])}
        if len(raw) == 13:
            return "start", {"type": raw[1], "since": short(read_current_time(raw[2:]))}
        raise HuamiError("badLength", "fetch start is 10 or 13 bytes")
    if raw[0] in (FETCH_DATA, FETCH_ACK):
        need(len(raw) == 1, "badLength", "one byte")
        return ("fetchData" if raw[0] == FETCH_DATA else "acknowledge"), {}
    raise HuamiError("unknownOpcode", "fetch request opcode %02x" % raw[0])


def fetch_answer(kind, body):
    if kind == "started":
        return bytes([RESPONSE, FETCH_START, SUCCESS]) + struct.pack("<I", body["count"]) + short_time_bytes(body["start"])
    if kind == "finished":
        crc = body.get("crc32")
        return bytes([RESPONSE, FETCH_DATA, SUCCESS]) + (struct.pack("<I", crc) if crc is not None else b"")
    if kind == "acknowledged":
        return bytes([RESPONSE, FETCH_ACK, SUCCESS])
    if kind == "refused":
        return bytes([RESPONSE, body["opcode"], body["status"]])
    raise ValueError(kind)


def read_fetch_answer(raw):
    need(len(raw) >= 3, "tooShort", "fetch answer under 3 bytes")
    need(raw[0] == RESPONSE, "notAResponse", "fetch answer starts with 10")
    op = raw[1]
    need(op in (1, 2, 3), "unknownOpcode", "fetch answer opcode %02x" % op)
    if raw[2] != SUCCESS:
        need(len(raw) == 3, "badLength", "a refusal is 3 bytes")
        return "refused", {"opcode": op, "status": raw[2]}
    if op == FETCH_START:
        need(len(raw) in (15, 16), "badLength", "fetch start answer is 15 or 16 bytes")
        return "started", {"count": struct.unpack_from("<I", raw, 3)[0], "start": read_short_time(raw[7:15])}
    if op == FETCH_DATA:
        need(len(raw) in (3, 7), "badLength", "fetch end is 3 or 7 bytes")
        return "finished", ({"crc32": struct.unpack_from("<I", raw, 3)[0]} if len(raw) == 7 else {})
    need(len(raw) == 3, "badLength", "acknowledgement answer is 3 bytes")
    return "acknowledged", {}


def read_data_packet(raw):
    need(len(raw) >= 2, "tooShort", "a data packet has a counter and data")
    return "packet", {"counter": raw[0], "data": raw[1:].hex()}


def crc32(data):
    return zlib.crc32(bytes(data)) & 0xFFFFFFFF


def data_packets(data, per_packet=16):
    return [bytes([(i // per_packet) & 0xFF]) + data[i:i + per_packet] for i in range(0, len(data), per_packet)]


class FetchAssembler:
    """Orders packets by counter within a window; checks the announced count (data bytes,
    counter bytes excluded) and, when asked, the CRC-32. A counter d ahead of the awaited one is
    a packet of this transfer only if the announced count leaves d more packets, each as full as
    the fullest yet; otherwise it lies behind among those taken (a repeat) or past the end."""

    def __init__(self, count, sample_size, window=254):
        need(count % sample_size == 0, "countNotWholeSamples", "count is not whole samples")
        self.expected = count
        self.window = max(0, min(window, 254))
        self.data = b""
        self.next = 0
        self.held = {}
        self.taken = 0
        self.full = 0

    def feed(self, raw):
        need(len(raw) >= 2, "tooShort", "a data packet has a counter and data")
        counter, data = raw[0], bytes(raw[1:])
        self.full = max(self.full, len(data))
        ahead = (counter - self.next) % 256
        left_bytes = self.expected - len(self.data)
        packets_left = 0 if left_bytes <= 0 else -(-left_bytes // self.full)
        if ahead == 0:
            self._take(data)
            while self.next in self.held:
                self._take(self.held.pop(self.next))
        elif counter in self.held:
            raise HuamiError("counterRepeated", "counter %d held already" % counter)
        elif ahead >= packets_left:
            if 256 - ahead <= self.taken:
                raise HuamiError("counterRepeated", "counter %d again" % counter)
            raise HuamiError("counterSkipped", "counter %d past the announced count" % counter)
        elif ahead > self.window or len(self.held) >= self.window:
            raise HuamiError("counterSkipped", "counter %d while %d missing" % (counter, self.next))
        else:
            self.held[counter] = data
        total = len(self.data) + sum(len(d) for d in self.held.values())
        need(total <= self.expected, "countMismatch", "more data than announced")

    def _take(self, data):
        self.data += data
        self.next = (self.next + 1) % 256
        self.taken += 1

    def finish(self, crc=None, verify=False):
        need(not self.held, "counterSkipped", "packet %d missing at the end" % self.next)
        need(len(self.data) == self.expected, "transferEndedEarly", "fewer bytes than announced")
        if verify and crc is not None:
            need(crc32(self.data) == crc, "crcMismatch", "CRC-32 does not match")
        return self.data


# --------------------------------------------------------------------------- samples and sleep (§8, §9)

REM_THRESHOLD, DEEP_THRESHOLD = 55, 42
KIND8_ASLEEP, KIND8_NOT_WORN, KIND8_CHARGING = 120, 115, 118
FIELDS4 = ("kind", "intensity", "steps", "heartRate")
FIELDS8 = FIELDS4 + ("unknown", "sleep", "deep", "rem")


def samples(data, size):
    need(len(data) % size == 0, "partialSample", "not whole samples")
    names = FIELDS4 if size == 4 else FIELDS8
    return [dict(zip(names, data[i:i + size])) for i in range(0, len(data), size)]


def sample_bytes(rows, size):
    names = FIELDS4 if size == 4 else FIELDS8
    return b"".join(bytes(r.get(n, 0) for n in names) for r in rows)


def heart_rates(start, rows):
    return [{"time": start + 60 * i, "bpm": r["heartRate"]} for i, r in enumerate(rows) if r["heartRate"] not in (0, 255)]


def minute_class(row, size, carried):
    """('asleep', stage) | ('awake', None) | ('noData', None), and the carried kind after it."""
    if size == 8:
        k = row["kind"]
        if k == KIND8_ASLEEP:
            if row["rem"] & 127 > REM_THRESHOLD:
                return ("asleep", "rem"), carried
            if row["deep"] & 127 > DEEP_THRESHOLD:
                return ("asleep", "deep"), carried
            return ("asleep", "light"), carried
        if k in (KIND8_NOT_WORN, KIND8_CHARGING):
            return ("noData", None), carried
        return ("awake", None), carried
    k = row["kind"] & 0x0F
    if k in (0, 10):
        if carried is None:
            return ("noData", None), carried
        k = carried
    else:
        carried = k
    if k == 9:
        return ("asleep", "light"), carried
    if k == 11:
        return ("asleep", "deep"), carried
    if k in (3, 6):
        return ("noData", None), carried
    return ("awake", None), carried


class SleepReader:
    def __init__(self, max_awake=60):
        self.max_awake = max_awake
        self.carried = None
        self.end = None
        self.open = False
        self.awake_start = None
        self.awake_minutes = 0

    def _close(self):
        self.open = False
        self.awake_start = None
        self.awake_minutes = 0

    def read(self, start, size, rows):
        items = []
        if self.end != start:
            self._close()
        for i, row in enumerate(rows):
            t = start + 60 * i
            (what, stage), self.carried = minute_class(row, size, self.carried)
            if what == "asleep":
                if self.awake_start is not None and self.awake_minutes > 0:
                    items.append({"stage": "awake", "start": self.awake_start, "duration": self.awake_minutes * 60})
                self.awake_start, self.awake_minutes = None, 0
                if items and items[-1]["stage"] == stage and items[-1]["start"] + items[-1]["duration"] == t:
                    items[-1]["duration"] += 60
                else:
                    items.append({"stage": stage, "start": t, "duration": 60})
                self.open = True
            elif what == "awake":
                if not self.open:
                    continue
                if self.awake_start is None:
                    self.awake_start = t
                self.awake_minutes += 1
                if self.awake_minutes > self.max_awake:
                    self._close()
            else:
                self._close()
        self.end = start + 60 * len(rows)
        return items

    def state(self):
        return {"carriedKind": self.carried, "end": self.end, "nightOpen": self.open,
                "pendingAwakeStart": self.awake_start, "pendingAwakeMinutes": self.awake_minutes}
