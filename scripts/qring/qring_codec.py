"""The QRing ring dialect (protocol-spec/qring/qring.md) in Python, standard library only: the
project's second, independent implementation of the codec layer, written from the spec.

Used by scripts/qring/qring_vectors.py, which writes protocol-spec/qring/vectors/*.json; the Swift
module TSQRing is tested against those files.

  * 16-byte packets: checksum, the error bit, requests, answer parsers
  * the heart-rate log assembler (command 0x15) and the steps assembler (command 0x43)
  * big-data frames: CRC-16/MODBUS, the reassembler
  * sleep days (big-data type 0x27) laid out in a named time zone
  * the ring's clock: local wall-clock time, and how a wall-clock time is read in a zone

Errors are QRingError(code, message); the codes are the ones the vectors name.
"""

import struct
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

PACKET_SIZE = 16
ERROR_BIT = 0x80

CMD_SET_TIME = 0x01
CMD_BATTERY = 0x03
CMD_HEART_RATE_LOG = 0x15
CMD_HEART_RATE_LOG_SETTINGS = 0x16
CMD_REAL_TIME_CONTINUE = 0x1E
CMD_SPO2_SWITCH = 0x2C
CMD_STRESS_SWITCH = 0x36
CMD_HRV_SWITCH = 0x38
CMD_STEPS = 0x43
CMD_REAL_TIME_START = 0x69
CMD_REAL_TIME_STOP = 0x6A
CMD_NOTICE = 0x73

SWITCH_COMMANDS = {"spo2": CMD_SPO2_SWITCH, "stress": CMD_STRESS_SWITCH, "hrv": CMD_HRV_SWITCH}
SWITCH_NAMES = {v: k for k, v in SWITCH_COMMANDS.items()}

SETTING_READ = 0x01
SETTING_WRITE = 0x02

NOTICE_NEW_DATA = {0x01: "heartRate", 0x03: "spo2", 0x04: "steps"}
NOTICE_BATTERY = 0x0C

BIG_DATA_MARKER = 0xBC
BIG_DATA_HEADER = 6
BIG_DATA_MAX_PAYLOAD = 4096
BIG_DATA_SLEEP = 0x27

SLOTS_PER_DAY = 288
SLOT_MINUTES = 5
SLEEP_STAGES = {2: "light", 3: "deep", 4: "rem", 5: "awake"}
SLEEP_STAGES_DROPPED = (0, 1)  # no data, error
SLEEP_OVERRUN_TOLERANCE = 60  # minutes (qring.md, "Time base")


class QRingError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


# --------------------------------------------------------------------------- packets

def checksum(first15):
    return sum(first15) & 0xFF


def packet(command, data=b""):
    """A 16-byte packet: command, data padded with zeros to 14 bytes, checksum."""
    if len(data) > 14:
        raise ValueError("at most 14 data bytes")
    body = bytes([command]) + bytes(data) + bytes(14 - len(data))
    return body + bytes([checksum(body)])


def open_packet(raw):
    """(command, data[14]) of a packet from the ring; errors: packetLength, checksumMismatch,
    ringReportedError."""
    raw = bytes(raw)
    if len(raw) != PACKET_SIZE:
        raise QRingError("packetLength", "a packet has %d bytes, not 16" % len(raw))
    if checksum(raw[:15]) != raw[15]:
        raise QRingError("checksumMismatch", "checksum 0x%02x, expected 0x%02x"
                         % (raw[15], checksum(raw[:15])))
    if raw[0] & ERROR_BIT:
        raise QRingError("ringReportedError",
                         "the ring reported an error for command 0x%02x" % (raw[0] & 0x7F))
    return raw[0], raw[1:15]


def bcd(value):
    return (value // 10) << 4 | value % 10


def from_bcd(byte, what):
    hi, lo = byte >> 4, byte & 0x0F
    if hi > 9 or lo > 9:
        raise QRingError("invalidBCD", "%s byte 0x%02x is not BCD" % (what, byte))
    return hi * 10 + lo


# --------------------------------------------------------------------------- the ring's clock

def wall_seconds(dt):
    """Seconds since 1970-01-01 00:00 of a naive local date-time, as if it were UTC."""
    return int((dt - datetime(1970, 1, 1)).total_seconds())


def day_wall_seconds(day):
    return (day - date(1970, 1, 1)).days * 86400


def offset_at(zone, instant):
    return int(datetime.fromtimestamp(instant, ZoneInfo(zone)).utcoffset().total_seconds())


def instant_of_wall(zone, wall):
    """Unix time of the wall-clock time `wall` (seconds as if UTC) read in `zone`: with the
    offset in effect a day earlier when that reading is consistent (so a repeated hour is read
    as its first occurrence), else with the offset a day later, else (an hour the clocks
    skipped) with the offset a day earlier."""
    before = offset_at(zone, wall - 86400)
    after = offset_at(zone, wall + 86400)
    if offset_at(zone, wall - before) == before:
        return wall - before
    if offset_at(zone, wall - after) == after:
        return wall - after
    return wall - before


def local_wall(zone, instant):
    """The naive local date-time of an instant in `zone`."""
    return datetime.fromtimestamp(instant, ZoneInfo(zone)).replace(tzinfo=None)


# --------------------------------------------------------------------------- requests

def set_time_request(wall):
    """`wall`: naive local date-time, years 2000...2099."""
    if not 2000 <= wall.year <= 2099:
        raise QRingError("yearOutOfRange", "year %d is outside 2000...2099" % wall.year)
    return packet(CMD_SET_TIME, bytes([bcd(wall.year - 2000), bcd(wall.month), bcd(wall.day),
                                       bcd(wall.hour), bcd(wall.minute), bcd(wall.second), 1]))


def battery_request():
    return packet(CMD_BATTERY)


def heart_rate_log_settings_read():
    return packet(CMD_HEART_RATE_LOG_SETTINGS, bytes([SETTING_READ]))


def heart_rate_log_settings_write(enabled, interval):
    if not (5 <= interval <= 60 and interval % 5 == 0):
        raise QRingError("intervalOutOfRange",
                         "interval %d min is not one of 5, 10, ... 60" % interval)
    return packet(CMD_HEART_RATE_LOG_SETTINGS,
                  bytes([SETTING_WRITE, 1 if enabled else 2, interval]))


def switch_read(name):
    return packet(SWITCH_COMMANDS[name], bytes([SETTING_READ]))


def switch_write(name, enabled):
    return packet(SWITCH_COMMANDS[name], bytes([SETTING_WRITE, 1 if enabled else 0]))


def heart_rate_log_request(day):
    return packet(CMD_HEART_RATE_LOG, struct.pack("<I", day_wall_seconds(day)))


def real_time_start():
    return packet(CMD_REAL_TIME_START, bytes([1, 0]))


def real_time_continue():
    return packet(CMD_REAL_TIME_CONTINUE, bytes([0x33]))


def real_time_stop():
    return packet(CMD_REAL_TIME_STOP, bytes([1, 0, 0]))


def steps_request(days_ago):
    if not 0 <= days_ago <= 255:
        raise QRingError("valueOutOfRange", "day offset %d is outside 0...255" % days_ago)
    return packet(CMD_STEPS, bytes([days_ago, 0x0F, 0x00, 0x5F, 0x01]))


def request_body(kind, body):
    """Vector helper: the request packet of a kind and its JSON body."""
    if kind == "setTime":
        return set_time_request(datetime.fromisoformat(body["wall"]))
    if kind == "battery":
        return battery_request()
    if kind == "heartRateLogSettingsRead":
        return heart_rate_log_settings_read()
    if kind == "heartRateLogSettingsWrite":
        return heart_rate_log_settings_write(body["enabled"], body["interval"])
    if kind == "switchRead":
        return switch_read(body["monitor"])
    if kind == "switchWrite":
        return switch_write(body["monitor"], body["enabled"])
    if kind == "heartRateLog":
        return heart_rate_log_request(date.fromisoformat(body["day"]))
    if kind == "realTimeStart":
        return real_time_start()
    if kind == "realTimeContinue":
        return real_time_continue()
    if kind == "realTimeStop":
        return real_time_stop()
    if kind == "steps":
        return steps_request(body["daysAgo"])
    raise KeyError(kind)


# --------------------------------------------------------------------------- answers

def _flag(byte, on, off, what):
    if byte == on:
        return True
    if byte == off:
        return False
    raise QRingError("invalidValue", "%s byte is %d, not %d (on) or %d (off)" % (what, byte, on, off))


def _battery(level, charging):
    if level > 100:
        raise QRingError("valueOutOfRange", "battery level %d is above 100" % level)
    return {"level": level, "charging": _flag(charging, 1, 0, "charging")}


def decode_answer(raw):
    """One self-contained answer -> (kind, body). The heart-rate log and steps answers span
    several packets: see HeartRateLogAssembler and StepsAssembler."""
    command, data = open_packet(raw)
    if command == CMD_SET_TIME:
        return "timeSet", {"newSleepProtocol": data[8] != 0}
    if command == CMD_BATTERY:
        return "battery", _battery(data[0], data[1])
    if command == CMD_NOTICE:
        if data[0] == NOTICE_BATTERY:
            return "batteryPushed", _battery(data[1], data[2])
        if data[0] in NOTICE_NEW_DATA:
            return "newData", {"kind": NOTICE_NEW_DATA[data[0]]}
        return "notice", {"code": data[0]}
    if command == CMD_HEART_RATE_LOG_SETTINGS:
        if data[0] == SETTING_WRITE:
            return "heartRateLogSettingsWritten", {}
        if data[0] != SETTING_READ:
            raise QRingError("invalidValue", "heart-rate log settings answer kind %d is not 1 (read) or 2 (write)" % data[0])
        enabled = _flag(data[1], 1, 2, "heart-rate log enabled")
        interval = data[2]
        if interval == 0:
            raise QRingError("valueOutOfRange", "heart-rate log interval 0 min")
        return "heartRateLogSettings", {"enabled": enabled, "interval": interval}
    if command in SWITCH_NAMES:
        name = SWITCH_NAMES[command]
        if data[0] == SETTING_WRITE:
            return "switchWritten", {"monitor": name}
        if data[0] != SETTING_READ:
            raise QRingError("invalidValue", "%s switch answer kind %d is not 1 (read) or 2 (write)" % (name, data[0]))
        return "switch", {"monitor": name, "enabled": _flag(data[1], 1, 0, name + " switch")}
    if command == CMD_REAL_TIME_START:
        kind, error, value = data[0], data[1], data[2]
        if kind != 1:
            return "realTimeOther", {"type": kind}
        if error != 0:
            return "realTimeError", {"code": error}
        return "realTimeHeartRate", {"bpm": value}
    if command == CMD_REAL_TIME_STOP:
        return "realTimeStopped", {}
    raise QRingError("unexpectedCommand", "command 0x%02x is not an answer this dialect reads" % command)


class HeartRateLogAssembler:
    """Packets of one heart-rate log answer (command 0x15) for the day requested -> samples."""

    def __init__(self, day, zone):
        self.day = day
        self.zone = zone
        self.count = None
        self.next_index = 0
        self.values = []
        self.slot_minutes_reported = None
        # the day of the last whole answer passed over as another request's (a copy of an
        # earlier answer meeting this request); None: none
        self.passed_over = None

    def feed(self, raw):
        """None while incomplete; then {"samples": [...], "slotMinutes": n} or {"noData": True}."""
        command, data = open_packet(raw)
        if command != CMD_HEART_RATE_LOG:
            raise QRingError("unexpectedCommand", "command 0x%02x inside a heart-rate log" % command)
        index = data[0]
        if index == 0xFF:
            return {"noData": True}
        if self.next_index == 0 and index != 0:
            # the tail of an earlier answer the central stopped waiting for
            return None
        if index != self.next_index:
            raise QRingError("outOfOrder", "heart-rate log packet %d, expected %d" % (index, self.next_index))
        if index == 0:
            if data[1] < 2:
                raise QRingError("valueOutOfRange", "heart-rate log of %d packets (at least 2)" % data[1])
            self.count = data[1]
            self.slot_minutes_reported = data[2]
        elif index == 1:
            stamp = struct.unpack_from("<I", data, 1)[0]
            if stamp // 86400 != day_wall_seconds(self.day) // 86400:
                # another day's whole answer: passed over, this one starts again at its packet 0
                self.passed_over = (datetime(1970, 1, 1) + timedelta(seconds=stamp)).date()
                self.count, self.next_index, self.values, self.slot_minutes_reported = None, 0, [], None
                return None
            self.values.extend(data[5:14])
        else:
            self.values.extend(data[1:14])
        self.next_index += 1
        if self.count is not None and self.next_index == self.count:
            return {"samples": self._samples(), "slotMinutes": self.slot_minutes_reported}
        return None

    def _samples(self):
        midnight = day_wall_seconds(self.day)
        out = []
        for slot, value in enumerate(self.values[:SLOTS_PER_DAY]):
            if value in (0, 0xFF):
                continue
            out.append({"time": instant_of_wall(self.zone, midnight + slot * SLOT_MINUTES * 60),
                        "bpm": value})
        return out


class StepsAssembler:
    """Packets of one steps answer (command 0x43) -> quarter-hour intervals."""

    def __init__(self, zone):
        self.zone = zone
        self.calories_times_10 = None
        self.intervals = []

    def feed(self, raw):
        command, data = open_packet(raw)
        if command != CMD_STEPS:
            raise QRingError("unexpectedCommand", "command 0x%02x inside a steps answer" % command)
        if data[0] == 0xFF:
            return {"intervals": []}
        if data[0] == 0xF0:
            self.calories_times_10 = data[2] == 1
            self.intervals = []
            return None
        if self.calories_times_10 is None:
            raise QRingError("outOfOrder", "steps record before the steps header")
        year = 2000 + from_bcd(data[0], "year")
        month = from_bcd(data[1], "month")
        day_ = from_bcd(data[2], "day")
        quarter = data[3]
        if quarter > 95:
            raise QRingError("valueOutOfRange", "quarter-hour %d is outside 0...95" % quarter)
        try:
            wall = datetime(year, month, day_) + timedelta(minutes=15 * quarter)
        except ValueError:
            raise QRingError("valueOutOfRange", "date %04d-%02d-%02d does not exist" % (year, month, day_))
        index, total = data[4], data[5]
        if index >= total:
            raise QRingError("valueOutOfRange", "steps record %d of %d" % (index, total))
        calories, steps, distance = struct.unpack_from("<HHH", data, 6)
        self.intervals.append({"start": instant_of_wall(self.zone, wall_seconds(wall)),
                               "wall": wall.isoformat(),
                               "steps": steps,
                               "calories": calories * 10 if self.calories_times_10 else calories,
                               "distance": distance})
        if index == total - 1:
            return {"intervals": self.intervals}
        return None


# --------------------------------------------------------------------------- big data

def crc16_modbus(data):
    crc = 0xFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


assert crc16_modbus(b"123456789") == 0x4B37, "CRC-16/MODBUS check value"


def big_data_frame(type_, payload):
    return bytes([BIG_DATA_MARKER, type_]) + struct.pack("<HH", len(payload), crc16_modbus(payload)) + payload


def sleep_request():
    """The sleep request the project sends (Gadgetbridge's form): one payload byte 0xFF."""
    return big_data_frame(BIG_DATA_SLEEP, b"\xff")


class BigDataReassembler:
    """Notifications of the big-data characteristic -> frames (qring.md, "Big-data frames")."""

    def __init__(self, max_payload=BIG_DATA_MAX_PAYLOAD):
        self.max_payload = max_payload
        self.buffer = b""
        self.garbage = 0
        self.oversized = 0
        self.crc_mismatches = 0
        self.incomplete = 0

    def feed(self, chunk):
        self.buffer += bytes(chunk)
        frames = []
        while True:
            start = self.buffer.find(bytes([BIG_DATA_MARKER]))
            if start < 0:
                self.garbage += len(self.buffer)
                self.buffer = b""
                return frames
            self.garbage += start
            self.buffer = self.buffer[start:]
            if len(self.buffer) < BIG_DATA_HEADER:
                return frames
            length, crc = struct.unpack_from("<HH", self.buffer, 2)
            if length > self.max_payload:
                self.oversized += 1
                self.buffer = self.buffer[1:]
                continue
            if len(self.buffer) < BIG_DATA_HEADER + length:
                return frames
            payload = self.buffer[BIG_DATA_HEADER:BIG_DATA_HEADER + length]
            type_ = self.buffer[1]
            self.buffer = self.buffer[BIG_DATA_HEADER + length:]
            if crc16_modbus(payload) != crc:
                self.crc_mismatches += 1
                continue
            frames.append((type_, payload))

    def expire(self):
        """The caller's timeout: a frame whose bytes never all arrived is dropped."""
        if self.buffer:
            self.incomplete += 1
        self.buffer = b""


# --------------------------------------------------------------------------- sleep

def decode_sleep(payload, today, zone):
    """The payload of a type-0x27 frame -> nights; `today` is the ring's date (local)."""
    if len(payload) == 0:
        return []
    count = payload[0]
    at = 1
    days = []
    for n in range(count):
        if len(payload) - at < 2:
            raise QRingError("sleepTruncated", "sleep day %d of %d: its header is missing" % (n + 1, count))
        days_ago, day_bytes = payload[at], payload[at + 1]
        at += 2
        if day_bytes < 4 or (day_bytes - 4) % 2:
            raise QRingError("sleepDayLength", "sleep day %d: length %d is not 4 + whole pairs" % (n + 1, day_bytes))
        if len(payload) - at < day_bytes:
            raise QRingError("sleepDayOverrun", "sleep day %d claims %d bytes, %d are left"
                             % (n + 1, day_bytes, len(payload) - at))
        body = payload[at:at + day_bytes]
        at += day_bytes
        days.append(_sleep_day(n + 1, days_ago, body, today, zone))
    if at != len(payload):
        raise QRingError("sleepTrailingBytes", "%d bytes after the last sleep day" % (len(payload) - at))
    return days


def _sleep_day(number, days_ago, body, today, zone):
    start, end = struct.unpack_from("<HH", body, 0)
    for what, minute in (("start", start), ("end", end)):
        if minute >= 1440:
            raise QRingError("sleepMinuteOutOfRange", "sleep day %d: %s minute %d is not below 1440" % (number, what, minute))
    day = today - timedelta(days=days_ago)
    start_day = day - timedelta(days=1) if start > end else day
    span = end - start if start <= end else end + 1440 - start
    t = instant_of_wall(zone, day_wall_seconds(start_day) + start * 60)
    first = t
    items, dropped, total = [], 0, 0
    for i in range(4, len(body), 2):
        code, minutes = body[i], body[i + 1]
        if code not in SLEEP_STAGES and code not in SLEEP_STAGES_DROPPED:
            raise QRingError("sleepStageOutOfRange", "sleep day %d: stage %d is not 0...5" % (number, code))
        total += minutes
        if minutes and code in SLEEP_STAGES:
            items.append({"stage": SLEEP_STAGES[code], "start": t, "duration": minutes * 60})
        elif minutes:
            dropped += 1
        t += minutes * 60
    if total > span + SLEEP_OVERRUN_TOLERANCE:
        raise QRingError("sleepStagesOverrun", "sleep day %d: stages last %d min, start to end is %d min"
                         % (number, total, span))
    return {"daysAgo": days_ago, "date": day.isoformat(), "start": first, "end": first + span * 60,
            "items": items, "droppedPairs": dropped}
