#!/usr/bin/env python3
"""Generate the Huami dialect's test vectors (protocol-spec/huami/vectors/*.json).

The codec is scripts/huami/huami_codec.py, an independent implementation of protocol-spec/huami/huami.md.
The Swift module TSHuami is tested against the files this script writes
(Tests/Families/Huami/CodecTests/HuamiVectorTests.swift). scripts/test runs it with --check, so a stale file
fails the test command.

    python3 scripts/huami/huami_vectors.py          # (re)write the files
    python3 scripts/huami/huami_vectors.py --check  # exit 1 if the files on disk differ

Every vector is produced by running huami_codec on its input; the asserts pin the facts the spec
states by hand (FIPS-197's AES example, the auth bytes of the sources, the Berlin times).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))  # scripts/lib: vector_files
import vector_files  # noqa: E402  (writing and --check of the vector files)
import huami_codec as h  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTOR_DIR = os.path.join(ROOT, "protocol-spec", "huami", "vectors")
BERLIN = "Europe/Berlin"
KEY = "0123456789abcdef0123456789abcdef"

ENCODERS = {
    ("auth", "toBand"): h.auth_request, ("auth", "fromBand"): h.auth_answer,
    ("configuration", "toBand"): h.config_request, ("configuration", "fromBand"): h.config_answer,
    ("heartRateControl", "toBand"): h.heart_rate_command,
    ("battery", "fromBand"): lambda k, b: h.battery_bytes(b),
    ("fetchControl", "toBand"): h.fetch_request, ("fetchControl", "fromBand"): h.fetch_answer,
    ("activityData", "fromBand"): lambda k, b: bytes([b["counter"]]) + bytes.fromhex(b["data"]),
    ("currentTime", "toBand"): lambda k, b: h.current_time_bytes(b),
}
DECODERS = {
    ("auth", "toBand"): h.read_auth_request, ("auth", "fromBand"): h.read_auth_answer,
    ("configuration", "toBand"): h.read_config_request, ("configuration", "fromBand"): h.read_config_answer,
    ("heartRateControl", "toBand"): h.read_heart_rate_command,
    ("battery", "fromBand"): h.read_battery,
    ("fetchControl", "toBand"): h.read_fetch_request, ("fetchControl", "fromBand"): h.read_fetch_answer,
    ("activityData", "fromBand"): h.read_data_packet,
    ("currentTime", "toBand"): lambda raw: ("time", h.read_current_time(raw)),
}


def error_of(fn):
    try:
        fn()
    except h.HuamiError as e:
        return e.code
    raise AssertionError("expected a HuamiError")


def berlin(y, mo, d, hh, mi, s=0):
    from datetime import datetime
    from zoneinfo import ZoneInfo
    return int(datetime(y, mo, d, hh, mi, s, tzinfo=ZoneInfo(BERLIN)).timestamp())


# --------------------------------------------------------------------------- messages.json

def message_vectors():
    out = []

    def add(name, characteristic, direction, kind, body, encode_only_body=None, decode_only=False, raw=None):
        """body: what decoding the bytes gives; encode_only_body: extra fields only the encoder
        reads (the crypt flag of an auth answer)."""
        full = dict(body, **(encode_only_body or {}))
        if raw is None:
            raw = ENCODERS[(characteristic, direction)](kind, full)
        got_kind, got_body = DECODERS[(characteristic, direction)](raw)
        assert got_kind == kind, (name, got_kind)
        assert got_body == body, (name, got_body, body)
        entry = {"name": name, "characteristic": characteristic, "direction": direction, "kind": kind, "body": full, "bytes": raw.hex()}
        if decode_only:
            entry["decodeOnly"] = True
        out.append(entry)

    key = KEY
    # auth (§2): G InitOperation, M authsession
    add("send the key, Mi Band 3 flags", "auth", "toBand", "sendKey", {"authFlags": 0, "key": key})
    add("send the key, Bip flags (0x08)", "auth", "toBand", "sendKey", {"authFlags": 8, "key": key})
    add("random number request, Mi Band 3 (M: 02 00)", "auth", "toBand", "requestRandom", {"authFlags": 0, "cryptFlags": 0})
    add("random number request, Bip (02 08)", "auth", "toBand", "requestRandom", {"authFlags": 8, "cryptFlags": 0})
    add("random number request with the crypt flag (82 00 02 01 00)", "auth", "toBand", "requestRandom", {"authFlags": 0, "cryptFlags": 0x80})
    add("encrypted number, no crypt flag", "auth", "toBand", "sendEncrypted",
        {"authFlags": 0, "cryptFlags": 0, "encrypted": h.aes_ecb(bytes.fromhex(key), bytes(range(16))).hex()})
    add("encrypted number with the crypt flag (83 00 …)", "auth", "toBand", "sendEncrypted",
        {"authFlags": 0, "cryptFlags": 0x80, "encrypted": h.aes_ecb(bytes.fromhex(key), bytes(range(16, 32))).hex()})
    add("key stored (10 01 01)", "auth", "fromBand", "keyStored", {})
    add("challenge (10 02 01 + 16)", "auth", "fromBand", "random", {"random": bytes(range(16)).hex()}, {"cryptFlags": 0})
    add("challenge with the crypt flag (10 82 01 + 16)", "auth", "fromBand", "random",
        {"random": bytes(range(0xF0, 0x100)).hex()}, {"cryptFlags": 0x80})
    add("auth accepted (10 03 01)", "auth", "fromBand", "accepted", {}, {"cryptFlags": 0})
    add("auth accepted, crypt flag (10 83 01)", "auth", "fromBand", "accepted", {}, {"cryptFlags": 0x80})
    add("wrong key (10 03 04)", "auth", "fromBand", "refused", {"opcode": 3, "status": 4}, {"cryptFlags": 0})
    add("wrong key, crypt flag (10 83 04)", "auth", "fromBand", "refused", {"opcode": 3, "status": 4}, {"cryptFlags": 0x80})
    add("key not stored (10 01 02, M's KEY_ABORTED)", "auth", "fromBand", "refused", {"opcode": 1, "status": 2}, {"cryptFlags": 0})
    add("challenge refused (10 02 04)", "auth", "fromBand", "refused", {"opcode": 2, "status": 4}, {"cryptFlags": 0})
    add("challenge with an unexpected high nibble (10 42 01)", "auth", "fromBand", "random",
        {"random": "00" * 16}, decode_only=True, raw=bytes([0x10, 0x42, 0x01]) + bytes(16))
    assert out[2]["bytes"] == "0200" and out[3]["bytes"] == "0208" and out[4]["bytes"] == "8200020100"
    assert out[12]["bytes"] == "100304"

    # time (§3)
    for name, unix in (("2025-11-24 07:05:09 in Berlin (CET, +4 quarter-hours)", berlin(2025, 11, 24, 7, 5, 9)),
                       ("2025-07-01 02:00 in Berlin (CEST, +8)", berlin(2025, 7, 1, 2, 0)),
                       ("a Sunday: 2025-11-30 23:59:59 in Berlin", berlin(2025, 11, 30, 23, 59, 59))):
        add("current time " + name, "currentTime", "toBand", "time", h.time_fields(unix, BERLIN))
    add("current time in New York, negative zone (−20)", "currentTime", "toBand", "time",
        h.time_fields(1763964309, "America/New_York"))
    add("current time in Kathmandu (+5:45 = 23 quarter-hours)", "currentTime", "toBand", "time",
        h.time_fields(1763964309, "Asia/Kathmandu"))
    assert out[-5]["bytes"] == "e9070b1807050901000004", out[-5]["bytes"]  # 2025 = 07e9; Monday = 1; zone 4

    # configuration (§4)
    alarm = {"slot": 0, "enabled": True, "snooze": True, "hour": 7, "minute": 0, "days": 31}
    add("alarm 07:00 workdays, slot 0, snooze", "configuration", "toBand", "setAlarm", alarm)
    add("alarm 06:30 once, no snooze, slot 9 (M: 02 c9 06 1e 80)", "configuration", "toBand", "setAlarm",
        {"slot": 9, "enabled": True, "snooze": False, "hour": 6, "minute": 30, "days": 0})
    add("alarm disabled, weekend, slot 3", "configuration", "toBand", "setAlarm",
        {"slot": 3, "enabled": False, "snooze": True, "hour": 9, "minute": 15, "days": 96})
    add("alarm disabled, once, slot 4 (days 80 tells it from a cleared slot)", "configuration", "toBand", "setAlarm",
        {"slot": 4, "enabled": False, "snooze": True, "hour": 0, "minute": 0, "days": 0})
    add("alarm slot 5 cleared", "configuration", "toBand", "clearAlarm", {"slot": 5})
    add("alarm slot 2 cleared as Gadgetbridge writes it (the old time kept)", "configuration", "toBand", "clearAlarm",
        {"slot": 2}, decode_only=True, raw=bytes([0x02, 0x02, 0x07, 0x1E, 0x00]))
    add("alarm status request", "configuration", "toBand", "alarmStatus", {})
    add("alarm table request", "configuration", "toBand", "alarmTable", {})
    assert out[-7]["bytes"] == "02c9061e80"
    add("alarm set (10 02 01)", "configuration", "fromBand", "alarmSet", {"status": 1})
    add("alarm status: slots 0 on, 3 off, 9 on", "configuration", "fromBand", "alarmStatus",
        {"slots": [{"slot": 0, "enabled": True}, {"slot": 3, "enabled": False}, {"slot": 9, "enabled": True}]})
    add("alarm status: no alarms", "configuration", "fromBand", "alarmStatus", {"slots": []})
    add("chunk: a complete alarm table", "configuration", "fromBand", "chunk",
        {"position": "complete", "type": 1, "payload": h.alarm_table_payload([alarm]).hex()})
    add("chunk: first", "configuration", "fromBand", "chunk", {"position": "first", "type": 1, "payload": "020080"})
    add("chunk: middle", "configuration", "fromBand", "chunk", {"position": "middle", "payload": "070080"})
    add("chunk: last", "configuration", "fromBand", "chunk", {"position": "last", "payload": "1f"})
    add("another configuration answer, kept as it came", "configuration", "fromBand", "other",
        {"opcode": 0x06, "status": 1, "rest": "3031"})
    add("alarm status refused, kept as it came", "configuration", "fromBand", "other", {"opcode": 0x0D, "status": 2, "rest": ""})

    # heart rate (§5)
    add("all-day heart rate every 10 minutes", "heartRateControl", "toBand", "interval", {"minutes": 10})
    add("all-day heart rate off", "heartRateControl", "toBand", "interval", {"minutes": 0})
    add("sleep heart-rate monitoring on (15 00 01)", "heartRateControl", "toBand", "sleepMonitoring", {"on": True})
    add("sleep heart-rate monitoring off (15 00 00)", "heartRateControl", "toBand", "sleepMonitoring", {"on": False})
    add("manual measurement start (M: 15 02 01)", "heartRateControl", "toBand", "manualMeasurement", {"on": True})
    add("manual measurement stop (15 02 00)", "heartRateControl", "toBand", "manualMeasurement", {"on": False})

    # battery (§6)
    add("battery 64 %, not charging", "battery", "fromBand", "battery", {"level": 64, "state": 0, "status": "discharging"})
    add("battery 100 %, charging", "battery", "fromBand", "battery", {"level": 100, "state": 1, "status": "charging"})
    add("battery 3 bytes only, state 3 (unknown)", "battery", "fromBand", "battery",
        {"level": 20, "state": 3, "status": "unknown"}, decode_only=True, raw=bytes([0x0F, 20, 3]))

    # the activity fetch (§7)
    since = h.short(h.time_fields(berlin(2025, 11, 23, 20, 0), BERLIN))
    add("fetch activity since 2025-11-23 20:00 Berlin", "fetchControl", "toBand", "start", {"type": 1, "since": since})
    add("fetch start with seconds precision (13 bytes)", "fetchControl", "toBand", "start", {"type": 1, "since": since},
        decode_only=True, raw=bytes([1, 1]) + h.current_time_bytes(h.time_fields(berlin(2025, 11, 23, 20, 0), BERLIN)))
    add("fetch the data", "fetchControl", "toBand", "fetchData", {})
    add("acknowledge the data", "fetchControl", "toBand", "acknowledge", {})
    assert out[-4]["bytes"] == "0101e9070b1714000004", out[-4]["bytes"]
    add("fetch started: 960 bytes from 20:00", "fetchControl", "fromBand", "started", {"count": 960, "start": since})
    add("fetch started: nothing to send", "fetchControl", "fromBand", "started", {"count": 0, "start": since})
    add("fetch started, 16 bytes (a later model's trailing byte)", "fetchControl", "fromBand", "started",
        {"count": 4, "start": since}, decode_only=True,
        raw=bytes([0x10, 1, 1, 4, 0, 0, 0]) + h.short_time_bytes(since) + b"\x00")
    add("fetch finished (10 02 01)", "fetchControl", "fromBand", "finished", {})
    add("fetch finished with a CRC-32", "fetchControl", "fromBand", "finished", {"crc32": 0xCBF43926})
    add("acknowledged (10 03 01)", "fetchControl", "fromBand", "acknowledged", {})
    add("fetch refused (10 01 02)", "fetchControl", "fromBand", "refused", {"opcode": 1, "status": 2})
    add("data packet 0", "activityData", "fromBand", "packet", {"counter": 0, "data": "09320048"})
    add("data packet 255 (the counter wraps after it)", "activityData", "fromBand", "packet", {"counter": 255, "data": "0b"})
    return out


# --------------------------------------------------------------------------- invalid.json

def invalid_vectors():
    out = []

    def bad(name, characteristic, direction, raw, code):
        got = error_of(lambda: DECODERS[(characteristic, direction)](raw))
        assert got == code, (name, got, code)
        out.append({"name": name, "characteristic": characteristic, "direction": direction, "input": raw.hex(), "error": code})

    bad("auth answer too short", "auth", "fromBand", bytes([0x10, 0x03]), "tooShort")
    bad("auth answer not a response", "auth", "fromBand", bytes([0x11, 0x03, 0x01]), "notAResponse")
    bad("auth answer opcode 5", "auth", "fromBand", bytes([0x10, 0x05, 0x01]), "unknownOpcode")
    bad("challenge of 15 bytes", "auth", "fromBand", bytes([0x10, 0x02, 0x01]) + bytes(15), "badLength")
    bad("accepted with a trailing byte", "auth", "fromBand", bytes([0x10, 0x03, 0x01, 0x00]), "badLength")
    bad("refusal with a trailing byte", "auth", "fromBand", bytes([0x10, 0x03, 0x04, 0x00]), "badLength")
    bad("auth request of one byte", "auth", "toBand", bytes([0x02]), "tooShort")
    bad("send-key with a 15-byte key", "auth", "toBand", bytes([0x01, 0x00]) + bytes(15), "badLength")
    bad("random request with the crypt flag, wrong tail", "auth", "toBand", bytes([0x82, 0x00, 0x02, 0x01, 0x01]), "invalidValue")
    bad("random request without the crypt flag, 5 bytes", "auth", "toBand", bytes([0x02, 0x00, 0x02, 0x01, 0x00]), "badLength")
    bad("auth request opcode 4", "auth", "toBand", bytes([0x04, 0x00]), "unknownOpcode")
    bad("send-key with the crypt flag", "auth", "toBand", bytes([0x81, 0x00]) + bytes(16), "unknownOpcode")

    t = h.current_time_bytes(h.time_fields(berlin(2025, 11, 24, 7, 5, 9), BERLIN))
    bad("current time of 10 bytes", "currentTime", "toBand", t[:10], "badLength")
    bad("current time on 2025-02-29", "currentTime", "toBand", t[:2] + bytes([2, 29]) + t[4:], "valueOutOfRange")
    bad("current time 24:00", "currentTime", "toBand", t[:4] + bytes([24]) + t[5:], "valueOutOfRange")
    bad("current time, day of week 0", "currentTime", "toBand", t[:7] + bytes([0]) + t[8:], "valueOutOfRange")
    bad("current time, day of week says Tuesday on a Monday", "currentTime", "toBand", t[:7] + bytes([2]) + t[8:], "invalidValue")
    bad("current time, zone +15 h (60)", "currentTime", "toBand", t[:10] + bytes([60]), "valueOutOfRange")

    bad("alarm request of 4 bytes", "configuration", "toBand", bytes([0x02, 0x80, 7, 0]), "badLength")
    bad("alarm slot 10", "configuration", "toBand", bytes([0x02, 0x8A, 7, 0, 0x1F]), "valueOutOfRange")
    bad("alarm hour 24", "configuration", "toBand", bytes([0x02, 0x80, 24, 0, 0x1F]), "valueOutOfRange")
    bad("alarm days 0x81", "configuration", "toBand", bytes([0x02, 0x80, 7, 0, 0x81]), "invalidValue")
    bad("enabled alarm with days 0", "configuration", "toBand", bytes([0x02, 0x80, 7, 0, 0x00]), "invalidValue")
    bad("alarm flags 0x20", "configuration", "toBand", bytes([0x02, 0xA0, 7, 0, 0x1F]), "invalidValue")
    bad("no-snooze flag on a disabled alarm", "configuration", "toBand", bytes([0x02, 0x40, 7, 0, 0x1F]), "invalidValue")
    bad("alarm status request with a byte too many", "configuration", "toBand", bytes([0x0D, 0x00]), "badLength")
    bad("ff request other than the alarm table", "configuration", "toBand", bytes([0xFF, 0x02, 0, 0, 0]), "invalidValue")
    bad("configuration request opcode 07", "configuration", "toBand", bytes([0x07]), "unknownOpcode")
    bad("alarm status answer claims 3, carries 2", "configuration", "fromBand", bytes([0x10, 0x0D, 0x01, 0, 0, 0, 0, 0, 3, 0x10, 0x01]), "countMismatch")
    bad("alarm status answer cut at byte 8", "configuration", "fromBand", bytes([0x10, 0x0D, 0x01, 0, 0, 0, 0, 0]), "tooShort")
    bad("alarm status with slot 12", "configuration", "fromBand", bytes([0x10, 0x0D, 0x01, 0, 0, 0, 0, 0, 1, 0x1C]), "valueOutOfRange")
    bad("alarm status byte 0x30", "configuration", "fromBand", bytes([0x10, 0x0D, 0x01, 0, 0, 0, 0, 0, 1, 0x31]), "invalidValue")
    bad("alarm-set answer with a trailing byte", "configuration", "fromBand", bytes([0x10, 0x02, 0x01, 0x00]), "badLength")
    bad("chunk flags 0x20", "configuration", "fromBand", bytes([0x80, 0x01, 0x20, 0x00, 0x01, 0, 0, 0]), "invalidValue")
    bad("first chunk of 7 bytes", "configuration", "fromBand", bytes([0x80, 0x01, 0x00, 0x00, 0x01, 0, 0]), "tooShort")
    bad("configuration answer not a response", "configuration", "fromBand", bytes([0x20, 0x02, 0x01]), "notAResponse")
    bad("configuration answer of one byte", "configuration", "fromBand", bytes([0x10]), "tooShort")

    bad("heart-rate interval of 3 bytes", "heartRateControl", "toBand", bytes([0x14, 10, 0]), "badLength")
    bad("heart-rate switch value 2", "heartRateControl", "toBand", bytes([0x15, 0x00, 0x02]), "invalidValue")
    bad("heart-rate switch mode 01", "heartRateControl", "toBand", bytes([0x15, 0x01, 0x01]), "unknownOpcode")
    bad("heart-rate opcode 16", "heartRateControl", "toBand", bytes([0x16, 0x00]), "unknownOpcode")

    bad("battery of 2 bytes", "battery", "fromBand", bytes([0x0F, 50]), "tooShort")
    bad("battery 101 %", "battery", "fromBand", bytes([0x0F, 101, 0]), "valueOutOfRange")

    since = h.short_time_bytes(h.short(h.time_fields(berlin(2025, 11, 23, 20, 0), BERLIN)))
    bad("fetch start of 9 bytes", "fetchControl", "toBand", bytes([1, 1]) + since[:7], "badLength")
    bad("fetch start on month 13", "fetchControl", "toBand", bytes([1, 1]) + since[:2] + bytes([13]) + since[3:], "valueOutOfRange")
    bad("fetch data with a trailing byte", "fetchControl", "toBand", bytes([2, 0]), "badLength")
    bad("acknowledgement with a keep byte (Zepp OS form)", "fetchControl", "toBand", bytes([3, 9]), "badLength")
    bad("fetch request opcode 04", "fetchControl", "toBand", bytes([4]), "unknownOpcode")
    bad("fetch answer of 2 bytes", "fetchControl", "fromBand", bytes([0x10, 0x01]), "tooShort")
    bad("fetch answer not a response", "fetchControl", "fromBand", bytes([0x00, 0x01, 0x01]), "notAResponse")
    bad("fetch answer opcode 04", "fetchControl", "fromBand", bytes([0x10, 0x04, 0x01]), "unknownOpcode")
    bad("fetch start answer of 14 bytes", "fetchControl", "fromBand", bytes([0x10, 1, 1, 4, 0, 0, 0]) + since[:7], "badLength")
    bad("fetch start answer at 25:00", "fetchControl", "fromBand", bytes([0x10, 1, 1, 4, 0, 0, 0]) + since[:4] + bytes([25]) + since[5:], "valueOutOfRange")
    bad("fetch end of 5 bytes", "fetchControl", "fromBand", bytes([0x10, 2, 1, 0, 0]), "badLength")
    bad("acknowledgement answer with a trailing byte", "fetchControl", "fromBand", bytes([0x10, 3, 1, 0]), "badLength")
    bad("data packet with a counter only", "activityData", "fromBand", bytes([0x00]), "tooShort")
    bad("empty data packet", "activityData", "fromBand", b"", "tooShort")
    return out


# --------------------------------------------------------------------------- auth.json

def auth_vectors():
    out = []

    def add(name, key, challenge, flags):
        enc = h.aes_ecb(bytes.fromhex(key), bytes.fromhex(challenge))
        req = h.auth_request("sendEncrypted", {"authFlags": flags[0], "cryptFlags": flags[1], "encrypted": enc.hex()})
        out.append({"name": name, "key": key, "challenge": challenge, "authFlags": flags[0], "cryptFlags": flags[1],
                    "encrypted": enc.hex(), "request": req.hex()})

    add("FIPS-197 appendix C.1 (AES-128)", "000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff", (0, 0))
    assert out[0]["encrypted"] == "69c4e0d86a7b0430d8cdb78070b4c55a"
    add("the vectors' key, a zero challenge, Mi Band 3", KEY, "00" * 16, (0, 0))
    add("the vectors' key, a challenge, crypt flag", KEY, "f0e1d2c3b4a5968778695a4b3c2d1e0f", (0, 0x80))
    add("Gadgetbridge's default key (ASCII 0123456789@ABCDE), Bip flags", b"0123456789@ABCDE".hex(), "a5" * 16, (8, 0))

    texts = []
    for text in (KEY, "0x" + KEY.upper(), "  " + KEY + "\n", KEY[:30], KEY + "00", "0x" + KEY[:-1] + "g", ""):
        try:
            texts.append({"text": text, "key": h.parse_key(text).hex()})
        except h.HuamiError as e:
            texts.append({"text": text, "error": e.code})
    return {"challenges": out, "keyTexts": texts}


# --------------------------------------------------------------------------- time.json

def time_vectors():
    out = []
    cases = [
        ("Berlin winter", berlin(2025, 11, 24, 7, 5, 9), BERLIN),
        ("Berlin summer", berlin(2025, 7, 1, 2, 0), BERLIN),
        ("Berlin, the last CEST minute before DST ends (02:59 +2)", 1761440340, BERLIN),
        ("Berlin, the first CET minute after DST ends (02:00 +1)", 1761440400 + 3600 - 3600, BERLIN),
        ("Berlin, the first CEST minute (03:00 +2) on 2025-03-30", 1743296400, BERLIN),
        ("New York", 1763964309, "America/New_York"),
        ("Kathmandu (+5:45)", 1763964309, "Asia/Kathmandu"),
        ("UTC, leap day 2024", 1709208000, "UTC"),
        ("Kiritimati (+14, zone 56)", 1763964309, "Pacific/Kiritimati"),
    ]
    for name, unix, zone in cases:
        f = h.time_fields(unix, zone)
        ct = h.current_time_bytes(f)
        sh = h.short_time_bytes(f)
        assert h.fields_unix(f) == unix
        out.append({"name": name, "unix": unix, "zone": zone, "fields": f, "currentTime": ct.hex(), "short": sh.hex()})
    assert out[2]["fields"]["zone"] == 8 and out[3]["fields"]["zone"] == 4 and out[2]["fields"]["hour"] == 2
    return out


# --------------------------------------------------------------------------- fetch.json

def fetch_vectors():
    out = []

    def run(name, count, size, notifications, finished, verify=False, window=8):
        a = None
        result = None
        try:
            a = h.FetchAssembler(count, size, window)
        except h.HuamiError as e:
            result = {"error": e.code, "at": "start"}
        if result is None:
            for i, n in enumerate(notifications):
                try:
                    a.feed(n)
                except h.HuamiError as e:
                    result = {"error": e.code, "at": i}
                    break
        if result is None:
            if finished is None:
                result = {"error": "transferEndedEarly", "at": "timeout"} if len(a.data) < count or a.held else {"data": a.data.hex()}
            else:
                kind, body = h.read_fetch_answer(finished)
                assert kind == "finished"
                try:
                    result = {"data": a.finish(body.get("crc32"), verify).hex()}
                except h.HuamiError as e:
                    result = {"error": e.code, "at": "finish"}
        out.append({"name": name, "count": count, "sampleSize": size, "window": window, "verifyCRC": verify,
                    "notifications": [n.hex() for n in notifications],
                    "finished": finished.hex() if finished is not None else None, "result": result})

    done = bytes([0x10, 0x02, 0x01])
    data = bytes((i * 7 + 3) & 0xFF for i in range(96))   # 24 four-byte samples, 12 eight-byte
    packets = h.data_packets(data)
    crc = h.crc32(data)
    with_crc = done + crc.to_bytes(4, "little")
    run("96 bytes in 6 packets of 16, in order", 96, 4, packets, done)
    run("the same in 19-byte packets (samples cut across packets)", 96, 4, h.data_packets(data, 19), done)
    run("the same as 8-byte samples, with its CRC-32 checked", 96, 8, packets, with_crc, verify=True)
    run("a wrong CRC-32, checked", 96, 4, packets, done + (crc ^ 1).to_bytes(4, "little"), verify=True)
    run("a wrong CRC-32, not checked (Gadgetbridge does not check it)", 96, 4, packets, done + (crc ^ 1).to_bytes(4, "little"))
    run("packets 2 and 3 swapped (EATT)", 96, 4, [packets[0], packets[2], packets[1]] + packets[3:], done)
    run("the last three packets reversed", 96, 4, packets[:3] + packets[3:][::-1], done)
    run("packet 2 lost: the end comes with one held", 96, 4, packets[:2] + packets[3:], done)
    run("packet 1 lost and more than the window after it", 96, 4, [packets[0]] + packets[2:], done, window=2)
    run("a counter far ahead", 96, 4, [packets[0], bytes([40]) + packets[1][1:]], done)
    run("a packet repeated", 96, 4, packets[:3] + [packets[2]], done)
    run("a held packet repeated", 96, 4, [packets[0], packets[2], packets[2]], done)
    run("the transfer stops early (the end after 4 of 6 packets)", 96, 4, packets[:4], done)
    run("the transfer stops and the caller's timeout runs out", 96, 4, packets[:4], None)
    run("the count lies low: 80 announced, 96 sent", 80, 4, packets, done)
    run("the count lies high: 100 announced, 96 sent", 100, 4, packets, done)
    run("a count that is no whole number of 8-byte samples", 92, 8, packets, done)
    run("nothing announced, nothing sent", 0, 4, [], done)
    run("a packet of a counter only", 96, 4, [packets[0], bytes([1])], done)
    big = bytes(i & 0xFF for i in range(4 * 1300))          # 274 packets: the counter wraps
    bp = h.data_packets(big)
    run("5200 bytes in 325 packets: the counter wraps from 255 to 0", len(big), 4, bp, done)
    run("after the wrap, counter 255 again is a repeat", len(big), 4, bp[:258] + [bp[255]], done)
    run("244-byte notifications at MTU 247 (a counter and 243 data bytes)", 488, 8, h.data_packets(bytes(range(244)) * 2, 243), done)
    # EATT: the e2e journey saw 168 packets come while packet 102 was missing. Counter 14 after
    # 101 is 168 ahead or 88 behind; 350 packets announced leave room ahead, so it is held.
    long = bytes((i * 5 + 1) & 0xFF for i in range(16 * 350))
    lp = h.data_packets(long)
    run("168 packets overtake packet 102 (EATT): the count tells ahead from behind", len(long), 4,
        lp[:102] + lp[103:271] + [lp[102]] + lp[271:], done, window=254)
    run("the same batch with the default window of 120 of before is refused", len(long), 4,
        lp[:102] + lp[103:271] + [lp[102]] + lp[271:], done, window=120)
    run("a stale packet from 200 back is held ahead, then caught when its slot's own packet comes", len(long), 4,
        lp[:260] + [lp[60]] + lp[260:], done, window=254)
    run("near the end a counter 88 behind is a repeat: the count leaves no packet that far ahead", len(long), 4,
        lp[:340] + [lp[252]], done, window=254)
    return out


# --------------------------------------------------------------------------- sleep.json

def night4(start):
    """A 4-byte night from 22:00: awake 10, light 30, deep 20, kind 0 (same) 10, light 15, awake 5,
    REM-less deep 25, wake-up (12) 40 min, light 10, not worn 5, light 5; heart rate every
    10 minutes, 255 otherwise."""
    rows = []

    def run(kind, n, **extra):
        for _ in range(n):
            i = len(rows)
            rows.append(dict({"kind": kind, "intensity": (i * 13) & 0x7F, "steps": 0,
                              "heartRate": 50 + i % 20 if i % 10 == 0 else 255}, **extra))
    run(1, 10)
    run(9, 30)
    run(11, 20)
    run(0, 10)
    run(0x19, 15)   # high nibble set: kind & 0x0F = 9
    run(1, 5)
    run(11, 25)
    run(12, 40)
    run(9, 10)
    run(3, 5)
    run(9, 5)
    return rows


def night8():
    rows = []

    def run(kind, n, deep=0, rem=0):
        for _ in range(n):
            i = len(rows)
            rows.append({"kind": kind, "intensity": 20, "steps": 0, "heartRate": 0 if i % 5 else 58 + i % 7,
                         "unknown": 0, "sleep": 30, "deep": deep, "rem": rem})
    run(1, 5)
    run(120, 20, deep=10, rem=10)
    run(120, 15, deep=43, rem=0)
    run(120, 10, deep=42, rem=55)          # at the thresholds: light
    run(120, 10, deep=200, rem=56)         # both over: REM first (Gadgetbridge's order)
    run(120, 5, deep=128 + 43, rem=128)    # & 127: deep
    run(1, 61)                             # awake past the 60-minute limit: the night ends
    run(120, 10, deep=0, rem=0)
    run(118, 3)                            # charging: the night ends
    run(120, 4, deep=0, rem=100)
    return rows


def sleep_vectors():
    out = []

    def add(name, size, fetches, max_awake=60):
        reader = h.SleepReader(max_awake)
        items, rates = [], []
        for start, rows in fetches:
            items.append(reader.read(start, size, rows))
            rates.append(h.heart_rates(start, rows))
        out.append({"name": name, "sampleSize": size, "maxAwakeMinutes": max_awake,
                    "fetches": [{"start": s, "data": h.sample_bytes(r, size).hex()} for s, r in fetches],
                    "items": items, "heartRates": rates, "state": reader.state()})

    start = berlin(2025, 11, 23, 22, 0)
    rows4 = night4(start)
    add("a 4-byte night (Mi Band 3/4): light, deep, same-as-before, awake, wake-up, not worn", 4, [(start, rows4)])
    add("the same night in two fetches, split inside the 40 awake minutes", 4, [(start, rows4[:130]), (start + 130 * 60, rows4[130:])])
    add("the same night with a 30-minute awake limit", 4, [(start, rows4)], max_awake=30)
    add("the same night in two fetches with a gap between them", 4, [(start, rows4[:80]), (start + 81 * 60, rows4[80:])])
    add("kind 0 with nothing before it", 4, [(start, [{"kind": 0, "intensity": 0, "steps": 0, "heartRate": 0}] * 5
                                               + [{"kind": 9, "intensity": 0, "steps": 0, "heartRate": 70}] * 3)])
    rows8 = night8()
    add("an 8-byte night (Mi Band 5/6): kind 120, the deep and REM heuristic at its thresholds", 8, [(start, rows8)])
    dst = 1761428400  # 2025-10-25 23:40 CEST (21:40 UTC): the night runs across the end of DST
    add("an 8-byte night across the end of DST in Berlin (instants, not wall clock)", 8,
        [(dst, [{"kind": 120, "intensity": 0, "steps": 0, "heartRate": 60, "unknown": 0, "sleep": 0, "deep": 50, "rem": 0}] * 240)])
    add("no samples", 4, [(start, [])])
    return out


# --------------------------------------------------------------------------- alarm-table.json

def alarm_table_vectors():
    out = []
    alarms = [{"slot": s, "enabled": s % 2 == 0, "snooze": s != 4, "hour": 6 + s, "minute": 5 * s, "days": [0, 31, 96, 127, 1][s % 5]}
              for s in range(10)]

    def add(name, chunks):
        assembler = h.ChunkAssembler()
        result = None
        for i, raw in enumerate(chunks):
            try:
                kind, body = h.read_config_answer(raw)
                whole = assembler.feed(body)
            except h.HuamiError as e:
                result = {"error": e.code, "at": i}
                break
            if whole is not None:
                try:
                    result = {"type": whole[0], "alarms": h.alarm_table(whole[1]) if whole[0] == 1 else None, "payload": whole[1].hex()}
                except h.HuamiError as e:
                    result = {"error": e.code, "at": i}
                break
        out.append({"name": name, "chunks": [c.hex() for c in chunks], "result": result if result is not None else {"incomplete": True}})

    def chunks(table, per):
        return [h.chunk_bytes(c) for c in h.alarm_table_chunks(table, per)]

    add("ten alarms in 12-byte chunks", chunks(alarms, 12))
    add("three alarms in one complete chunk", chunks(alarms[:3], 20))
    add("no alarms", chunks([], 12))
    full = chunks(alarms, 12)
    add("a middle chunk before a first one", full[1:])
    add("the last chunk missing", full[:-1])
    add("a first chunk again restarts the answer", full[:2] + full)
    add("a table of 1 + 4n + 1 bytes", [h.chunk_bytes({"position": "complete", "type": 1, "payload": "01800700" + "1f" + "00"})])
    add("a slot twice", [h.chunk_bytes({"position": "complete", "type": 1, "payload": "02" + "8007001f" + "8008001f"})])
    add("another chunked answer (type 0x05), not read as alarms", [h.chunk_bytes({"position": "complete", "type": 5, "payload": "0102"})])
    return out


# --------------------------------------------------------------------------- output

render = vector_files.render


def generate():
    return {
        "messages.json": render(message_vectors()),
        "invalid.json": render(invalid_vectors()),
        "auth.json": render(auth_vectors()),
        "time.json": render(time_vectors()),
        "fetch.json": render(fetch_vectors()),
        "sleep.json": render(sleep_vectors()),
        "alarm-table.json": render(alarm_table_vectors()),
    }


def main(argv=None):
    return vector_files.run(__doc__.splitlines()[0], VECTOR_DIR, generate, "huami vectors",
                            "scripts/huami/huami_vectors.py", argv)


if __name__ == "__main__":
    sys.exit(main())
