#!/usr/bin/env python3
"""Generate the TopStep NPK test vectors (protocol-spec/npk/vectors/*.json).

The codec is scripts/npk/npk_codec.py, a second implementation of protocol-spec/npk/topstep-npk.md
written apart from the Swift module TSNpk, with Google's protobuf runtime for the payloads.
Tests/Families/Npk/CodecTests read the files this script writes. Run it through scripts/npk/python (it
needs the protobuf runtime from the virtual environment that script makes, and protoc):

    scripts/npk/python scripts/npk/npk_vectors.py          # (re)write the files
    scripts/npk/python scripts/npk/npk_vectors.py --check  # exit 1 if the files on disk differ

Every vector is checked with npk_codec while it is made: valid frames decode to their body
and come back byte for byte, invalid ones fail with the code they carry, streams come out the
same whatever the chunking.
"""

import base64
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))  # scripts/lib: vector_files
import vector_files  # noqa: E402  (writing and --check of the vector files)
import npk_codec as npk  # noqa: E402

VECTOR_DIR = os.path.join(npk.ROOT, "protocol-spec", "npk", "vectors")

# The SDK's own example frame (TSCommandDataWrapper.h), byte for byte.
SDK_EXAMPLE = bytes.fromhex("AB0621000012269900040A062F6D75736963" "10E1DE92A509" "18B0BA1F")

T2000 = 817776000  # 2025-12-01 00:00:00 UTC in seconds since 2000-01-01
DAY = 86400


def b64(data):
    return base64.b64encode(bytes(data)).decode()


def monitor(enabled, start, end, interval):
    return {"is_enabled": enabled, "start": start, "end": end, "interval": interval}


def base_alarm(enabled, low, high):
    return {"is_enabled": enabled, "min": low, "max": high}


def alarm_item(id_, enabled, hour, minute, repeat, label):
    return {"id": id_, "is_enabled": enabled, "hour": hour, "minute": minute, "repeat": repeat, "label": label}


def sleep_item(t, duration, stage):
    return {"timestamp": t, "duration": duration, "type": stage}


LABEL_63 = "Physiotherapie, Dehnübungen und Blutdruck-Tablette 💊 nach 9"
assert len(LABEL_63.encode()) == 63, len(LABEL_63.encode())
ALARMS = [alarm_item(0, True, 7, 0, 0x1F, "Work"), alarm_item(1, True, 9, 30, 0x60, "Wochenende"),
          alarm_item(2, False, 21, 45, 0x7F, "吃药"), alarm_item(3, True, 5, 40, 0, ""),
          alarm_item(4, True, 12, 5, 0x41, LABEL_63)]

NIGHT_1 = [sleep_item(T2000 - 3 * 3600 + 1800, 900, 0), sleep_item(T2000 - 3 * 3600 + 2700, 2400, 1),
           sleep_item(T2000 - 3 * 3600 + 5100, 3600, 2), sleep_item(T2000 - 3 * 3600 + 8700, 1500, 3),
           sleep_item(T2000 - 3 * 3600 + 10200, 7200, 1), sleep_item(T2000 + 6600, 1200, 0)]
NIGHT_2 = [sleep_item(T2000 + DAY - 7200 + 60 * i * 37, 60 * 37, (0, 1, 2, 1, 3)[i % 5]) for i in range(24)]
SLEEP_DAY_1 = {"timestamp": T2000, "items": NIGHT_1}
SLEEP_DAY_2 = {"timestamp": T2000 + DAY, "items": NIGHT_2}

HR_AUTO = bytes(([0] * 12) + [58, 57, 0, 61, 64, 0xAB, 72, 255, 0, 66] + [0] * 266)
assert len(HR_AUTO) == 288
HR_DAY = {"start_timestamp": T2000, "end_timestamp": T2000 + DAY - 1,
          "manual_data": [{"timestamp": T2000 + 8 * 3600 + 17, "value": 74}, {"timestamp": T2000 + 13 * 3600, "value": 0}],
          "auto_data": b64(HR_AUTO),
          "resting_data": [{"timestamp": T2000 + 4 * 3600, "value": 55}],
          "max_min_data": [{"timestamp": T2000 + 3600, "value": 255}, {"timestamp": T2000 + 3 * 3600, "value": 57}]}

# The next day: a reading in the first and the last 5 minutes, manual readings of 300, -4 and 256
# bpm (refused) and of 255 and 1 bpm (kept).
HR_DAY_OUT_OF_RANGE = {"start_timestamp": T2000 + DAY, "end_timestamp": T2000 + 2 * DAY - 1,
                       "manual_data": [{"timestamp": T2000 + DAY + 9 * 3600 + 1, "value": 300},
                                       {"timestamp": T2000 + DAY + 9 * 3600 + 2, "value": -4},
                                       {"timestamp": T2000 + DAY + 9 * 3600 + 3, "value": 256},
                                       {"timestamp": T2000 + DAY + 9 * 3600 + 4, "value": 255},
                                       {"timestamp": T2000 + DAY + 9 * 3600 + 5, "value": 1}],
                       "auto_data": b64(bytes([61] + [0] * 286 + [59])),
                       "resting_data": [], "max_min_data": []}

PERIPHERAL = {"project": "NPK-P2841", "version": "1.0.7.3", "brand": "TopStep", "model": "TS-W2",
              "serial": "TSW2A0001234", "main_board": "RTL8773", "shape": {"shape": 1, "width": 466, "height": 466, "corners": 0},
              "ability": b64(bytes([0x0F, 0x28, 0x01, 0x00])), "activity": b64(bytes([1, 1, 0])), "sleep_algorithm": 0,
              "preview": {"shape": 1, "width": 200, "height": 200, "corners": 0},
              "limits": {"built_in_dial": 4, "cloud_dial": 3, "alarm": 10, "contact": 14,
                         "remind": [1, 3, 1, 3, 1, 3, 10, 3], "world_clock": 10},
              "notifications": b64(bytes([0xFF, 0x03])), "company_id": 0, "product_type": 0}


# --------------------------------------------------------------------------- valid vectors

def build_valid():
    out = []

    def v(name, command, direction, sequence, body, flags=0, list_header=None, mapped=None):
        cmd, key = npk.COMMANDS[command][:2]
        payload = npk.encode_body(command, direction, body)
        if list_header is not None:
            flags |= npk.FLAG_LIST
            payload = npk.list_payload(list_header["total"], list_header["index"], payload)
        frame = npk.build_frame(cmd, key, sequence, payload, flags)
        decoded_command, decoded_header, decoded_body = npk.decode_message(frame, direction)
        assert decoded_command == command and decoded_header == list_header, name
        full = npk.decode_body(command, direction, npk.encode_body(command, direction, body))
        assert decoded_body == full, (name, decoded_body, full)
        assert npk.encode_body(command, direction, decoded_body) == npk.encode_body(command, direction, body), name
        entry = {"name": name, "command": command, "direction": direction, "cmd": cmd, "key": key,
                 "flags": flags, "sequence": sequence}
        if list_header is not None:
            entry["list"] = list_header
        entry["body"] = full
        entry["frame"] = frame.hex()
        entry["chunks"] = {str(size): [c.hex() for c in npk.chunk(frame, size)] for size in npk.CHUNK_SIZES}
        if mapped is not None:
            entry["mapped"] = mapped(full)
        out.append(entry)
        return frame

    # the SDK's example first: it must come out byte for byte
    example = v("the SDK's own example: file header /music (TSCommandDataWrapper.h)", "fileHead", "central", 4,
                {"path": "/music", "crc32": str(0x94A4AF61), "size": 515376})
    assert example == SDK_EXAMPLE, example.hex()

    now = T2000 + 10 * 3600 + 17
    auth = {"user_id": "tsgateway", "system": 1, "version": "Linux 6.1", "brand": "tsgateway",
            "model": "Raspberry Pi 4", "auth_code": "",
            "user": {"gender": 1, "age": 41, "height": 178, "weight": 76.5},
            "time": {"timestamp": now, "zone_offset": 3600}}
    v("bind, first time, no auth code", "bind", "central", 1, auth)
    v("login with an auth code from the watch's QR code, zone west of UTC", "login", "central", 1,
      dict(auth, auth_code="A7K2-9QX", time={"timestamp": now, "zone_offset": -18000}))
    v("bind accepted, bound before", "bind", "watch", 1, {"result": 0, "ever_bind": 1, "bind_time": str(T2000 - 30 * DAY)})
    v("bind declined on the watch", "bind", "watch", 1, {"result": 2, "ever_bind": 0, "bind_time": "0"})
    v("login refused: user id does not match", "login", "watch", 1, {"result": 1, "ever_bind": 0, "bind_time": "0"})
    v("set time, UTC+1", "timeSet", "central", 2, {"timestamp": now, "zone_offset": 3600})
    v("set time, UTC-3:30 (zig-zag)", "timeSet", "central", 2, {"timestamp": now, "zone_offset": -12600})
    v("set time, UTC+14", "timeSet", "central", 2, {"timestamp": now, "zone_offset": 50400})
    v("set time done", "timeSet", "watch", 2, {"result": 0})
    v("set time refused", "timeSet", "watch", 2, {"result": 1})
    v("battery request", "battery", "central", 3, {})
    v("battery request, retransmitted", "battery", "central", 3, {}, flags=npk.FLAG_RETRANSMISSION)
    v("battery 87 %, not charging", "battery", "watch", 3, {"level": 87, "charging": False},
      mapped=lambda b: {"battery": npk.battery_status(b)})
    v("battery answer with the response bit", "battery", "watch", 3, {"level": 5, "charging": False},
      flags=npk.FLAG_RESPONSE, mapped=lambda b: {"battery": npk.battery_status(b)})
    v("battery changed: charging at 100 %", "batteryChanged", "watch", 9, {"level": 100, "charging": True},
      mapped=lambda b: {"battery": npk.battery_status(b)})
    v("device information request", "deviceInfo", "central", 4, {})
    v("device information", "deviceInfo", "watch", 4, PERIPHERAL)
    v("device information, almost empty", "deviceInfo", "watch", 4, {"model": "X", "version": "0.1"})

    hr = {"monitor": monitor(True, 0, 1440, 10), "exercise_alarm": base_alarm(True, 0, 165),
          "resting_alarm": base_alarm(True, 45, 120), "max_threshold": 190}
    v("heart-rate monitor get", "heartRateConfigGet", "central", 5, {})
    v("heart-rate monitor", "heartRateConfigGet", "watch", 5, hr)
    v("heart-rate monitor set", "heartRateConfigSet", "central", 6, dict(hr, monitor=monitor(True, 480, 1320, 30)))
    v("heart-rate monitor set: done", "heartRateConfigSet", "watch", 6, {"result": 0})
    v("heart-rate monitor changed on the watch", "heartRateConfigChanged", "watch", 40, dict(hr, monitor=monitor(False, 0, 1440, 5)))
    stress = {"monitor": monitor(True, 540, 1260, 60), "alarm": base_alarm(True, 0, 80)}
    v("stress monitor get", "stressConfigGet", "central", 7, {})
    v("stress monitor", "stressConfigGet", "watch", 7, stress)
    v("stress monitor set", "stressConfigSet", "central", 8, stress)
    v("stress monitor changed on the watch", "stressConfigChanged", "watch", 41, stress)
    spo2 = {"monitor": monitor(True, 0, 1440, 60), "alarm": base_alarm(True, 90, 100)}
    v("SpO2 monitor get", "spo2ConfigGet", "central", 9, {})
    v("SpO2 monitor", "spo2ConfigGet", "watch", 9, spo2)
    v("SpO2 monitor set", "spo2ConfigSet", "central", 10, dict(spo2, alarm=base_alarm(False, 0, 0)))
    v("SpO2 monitor changed on the watch", "spo2ConfigChanged", "watch", 42, spo2)
    bp = {"monitor": monitor(False, 0, 1440, 120),
          "alarm": {"is_enabled": True, "sbp_min": 90, "sbp_max": 140, "dbp_min": 60, "dbp_max": 90}}
    v("blood-pressure monitor get", "bloodPressureConfigGet", "central", 11, {})
    v("blood-pressure monitor", "bloodPressureConfigGet", "watch", 11, bp)
    v("blood-pressure monitor set", "bloodPressureConfigSet", "central", 12, bp)
    v("blood-pressure monitor changed on the watch", "bloodPressureConfigChanged", "watch", 43, bp)
    v("blood-pressure monitor set refused", "bloodPressureConfigSet", "watch", 12, {"result": 1})

    alarms = lambda b: {"alarms": npk.alarms_from_list(b)}  # noqa: E731
    v("alarms get", "alarmsGet", "central", 13, {})
    v("five alarms, one with a 63-byte label", "alarmsGet", "watch", 13, {"items": ALARMS}, mapped=alarms)
    v("no alarms", "alarmsGet", "watch", 13, {"items": []}, mapped=alarms)
    v("alarms set: the whole list", "alarmsSet", "central", 14, {"items": ALARMS[:3]}, mapped=alarms)
    v("alarms set: empty list", "alarmsSet", "central", 14, {"items": []}, mapped=alarms)
    v("alarms set: answered", "alarmsSet", "watch", 14, {"result": 0})
    v("alarms changed on the watch", "dataChanged", "watch", 44, {"type": 1})
    v("watch face changed on the watch", "dataChanged", "watch", 45, {"type": 2})

    v("sync sleep from a start", "syncStart", "central", 15, {"start": T2000 - 7 * DAY, "end": T2000 + DAY, "type": 5})
    v("sync sleep: data follows", "syncStart", "watch", 15, {"type": 5, "result": 0})
    v("sync sleep: nothing new", "syncStart", "watch", 15, {"type": 5, "result": 1})
    v("sync sleep: failed", "syncStart", "watch", 15, {"type": 5, "result": 127})
    sleep = lambda b: dict(zip(("records", "rejected"), npk.sleep_day_records(b)))  # noqa: E731
    v("sleep day 1 of 2", "sleepData", "watch", 46, SLEEP_DAY_1, list_header={"total": 2, "index": 0}, mapped=sleep)
    v("sleep day 2 of 2", "sleepData", "watch", 46, SLEEP_DAY_2, list_header={"total": 2, "index": 1}, mapped=sleep)
    v("sleep day without items", "sleepData", "watch", 47, {"timestamp": T2000, "items": []},
      list_header={"total": 1, "index": 0}, mapped=sleep)
    v("sync end: sleep", "syncEnd", "watch", 48, {"type": 5})
    v("sync heart rate", "syncStart", "central", 16, {"start": T2000, "end": T2000 + DAY, "type": 1})
    hr_mapped = lambda b: dict(zip(("samples", "rejectedManual"), npk.heart_rate_samples(b)))  # noqa: E731
    v("heart-rate day", "heartRateData", "watch", 49, HR_DAY, list_header={"total": 1, "index": 0}, mapped=hr_mapped)
    v("heart-rate day: manual readings out of range are not samples", "heartRateData", "watch", 49, HR_DAY_OUT_OF_RANGE,
      list_header={"total": 2, "index": 1}, mapped=hr_mapped)
    v("sync end: heart rate", "syncEnd", "watch", 50, {"type": 1})
    v("sequence 65535", "battery", "central", 65535, {})
    return out


# --------------------------------------------------------------------------- invalid vectors

def build_invalid():
    out = []

    def frame_case(name, data, error):
        try:
            npk.decode_frame(data)
        except npk.NpkError as e:
            assert e.code == error, (name, e.code)
        else:
            raise AssertionError(name + ": decoded")
        out.append({"name": name, "layer": "frame", "input": bytes(data).hex(), "error": error})

    def message_case(name, data, direction, error):
        npk.decode_frame(data)  # the frame itself is sound
        try:
            npk.decode_message(data, direction)
        except npk.NpkError as e:
            assert e.code == error, (name, e.code, str(e))
        else:
            raise AssertionError(name + ": decoded")
        out.append({"name": name, "layer": "message", "direction": direction, "input": bytes(data).hex(), "error": error})

    def list_case(name, frames, error):
        try:
            npk.assemble_list(frames)
        except npk.NpkError as e:
            assert e.code == error, (name, e.code)
        else:
            raise AssertionError(name + ": assembled")
        out.append({"name": name, "layer": "list", "inputs": [f.hex() for f in frames], "error": error})

    def mapping_case(name, command, body, error, list_header=None):
        data = npk.frame_for(command, "watch", 30, body) if list_header is None else \
            list_frame(command, 30, body, list_header["total"], list_header["index"])
        decoded = npk.decode_message(data, "watch")[2]
        entry = {"name": name, "layer": "mapping", "command": command, "input": data.hex(), "error": error}
        if command == "sleepData":
            records, rejected = npk.sleep_day_records(decoded)
            assert [r["error"] for r in rejected] == [error], (name, rejected)
            entry["records"] = records
            entry["rejected"] = rejected
        else:
            try:
                (npk.alarms_from_list if command == "alarmsGet" else npk.battery_status)(decoded)
            except npk.NpkError as e:
                assert e.code == error, (name, e.code)
            else:
                raise AssertionError(name + ": mapped")
        out.append(entry)

    battery = npk.frame_for("battery", "watch", 3, {"level": 87, "charging": False})
    frame_case("wrong CRC", battery[:6] + bytes([battery[6] ^ 0x01]) + battery[7:], "crcMismatch")
    frame_case("flipped payload bit", battery[:-1] + bytes([battery[-1] ^ 0x10]), "crcMismatch")
    frame_case("empty payload with a CRC that is not 0", npk.build_frame(3, 9, 3, b"")[:6] + b"\x12\x34\x00\x03", "crcMismatch")
    frame_case("length 0x2001, over the bound", struct.pack(">BBBBHHH", 0xAB, 5, 5, 0x20, 0x2001, 0, 7) + b"\x00" * 0x2001,
               "lengthOverBound")
    frame_case("length 0xFFFF", struct.pack(">BBBBHHH", 0xAB, 2, 2, 0, 0xFFFF, 0, 1), "lengthOverBound")
    frame_case("payload shorter than the length", battery[:-1], "lengthMismatch")
    frame_case("payload longer than the length", battery + b"\x00", "lengthMismatch")
    frame_case("no magic", b"\xba" + battery[1:], "badMagic")
    frame_case("header cut short", battery[:9], "truncatedHeader")

    message_case("unknown key in settings (02/99)", npk.build_frame(0x02, 0x99, 5, b"\x08\x01"), "watch", "unknownCommand")
    message_case("unknown command group 0x07", npk.build_frame(0x07, 0x01, 5, b""), "watch", "unknownCommand")
    message_case("SpO2 day data (05/02): not one the gateway syncs",
                 npk.build_frame(0x05, 0x02, 5, npk.list_payload(1, 0, b"\x08\x01"), npk.FLAG_LIST), "watch", "unknownCommand")
    message_case("payload is a truncated varint", npk.build_frame(0x03, 0x09, 3, b"\x08\xff"), "watch", "payloadDoesNotParse")
    message_case("payload's string runs past its end", npk.build_frame(0x02, 0x02, 4, b"\x22\x10TS-W2"), "watch",
                 "payloadDoesNotParse")
    message_case("payload with wire type 7", npk.build_frame(0x02, 0x48, 44, b"\x0f\x01"), "watch", "payloadDoesNotParse")
    message_case("payload with field number 0", npk.build_frame(0x02, 0x48, 44, b"\x00\x01"), "watch", "payloadDoesNotParse")
    message_case("label that is not UTF-8", npk.build_frame(0x02, 0x38, 13, b"\x0a\x04\x32\x02\xc3\x28"), "watch",
                 "payloadDoesNotParse")
    message_case("heart-rate day whose manual reading does not parse",
                 npk.build_frame(0x05, 0x01, 49, npk.list_payload(1, 0, b"\x1a\x04\x08\x01\x10"), npk.FLAG_LIST), "watch",
                 "payloadDoesNotParse")
    message_case("sleep day whose items do not parse",
                 npk.build_frame(0x05, 0x05, 46, npk.list_payload(1, 0, b"\x12\x05\x08\x01\x10"), npk.FLAG_LIST), "watch",
                 "payloadDoesNotParse")
    message_case("battery request with a payload", npk.build_frame(0x03, 0x09, 3, b"\x08\x01"), "central", "unexpectedPayload")
    message_case("sleep data without the list flag",
                 npk.build_frame(0x05, 0x05, 46, npk.encode_body("sleepData", "watch", SLEEP_DAY_1)), "watch", "notAListFrame")
    message_case("battery with the list flag", npk.build_frame(0x03, 0x09, 3, npk.list_payload(1, 0, b"\x08\x57"), npk.FLAG_LIST),
                 "watch", "unexpectedListFrame")
    message_case("list payload shorter than its header", npk.build_frame(0x05, 0x05, 46, b"\x00\x00\x00\x01\x00", npk.FLAG_LIST),
                 "watch", "truncatedListHeader")
    message_case("list index 2 of 2", list_frame("sleepData", 46, SLEEP_DAY_1, 2, 2), "watch", "listIndexOutOfRange")
    message_case("list of 0 elements", list_frame("sleepData", 46, SLEEP_DAY_1, 0, 0), "watch", "listIndexOutOfRange")

    d0 = list_frame("sleepData", 46, SLEEP_DAY_1, 3, 0)
    d1 = list_frame("sleepData", 46, SLEEP_DAY_2, 3, 1)
    d2 = list_frame("sleepData", 46, SLEEP_DAY_1, 3, 2)
    list_case("list index out of order: 0, 2", [d0, d2], "listIndexOutOfOrder")
    list_case("list index repeated: 0, 0", [d0, d0], "listIndexOutOfOrder")
    list_case("list starting at index 1", [d1, d2], "listIndexOutOfOrder")
    list_case("list element with another sequence", [d0, list_frame("sleepData", 47, SLEEP_DAY_2, 3, 1)], "listSequenceChanged")
    list_case("list element with another total", [d0, list_frame("sleepData", 46, SLEEP_DAY_2, 4, 1)], "listTotalChanged")
    list_case("list element of another command", [d0, list_frame("heartRateData", 46, HR_DAY, 3, 1)], "listCommandChanged")
    list_case("list ends after 2 of 3", [d0, d1], "listIncomplete")
    list_case("a frame without the list flag inside a list",
              [d0, npk.build_frame(0x05, 0x05, 46, npk.encode_body("sleepData", "watch", SLEEP_DAY_2))], "notAListFrame")

    mapping_case("sleep item with a negative duration", "sleepData",
                 {"timestamp": T2000, "items": [NIGHT_1[0], sleep_item(T2000 - 3600, -600, 1), NIGHT_1[2]]},
                 "negativeDuration", {"total": 1, "index": 0})
    mapping_case("sleep item of stage 4", "sleepData",
                 {"timestamp": T2000, "items": [NIGHT_1[0], sleep_item(T2000 - 3600, 600, 4)]},
                 "unknownSleepStage", {"total": 1, "index": 0})
    mapping_case("sleep item of stage -1", "sleepData",
                 {"timestamp": T2000, "items": [sleep_item(T2000 - 3600, 600, -1), NIGHT_1[1]]},
                 "unknownSleepStage", {"total": 1, "index": 0})
    mapping_case("sleep item of no duration", "sleepData",
                 {"timestamp": T2000, "items": [sleep_item(T2000 - 3600, 0, 1)]}, "zeroDuration", {"total": 1, "index": 0})
    mapping_case("alarm at hour 24", "alarmsGet", {"items": [alarm_item(0, True, 24, 0, 0, "")]}, "hourOutOfRange")
    mapping_case("alarm at minute 60", "alarmsGet", {"items": [alarm_item(0, True, 7, 60, 0, "")]}, "minuteOutOfRange")
    mapping_case("alarm id 256", "alarmsGet", {"items": [alarm_item(256, True, 7, 0, 0, "")]}, "alarmIdOutOfRange")
    mapping_case("alarm repeat with bit 7", "alarmsGet", {"items": [alarm_item(1, True, 7, 0, 0x81, "")]}, "repeatOutOfRange")
    mapping_case("alarm label of 64 bytes", "alarmsGet", {"items": [alarm_item(1, True, 7, 0, 0, LABEL_63 + "!")]}, "labelTooLong")
    mapping_case("battery at 101 %", "battery", {"level": 101, "charging": False}, "batteryLevelOutOfRange")
    return out


def list_frame(command, sequence, body, total, index):
    cmd, key = npk.COMMANDS[command][:2]
    return npk.build_frame(cmd, key, sequence, npk.list_payload(total, index, npk.encode_body(command, "watch", body)),
                           npk.FLAG_LIST)


# --------------------------------------------------------------------------- stream vectors

def build_stream():
    out = []

    def case(name, chunks, frames=None, drops=None):
        chunks = [bytes(c) for c in chunks]
        assert all(chunks), name + ": empty chunk"
        got, got_drops = npk.reassemble(chunks)
        stream = b"".join(chunks)
        assert npk.reassemble([stream[i:i + 1] for i in range(len(stream))]) == (got, got_drops), name
        assert npk.reassemble([stream]) == (got, got_drops), name
        for f in got:
            npk.decode_frame(f)
        if frames is not None:
            assert got == frames, (name, [f.hex() for f in got])
        if drops is not None:
            assert got_drops == dict(npk.Reassembler().drops, **drops), (name, got_drops)
        out.append({"name": name, "chunks": [c.hex() for c in chunks], "frames": [f.hex() for f in got], "drops": got_drops})

    battery = npk.frame_for("battery", "watch", 3, {"level": 87, "charging": False})
    info = npk.frame_for("deviceInfo", "watch", 4, PERIPHERAL)
    changed = npk.frame_for("dataChanged", "watch", 44, {"type": 1})
    alarms = npk.frame_for("alarmsGet", "watch", 13, {"items": ALARMS})
    days = [list_frame("sleepData", 46, day, 3, i) for i, day in enumerate((SLEEP_DAY_1, SLEEP_DAY_2, SLEEP_DAY_1))]
    end = npk.frame_for("syncEnd", "watch", 48, {"type": 5})
    hr_day = list_frame("heartRateData", 49, HR_DAY, 1, 0)
    assert 0xAB in hr_day[1:], "the heart-rate day must hold 0xAB after its magic"

    case("one frame in one chunk", [battery], [battery], {})
    case("the SDK's example, one byte per chunk", [SDK_EXAMPLE[i:i + 1] for i in range(len(SDK_EXAMPLE))], [SDK_EXAMPLE], {})
    for size in npk.CHUNK_SIZES:
        case("a sleep sync (3 days and the end) cut at %d bytes" % size, npk.chunk(b"".join(days + [end]), size),
             days + [end], {})
    case("frames packed into one chunk", [battery + changed + info], [battery, changed, info], {})
    case("a payload holding 0xAB, cut at 18 bytes", npk.chunk(hr_day + changed, 18), [hr_day, changed], {})
    case("a frame ends and the next begins in one chunk", [battery[:5], battery[5:] + changed[:3], changed[3:]],
         [battery, changed], {})
    case("garbage before 0xAB", [b"\x00\xff\x12\x34", battery], [battery], {})
    case("garbage with stray 0xAB bytes before and between frames",
         [b"\x13\xab\x00", b"\xab\xab\x02\x37\x00\x00\x30\x00\x00\x00\x00", battery, b"\x42" + changed],
         None, None)
    case("a fake header whose length is over the bound", [b"\xab\x05\x05\x20\x20\x01\x00\x00\x00\x07", battery],
         [battery], {"lengthOverBound": 1})
    case("0xAB right before a frame", [b"\xab" + battery], [battery], {"crcMismatch": 1})
    case("a frame with a wrong CRC between two good ones", [battery, alarms[:7] + bytes([alarms[7] ^ 0xFF]) + alarms[8:], changed],
         [battery, changed], {"crcMismatch": 1})
    lost = npk.chunk(days[0], 18)
    case("a lost chunk (BlueZ cut the tail) inside a list, then the rest", [lost[0]] + lost[2:] + [days[1], days[2], end],
         None, None)
    case("a frame cut short at the end of the link", [battery, alarms[:-4]], [battery], None)
    case("a header cut short at the end", [changed, b"\xab\x05"], [changed], {"truncated": 1})
    inner = npk.frame_for("battery", "watch", 9, {"level": 50, "charging": True})
    carrier = npk.build_frame(0x06, 0x21, 5, npk.encode_body("fileHead", "central", {"path": "/", "crc32": "0", "size": 1})
                              + b"\x00" * 3 + inner)
    case("a corrupt frame whose payload holds a whole frame", [carrier[:6] + b"\x00\x00" + carrier[8:], changed],
         [inner, changed], {"crcMismatch": 1})
    case("a duplicated chunk holding a whole frame", [battery, battery, changed], [battery, battery, changed], {})
    case("only garbage", [b"\x00\x01", b"\xab\x00", b"\xab"], [], None)
    return out


# --------------------------------------------------------------------------- output

render = vector_files.render


def generate():
    return {"valid.json": render(build_valid()), "invalid.json": render(build_invalid()),
            "stream.json": render(build_stream())}


def main(argv=None):
    return vector_files.run(__doc__.splitlines()[0], VECTOR_DIR, generate, "NPK vectors",
                            "scripts/npk/python scripts/npk/npk_vectors.py", argv)


if __name__ == "__main__":
    sys.exit(main())
