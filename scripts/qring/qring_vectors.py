#!/usr/bin/env python3
"""Generate the QRing dialect's test vectors (protocol-spec/qring/vectors/*.json).

The codec is scripts/qring/qring_codec.py, an independent implementation of protocol-spec/qring/qring.md.
The Swift module TSQRing is tested against the files this script writes
(Tests/Families/QRing/CodecTests/QRingVectorTests.swift). scripts/v1/v1_vectors.py runs this script too, so
`python3 scripts/v1/v1_vectors.py --check` fails when these files are stale.

    python3 scripts/qring/qring_vectors.py          # (re)write the files
    python3 scripts/qring/qring_vectors.py --check  # exit 1 if the files on disk differ

Every vector is produced by running qring_codec on its input; the expected values written are
what the codec computed, and the asserts below pin the facts the spec states by hand (the two
real request frames, a DST night's first instant, the error codes).
"""

import json
import os
import struct
import sys
from datetime import date, datetime, timedelta, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))  # scripts/lib: vector_files
import vector_files  # noqa: E402  (writing and --check of the vector files)
import qring_codec as q  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTOR_DIR = os.path.join(ROOT, "protocol-spec", "qring", "vectors")
BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"


def error_of(fn):
    try:
        fn()
    except q.QRingError as e:
        return e.code
    raise AssertionError("expected a QRingError")


def answer(command, data):
    return q.packet(command, bytes(data))


def with_checksum(raw, value):
    return raw[:15] + bytes([value])


# --------------------------------------------------------------------------- packets

def packet_vectors():
    out = []

    def req(name, kind, body):
        out.append({"name": name, "direction": "request", "kind": kind, "body": body,
                    "packet": q.request_body(kind, body).hex()})

    def ans(name, raw):
        kind, body = q.decode_answer(raw)
        out.append({"name": name, "direction": "answer", "kind": kind, "body": body, "packet": raw.hex()})

    req("set time, local wall clock", "setTime", {"wall": "2025-11-24T07:05:09"})
    req("set time on New Year's Eve 2099", "setTime", {"wall": "2099-12-31T23:59:59"})
    req("set time at midnight 2000-01-01", "setTime", {"wall": "2000-01-01T00:00:00"})
    req("battery", "battery", {})
    req("heart-rate log settings read", "heartRateLogSettingsRead", {})
    req("heart-rate log on every 5 min", "heartRateLogSettingsWrite", {"enabled": True, "interval": 5})
    req("heart-rate log off, interval kept at 60", "heartRateLogSettingsWrite", {"enabled": False, "interval": 60})
    for name in ("spo2", "stress", "hrv"):
        req(name + " switch read", "switchRead", {"monitor": name})
        req(name + " switch on", "switchWrite", {"monitor": name, "enabled": True})
        req(name + " switch off", "switchWrite", {"monitor": name, "enabled": False})
    req("heart-rate log of 2025-11-23", "heartRateLog", {"day": "2025-11-23"})
    req("heart-rate log of 2025-10-26 (DST ends in Berlin)", "heartRateLog", {"day": "2025-10-26"})
    req("real-time heart rate start", "realTimeStart", {})
    req("real-time heart rate continue", "realTimeContinue", {})
    req("real-time heart rate stop", "realTimeStop", {})
    req("steps of today", "steps", {"daysAgo": 0})
    req("steps of 6 days ago", "steps", {"daysAgo": 6})

    # T's documented examples (battery 64 %, settings on/60 min)
    ans("battery 64 %, not charging (T's example)", answer(0x03, [0x40, 0]))
    ans("battery 100 %, charging", answer(0x03, [100, 1]))
    ans("battery 0 %", answer(0x03, [0, 0]))
    ans("battery pushed by the ring: 73 0c", answer(0x73, [0x0C, 55, 1]))
    ans("ring says new heart-rate data", answer(0x73, [0x01]))
    ans("ring says new steps data", answer(0x73, [0x04]))
    ans("ring notice this dialect does not read (live activity)", answer(0x73, [0x12, 0, 1, 2]))
    ans("time set, new sleep protocol", answer(0x01, [0, 0, 0, 0, 0, 0, 0, 0, 1]))
    ans("time set, old sleep protocol", answer(0x01, [0] * 14))
    ans("heart-rate log settings: on, 60 min (T's example)", answer(0x16, [1, 1, 60]))
    ans("heart-rate log settings: off, 30 min", answer(0x16, [1, 2, 30]))
    ans("heart-rate log settings written", answer(0x16, [2]))
    ans("spo2 switch on", answer(0x2C, [1, 1]))
    ans("stress switch off", answer(0x36, [1, 0]))
    ans("hrv switch on", answer(0x38, [1, 1]))
    ans("hrv switch written", answer(0x38, [2]))
    ans("real-time heart rate 72 bpm", answer(0x69, [1, 0, 72]))
    ans("real-time heart rate, no reading yet (0)", answer(0x69, [1, 0, 0]))
    ans("real-time heart rate error 1 (worn incorrectly)", answer(0x69, [1, 1, 0]))
    ans("real-time reading of another type (SpO2)", answer(0x69, [3, 0, 97]))
    ans("real-time stopped", answer(0x6A, [1]))

    rt = [v for v in out if v["kind"] == "realTimeStart"][0]
    assert rt["packet"] == "6901000000000000000000000000006a"
    assert [v for v in out if v["name"].startswith("battery 64")][0]["packet"].endswith("43")
    return out


def invalid_vectors():
    out = []

    def bad(name, raw, code):
        assert error_of(lambda: q.decode_answer(raw)) == code, name
        out.append({"name": name, "input": raw.hex(), "error": code})

    good = answer(0x03, [87, 0])
    bad("wrong checksum", with_checksum(good, good[15] ^ 0x01), "checksumMismatch")
    bad("checksum computed mod 255 instead of & 0xFF",
        with_checksum(answer(0x69, [1, 0, 200]), sum(answer(0x69, [1, 0, 200])[:15]) % 255), "checksumMismatch")
    bad("15 bytes", good[:15], "packetLength")
    bad("17 bytes", good + b"\x00", "packetLength")
    bad("error bit on a battery answer", answer(0x83, [0] * 14), "ringReportedError")
    bad("error bit on a heart-rate log settings answer", answer(0x96, [1]), "ringReportedError")
    bad("battery level 101", answer(0x03, [101, 0]), "valueOutOfRange")
    bad("battery charging byte 2", answer(0x03, [50, 2]), "invalidValue")
    bad("heart-rate log enabled byte 3", answer(0x16, [1, 3, 10]), "invalidValue")
    bad("heart-rate log interval 0", answer(0x16, [1, 1, 0]), "valueOutOfRange")
    bad("heart-rate log settings answer kind 7", answer(0x16, [7, 1, 10]), "invalidValue")
    bad("spo2 switch byte 2", answer(0x2C, [1, 2]), "invalidValue")
    bad("a command this dialect does not read", answer(0x50, [0x55, 0xAA]), "unexpectedCommand")
    return out


# --------------------------------------------------------------------------- heart-rate log

def hr_log_packets(day, values, count=None, slot=5, stamp=None):
    """The ring's answer for `day`: sub 0, sub 1 (timestamp + 9 values), then 13 per packet."""
    if count is None:
        count = 2 + max(0, -(-(len(values) - 9) // 13))
    values = list(values) + [0] * (9 + (count - 2) * 13 - len(values))
    stamp = q.day_wall_seconds(day) if stamp is None else stamp
    packets = [answer(0x15, [0, count, slot]),
               answer(0x15, [1] + list(struct.pack("<I", stamp)) + values[:9])]
    for i in range(2, count):
        packets.append(answer(0x15, [i] + values[9 + (i - 2) * 13: 9 + (i - 1) * 13]))
    return packets


def run_hr(day, zone, packets):
    a = q.HeartRateLogAssembler(day, zone)
    result = None
    for i, p in enumerate(packets):
        try:
            result = a.feed(p)
        except q.QRingError as e:
            return {"error": e.code, "atPacket": i}
        if result is not None:
            assert i == len(packets) - 1
            if a.passed_over is not None:
                result["passedOver"] = a.passed_over.isoformat()
            return result
    return {"incomplete": True, **({"passedOver": a.passed_over.isoformat()} if a.passed_over else {})}


def heart_rate_log_vectors():
    out = []

    def case(name, day, zone, packets):
        out.append({"name": name, "day": day.isoformat(), "zone": zone,
                    "packets": [p.hex() for p in packets], "result": run_hr(day, zone, packets)})

    # a whole day, 24 packets as T's example ring sends: 9 + 22 * 13 = 295 values, 288 used
    full = []
    for slot in range(295):
        if slot >= 288:
            full.append(77)  # beyond the day: ignored
        elif slot % 7 == 3:
            full.append(0xFF)
        elif slot % 11 == 5:
            full.append(0)
        else:
            full.append(48 + (slot * 37) % 90)
    case("a whole day in 24 packets, gaps as 0xFF and 0", date(2025, 11, 23), BERLIN,
         hr_log_packets(date(2025, 11, 23), full, count=24))
    case("the same bytes read in New York", date(2025, 11, 23), NEW_YORK,
         hr_log_packets(date(2025, 11, 23), full, count=24))
    # DST ends in Berlin on 2025-10-26: 02:00-02:55 happen twice, read as the first (CEST)
    fall = [0xFF] * 288
    for slot in (23, 24, 29, 35, 36, 41):  # 01:55, 02:00, 02:25, 02:55, 03:00, 03:25
        fall[slot] = 60 + slot
    case("DST ends (Berlin, 2025-10-26): a repeated hour", date(2025, 10, 26), BERLIN,
         hr_log_packets(date(2025, 10, 26), fall, count=24))
    spring = [0xFF] * 288
    for slot in (23, 24, 30, 35, 36):  # 01:55, 02:00 and 02:30 (skipped hour), 02:55, 03:00
        spring[slot] = 50 + slot
    case("DST begins (Berlin, 2025-03-30): a skipped hour", date(2025, 3, 30), BERLIN,
         hr_log_packets(date(2025, 3, 30), spring, count=24))
    case("today so far: 3 packets", date(2025, 11, 24), BERLIN,
         hr_log_packets(date(2025, 11, 24), [61, 62, 63, 0xFF, 65, 66, 67, 68, 69] + [70] * 13, count=3))
    case("no data for the day (index 0xFF)", date(2025, 11, 20), BERLIN, [answer(0x15, [0xFF])])
    case("wrong checksum in the middle", date(2025, 11, 23), BERLIN,
         [p if i != 2 else with_checksum(p, p[15] ^ 0xFF)
          for i, p in enumerate(hr_log_packets(date(2025, 11, 23), full, count=24))])
    pk = hr_log_packets(date(2025, 11, 23), full, count=24)
    case("a packet lost (index 3 missing)", date(2025, 11, 23), BERLIN, pk[:3] + pk[4:])
    other_day = hr_log_packets(date(2025, 11, 23), full, count=24, stamp=q.day_wall_seconds(date(2025, 11, 22)))
    case("a whole answer for another day (an earlier request's, answered twice): passed over, nothing yet",
         date(2025, 11, 23), BERLIN, other_day)
    case("another day's whole answer, then the day's own", date(2025, 11, 23), BERLIN, other_day + pk)
    case("the tail of an earlier answer (packets 16 to 23), then the day's answer", date(2025, 11, 23), BERLIN,
         hr_log_packets(date(2025, 11, 22), full, count=24)[16:] + pk)
    case("a packet lost at the start (index 0 missing): its packets read as an earlier answer's tail",
         date(2025, 11, 23), BERLIN, pk[1:])
    case("a log of one packet", date(2025, 11, 23), BERLIN, [answer(0x15, [0, 1, 5])])
    case("incomplete: the answer stops after 5 packets", date(2025, 11, 23), BERLIN, pk[:5])

    fall_result = out[2]["result"]
    times = {s["time"]: s["bpm"] for s in fall_result["samples"]}
    # 02:00 wall clock on 2025-10-26 read as CEST (+2): 00:00 UTC
    assert times[int(datetime(2025, 10, 26, tzinfo=timezone.utc).timestamp())] == 60 + 24
    return out


# --------------------------------------------------------------------------- steps

def steps_packets(day, records, times10=True):
    yy, mm, dd = q.bcd(day.year - 2000), q.bcd(day.month), q.bcd(day.day)
    packets = [answer(0x43, [0xF0, len(records), 1 if times10 else 0])]
    for i, (quarter, calories, steps, distance) in enumerate(records):
        packets.append(answer(0x43, [yy, mm, dd, quarter, i, len(records)]
                              + list(struct.pack("<HHH", calories, steps, distance))))
    return packets


def run_steps(zone, packets):
    a = q.StepsAssembler(zone)
    for i, p in enumerate(packets):
        try:
            r = a.feed(p)
        except q.QRingError as e:
            return {"error": e.code, "atPacket": i}
        if r is not None:
            assert i == len(packets) - 1
            return r
    return {"incomplete": True}


def steps_vectors():
    out = []

    def case(name, zone, packets):
        out.append({"name": name, "zone": zone, "packets": [p.hex() for p in packets],
                    "result": run_steps(zone, packets)})

    # T's documented example (2023-08-13, five quarter-hours, calories x10)
    t_example = [
        b"C\xf0\x05\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x009",
        b"C#\x08\x13\x10\x00\x05\xc8\x000\x00\x1b\x00\x00\x00\xa9",
        b"C#\x08\x13\x14\x01\x05\xb6\x18\xaa\x04i\x03\x00\x00\x83",
        b"C#\x08\x13\x18\x02\x058\x04\xe1\x00\x95\x00\x00\x00R",
        b"C#\x08\x13\x1c\x03\x05\x05\x02l\x00H\x00\x00\x00`",
        b"C#\x08\x13L\x04\x05\xef\x01c\x00D\x00\x00\x00m",
    ]
    for p in t_example:
        assert len(p) == 16 and q.checksum(p[:15]) == p[15], p.hex()
    case("T's example: 2023-08-13, five quarter-hours", "UTC", t_example)
    case("three quarter-hours in Berlin, old calorie unit", BERLIN,
         steps_packets(date(2025, 11, 23), [(28, 120, 950, 610), (29, 85, 400, 260), (95, 3, 12, 8)], times10=False))
    case("no steps that day", BERLIN, [answer(0x43, [0xFF])])
    case("record before the header", BERLIN, steps_packets(date(2025, 11, 23), [(28, 1, 2, 3)])[1:])
    bad_bcd = steps_packets(date(2025, 11, 23), [(28, 1, 2, 3)])
    bad_bcd[1] = answer(0x43, [0x25, 0x1A, 0x23, 28, 0, 1, 1, 0, 2, 0, 3, 0])
    case("month byte 0x1a is not BCD", BERLIN, bad_bcd)
    case("quarter-hour 96", BERLIN, steps_packets(date(2025, 11, 23), [(96, 1, 2, 3)]))
    return out


# --------------------------------------------------------------------------- big data

def sleep_day(days_ago, start, end, pairs, day_bytes=None):
    body = struct.pack("<HH", start, end) + b"".join(bytes([s, m]) for s, m in pairs)
    return bytes([days_ago, len(body) if day_bytes is None else day_bytes]) + body


def sleep_payload(days):
    return bytes([len(days)]) + b"".join(days)


NIGHT_1 = sleep_day(1, 1380, 410, [(2, 25), (3, 40), (2, 30), (4, 20), (5, 5), (2, 45), (3, 35), (2, 40),
                                   (4, 25), (2, 50), (5, 10), (2, 40), (4, 25), (2, 20), (3, 20)])  # 23:00-06:50
NIGHT_0 = sleep_day(0, 1410, 395, [(2, 30), (3, 55), (2, 40), (4, 20), (2, 60), (3, 30), (5, 15), (2, 45),
                                   (4, 30), (2, 40), (4, 20)])  # 23:30-06:35


def run_stream(chunks, expire):
    r = q.BigDataReassembler()
    frames = []
    for c in chunks:
        frames += r.feed(c)
    if expire:
        r.expire()
    return {"frames": [{"type": t, "payload": p.hex()} for t, p in frames],
            "garbage": r.garbage, "oversized": r.oversized, "crcMismatches": r.crc_mismatches,
            "incomplete": r.incomplete}


def cut(data, size):
    return [data[i:i + size] for i in range(0, len(data), size)]


def big_data_vectors():
    out = []

    def case(name, chunks, expire=False):
        result = run_stream(chunks, expire)
        out.append(dict({"name": name, "chunks": [c.hex() for c in chunks], "expire": expire}, **result))
        return result

    g_request = bytes.fromhex("bc270100ff00ff")
    assert q.sleep_request() == g_request, "the request Gadgetbridge sends"
    r10_request = bytes.fromhex("bc27020081 80ff01".replace(" ", ""))
    assert q.big_data_frame(0x27, b"\xff\x01") == r10_request, "the R10 RT03CR_1.00.02 form"
    case("sleep request as Gadgetbridge sends it (bc 27 01 00 ff 00 ff)", [g_request])
    case("sleep request of R10 firmware RT03CR_1.00.02 (bc 27 02 00 81 80 ff 01)", [r10_request])
    case("request without payload: length 0, CRC 0xffff", [q.big_data_frame(0x2A, b"")])

    reply = q.big_data_frame(0x27, sleep_payload([NIGHT_1, NIGHT_0]))
    case("two nights in notifications of 20 bytes (MTU 23)", cut(reply, 20))
    case("two nights, one byte per notification", cut(reply, 1))
    case("header split after 5 bytes", [reply[:5], reply[5:]])
    case("garbage before the marker", [b"\x00\x13\x37" + reply[:30], reply[30:]])
    wrong = bytearray(reply)
    wrong[20] ^= 0x10
    r = case("wrong CRC: a counted drop, the next frame still arrives", [bytes(wrong), g_request])
    assert r["crcMismatches"] == 1 and len(r["frames"]) == 1
    r = case("length that never arrives: dropped on the timeout", cut(reply, 20)[:3], expire=True)
    assert r["incomplete"] == 1 and r["frames"] == []
    r = case("length 0xffff is over the bound: the marker is skipped", [b"\xbc\x27\xff\xff\x00\x00" + g_request])
    assert r["oversized"] == 1 and len(r["frames"]) == 1
    case("two frames in one notification", [g_request + r10_request])
    case("nothing pending at the timeout", [g_request], expire=True)
    return out


# --------------------------------------------------------------------------- sleep

def sleep_vectors():
    out = []

    def case(name, today, zone, payload):
        v = {"name": name, "today": today.isoformat(), "zone": zone, "payload": payload.hex(),
             "frame": q.big_data_frame(0x27, payload).hex()}
        try:
            v["days"] = q.decode_sleep(payload, today, zone)
        except q.QRingError as e:
            v["error"] = e.code
        out.append(v)
        return v

    case("two ordinary nights", date(2025, 11, 24), BERLIN, sleep_payload([NIGHT_1, NIGHT_0]))
    case("the same nights read in New York", date(2025, 11, 24), NEW_YORK, sleep_payload([NIGHT_1, NIGHT_0]))
    case("no nights", date(2025, 11, 24), BERLIN, sleep_payload([]))
    case("empty payload", date(2025, 11, 24), BERLIN, b"")
    case("a nap after midnight: start before end", date(2025, 11, 24), BERLIN,
         sleep_payload([sleep_day(0, 75, 200, [(2, 60), (3, 45), (2, 20)])]))
    # DST ends in Berlin on 2025-10-26 03:00 CEST: the night began at 23:10 CEST
    v = case("DST night: clocks go back (Berlin, 2025-10-25/26)", date(2025, 10, 26), BERLIN,
             sleep_payload([sleep_day(0, 1390, 425, [(2, 40), (3, 60), (2, 50), (4, 30), (2, 60), (3, 45), (2, 60),
                                                     (4, 40), (5, 10), (2, 50), (4, 30)])]))
    assert v["days"][0]["start"] == 1761426600, "23:10 CEST is 21:10 UTC"
    v = case("DST night: clocks go forward (Berlin, 2025-03-29/30)", date(2025, 3, 30), BERLIN,
             sleep_payload([sleep_day(0, 1320, 420, [(2, 60), (3, 90), (2, 60), (4, 45), (2, 60), (3, 60),
                                                     (2, 45), (4, 40)])]))
    assert v["days"][0]["start"] == 1743282000, "22:00 CET is 21:00 UTC"
    case("stages of 128 minutes and more", date(2025, 11, 24), BERLIN,
         sleep_payload([sleep_day(0, 1300, 720, [(2, 128), (3, 200), (2, 255), (4, 130), (5, 20), (2, 127)])]))
    long_pairs = [((2, 3, 2, 4, 5)[i % 5], 5 + i % 9) for i in range(100)]
    span = sum(m for _, m in long_pairs)
    v = case("a day of 204 bytes (over 127)", date(2025, 11, 24), BERLIN,
             sleep_payload([sleep_day(0, 1200, (1200 + span) % 1440, long_pairs)]))
    assert len(bytes.fromhex(v["payload"])) > 200 and bytes.fromhex(v["payload"])[2] == 204
    case("stages 0 (no data) and 1 (error) are counted drops", date(2025, 11, 24), BERLIN,
         sleep_payload([sleep_day(0, 1380, 400, [(2, 30), (0, 20), (3, 60), (1, 15), (2, 100), (0, 0), (4, 30)])]))
    case("seven nights", date(2025, 11, 24), BERLIN,
         sleep_payload([sleep_day(d, 1350 + d * 5, 390 + d, [(2, 45), (3, 60 + d), (2, 80), (4, 40), (5, 5),
                                                             (2, 90), (3, 30), (2, 65 - d * 0), (4, 25)])
                        for d in range(6, -1, -1)]))
    case("pairs overrun the payload", date(2025, 11, 24), BERLIN,
         sleep_payload([sleep_day(0, 1380, 400, [(2, 30), (3, 60)], day_bytes=12)]))
    case("stage 6 is out of range", date(2025, 11, 24), BERLIN,
         sleep_payload([sleep_day(0, 1380, 400, [(2, 30), (6, 60)])]))
    case("day length 7: half a pair", date(2025, 11, 24), BERLIN,
         sleep_payload([sleep_day(0, 1380, 400, [(2, 30)], day_bytes=7)]) + b"\x03")
    case("start minute 1440", date(2025, 11, 24), BERLIN,
         sleep_payload([sleep_day(0, 1440, 400, [(2, 30)])]))
    case("stages last longer than start to end", date(2025, 11, 24), BERLIN,
         sleep_payload([sleep_day(0, 1380, 30, [(2, 100), (3, 100)])]))
    case("bytes after the last day", date(2025, 11, 24), BERLIN, sleep_payload([NIGHT_0]) + b"\x00")
    case("two days announced, one sent", date(2025, 11, 24), BERLIN, bytes([2]) + NIGHT_0)
    for v in out:
        assert ("error" in v) == (v["name"] in (
            "pairs overrun the payload", "stage 6 is out of range", "day length 7: half a pair",
            "start minute 1440", "stages last longer than start to end", "bytes after the last day",
            "two days announced, one sent")), v["name"]
    return out


# --------------------------------------------------------------------------- output

render = vector_files.render


def generate():
    return {
        "packets.json": render(packet_vectors()),
        "invalid.json": render(invalid_vectors()),
        "heart-rate-log.json": render(heart_rate_log_vectors()),
        "steps.json": render(steps_vectors()),
        "big-data.json": render(big_data_vectors()),
        "sleep.json": render(sleep_vectors()),
    }


# --------------------------------------------------------------------------- real rings' bytes

CAPTURE_DIR = os.path.join(ROOT, "protocol-spec", "qring", "captures", "colmi-r02-client")


def capture_mismatches():
    """Bytes a real ring sent (protocol-spec/qring/captures/colmi-r02-client, from
    colmi_r02_client, MIT; its README.md): qring_codec must read them as that client does, its
    wall-clock times in UTC (the client sets the ring's clock so). Returns what it reads otherwise."""
    with open(os.path.join(CAPTURE_DIR, "captures.json"), encoding="utf-8") as f:
        doc = json.load(f)

    def read(assembler, entry):
        if "file" in entry:  # the client's recording: each notification, then a newline
            with open(os.path.join(CAPTURE_DIR, entry["file"]), "rb") as f:
                raw = f.read()
            packets = [raw[i:i + 16] for i in range(0, len(raw), 17)]
        else:
            packets = [bytes.fromhex(p) for p in entry["packets"]]
        try:
            results = [assembler.feed(p) for p in packets]
        except q.QRingError as e:
            return "rejected: " + e.code
        return results[-1] if all(r is None for r in results[:-1]) else "complete before its last packet"

    def decode(packet):
        try:
            return q.decode_answer(bytes.fromhex(packet))
        except q.QRingError as e:
            return "rejected: " + e.code

    bad = []
    for e in doc["heartRateLogs"]:
        ref = e["reference"]
        day = date(2024, 1, 1) if ref.get("noData") \
            else datetime.strptime(ref["timestamp"], "%Y-%m-%dT%H:%M:%SZ").date()
        want = {"noData": True} if ref.get("noData") else {
            "samples": [{"time": q.day_wall_seconds(day) + slot * 300, "bpm": bpm}
                        for slot, bpm in enumerate(ref["heartRates"]) if bpm],
            "slotMinutes": ref["range"]}
        if read(q.HeartRateLogAssembler(day, "UTC"), e) != want:
            bad.append(e["name"])
    for e in doc["steps"]:
        walls = [datetime(d["year"], d["month"], d["day"]) + timedelta(minutes=15 * d["timeIndex"])
                 for d in e["reference"].get("details", [])]
        want = {"intervals": [{"start": q.wall_seconds(w), "wall": w.isoformat(), "steps": d["steps"],
                               "calories": d["calories"], "distance": d["distance"]}
                              for w, d in zip(walls, e["reference"].get("details", []))]}
        if read(q.StepsAssembler("UTC"), e) != want:
            bad.append(e["name"])
    for e in doc["answers"]:
        ref = e["reference"]
        if ref["kind"] == "battery":
            want = ("battery", {"level": ref["batteryLevel"], "charging": ref["charging"]})
        elif ref["kind"] == "realTime":
            want = ("realTimeError", {"code": ref["errorCode"]}) if "errorCode" in ref \
                else ("realTimeHeartRate", {"bpm": ref["value"]})
        elif ref["kind"] == "heartRateLogSettings":
            want = ("heartRateLogSettings", {"enabled": ref["enabled"], "interval": ref["interval"]})
        else:
            want = ("timeSet", {"newSleepProtocol": ref["mNewSleepProtocol"]})
        if decode(e["packet"]) != want:
            bad.append(e["name"])
    # MYSTERIES.md's packets have no reference reading; they must read as TSQRing reads them.
    if [decode(e["packet"]) for e in doc["unexplained"]] != [
            ("batteryPushed", {"level": 21, "charging": False}), ("batteryPushed", {"level": 43, "charging": True}),
            ("batteryPushed", {"level": 100, "charging": True}), "rejected: unexpectedCommand"]:
        bad.append("MYSTERIES.md packets")
    return bad


def main(argv=None):
    def real_rings_read_alike():
        mismatched = capture_mismatches()
        if mismatched:
            return "qring_codec reads real rings' bytes otherwise than colmi_r02_client: %s" % "; ".join(mismatched)
        return None
    return vector_files.run(__doc__.splitlines()[0], VECTOR_DIR, generate, "qring vectors",
                            "scripts/qring/qring_vectors.py", argv, before=real_rings_read_alike)


if __name__ == "__main__":
    sys.exit(main())
