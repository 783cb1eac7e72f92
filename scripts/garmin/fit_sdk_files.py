#!/usr/bin/env python3
"""FIT files between Garmin's FIT SDK and tsgateway (protocol-spec/garmin/garmin.md §9, §11).

Two directions, so that neither side checks only itself:
  * protocol-spec/garmin/vectors/sdk/: FIT files written by Garmin's own Encoder from the inputs
    below, bytes nobody here made, with expected.json: the sleep items and heart-rate samples
    they hold. Tests/Families/Garmin/CodecTests/FITSDKTests.swift reads them with tsgateway's
    decoder.
  * protocol-spec/garmin/vectors/ours/: FIT files tsgateway's encoder writes: the simulated
    watch's sleep and monitoring files, and the settings file `alarms set` uploads (§10) (the same
    Swift test writes them when TSGATEWAY_WRITE_FIT_EXAMPLES=1, and otherwise checks they are
    what the encoder writes today), with expected.json. This script reads them with Garmin's
    Decoder and checks every sleep level, heart rate and alarm (time, days, on) against it.

    scripts/garmin/python scripts/garmin/fit_sdk_files.py          # write sdk/ anew
    scripts/garmin/python scripts/garmin/fit_sdk_files.py --check  # sdk/ is what the SDK writes; ours/ reads right

Garmin's Python decoder refuses compressed-timestamp headers (which watches write), so ours/
holds files without them; tsgateway's decoder reads both (FITTests).
"""

import argparse
import datetime
import json
import os
import sys

from garmin_fit_sdk import Decoder, Encoder, Stream

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SDK_DIR = os.path.join(ROOT, "protocol-spec", "garmin", "vectors", "sdk")
OURS_DIR = os.path.join(ROOT, "protocol-spec", "garmin", "vectors", "ours")
GARMIN_EPOCH = 631065600
UTC = datetime.timezone.utc
STAGES = {1: "awake", 2: "light", 3: "deep", 4: "rem"}

# 2026-11-20 22:00 UTC
NIGHT = 1795211200


def when(unix):
    return datetime.datetime.fromtimestamp(unix, UTC)


def unix(value):
    """A decoded timestamp (a datetime, or Garmin seconds) as Unix seconds."""
    if isinstance(value, datetime.datetime):
        return int(value.timestamp())
    return int(value) + GARMIN_EPOCH


def sleep_items(levels):
    """[(unix, level)] → [[stage, start, duration]]: each record ends its stage at its time."""
    items, previous = [], None
    for time, level in levels:
        if previous is not None and time > previous and level in STAGES:
            items.append([STAGES[level], previous, time - previous])
        previous = time
    return items


def heart_rate(records):
    """[(full unix or None, timestamp_16 or None, bpm)] → [[unix, bpm]], timestamp_16 resolved against the last full time."""
    samples, reference = [], None
    for full, short, bpm in records:
        if full is not None:
            reference = full - GARMIN_EPOCH
        elif short is not None and reference is not None:
            reference = reference + ((short - (reference & 0xFFFF)) & 0xFFFF)
        else:
            continue
        if bpm is not None and 0 < bpm < 255:
            samples.append([reference + GARMIN_EPOCH, bpm])
    return samples


def sdk_sleep():
    levels = [(NIGHT, 0), (NIGHT + 1200, 2), (NIGHT + 4800, 3), (NIGHT + 6000, 4), (NIGHT + 6060, 1), (NIGHT + 9000, 2),
              (NIGHT + 9600, 0), (NIGHT + 12000, 3), (NIGHT + 15000, 2)]
    encoder = Encoder()
    encoder.on_mesg(0, {"type": 49, "manufacturer": 1, "product": 3889, "time_created": when(NIGHT)})
    for time, level in levels:
        encoder.on_mesg(275, {"timestamp": when(time), "sleep_level": level})
    return encoder.close(), {"sleepItems": sleep_items(levels), "heartRate": []}


def sdk_monitoring():
    """A full timestamp, then timestamp_16 every 10 minutes for 20 hours (across its rollover) with
    a monitoring_info record (a full timestamp of its own) halfway, and a full timestamp again."""
    writes, records = [], []

    def monitoring(full, short, bpm):
        mesg = {"heart_rate": bpm}
        if full is not None:
            mesg["timestamp"] = when(full)
        else:
            mesg["timestamp_16"] = short
        writes.append((55, mesg))
        records.append((full, short, bpm))

    monitoring(NIGHT, None, 58)
    for step in range(1, 121):
        if step == 60:
            info = NIGHT + 600 * 59 + 1
            writes.append((103, {"timestamp": when(info), "local_timestamp": info - GARMIN_EPOCH + 3600}))
            records.append((info, None, None))
        time = NIGHT + 600 * step
        monitoring(None, (time - GARMIN_EPOCH) & 0xFFFF, 50 + step % 35)
    monitoring(NIGHT + 90000, None, 64)
    encoder = Encoder()
    encoder.on_mesg(0, {"type": 32, "manufacturer": 1, "product": 3889, "time_created": when(NIGHT)})
    for number, mesg in writes:
        encoder.on_mesg(number, mesg)
    return encoder.close(), {"sleepItems": [], "heartRate": heart_rate(records)}


def sdk_files():
    files = {}
    for name, make in (("sleep.fit", sdk_sleep), ("monitoring.fit", sdk_monitoring)):
        data, expected = make()
        files[name] = (bytes(data), expected)
    return files


def decode(path):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    decoder = Decoder(Stream.from_byte_array(data))
    if not decoder.is_fit():
        raise SystemExit("%s: Garmin's decoder does not take it for a FIT file" % path)
    decoder = Decoder(Stream.from_byte_array(data))
    if not decoder.check_integrity():
        raise SystemExit("%s: Garmin's decoder finds its CRC or size wrong" % path)
    messages, errors = Decoder(Stream.from_byte_array(data)).read(convert_types_to_strings=False, merge_heart_rates=False)
    if errors:
        raise SystemExit("%s: Garmin's decoder failed: %s" % (path, errors))
    return messages


def read_back(path):
    """What Garmin's decoder reads in a file, in the project's terms."""
    messages = decode(path)
    levels = [(unix(m["timestamp"]), m.get("sleep_level")) for m in messages.get("sleep_level_mesgs", [])]
    records = []
    # Messages come in file order within their kind; monitoring_info sets the reference too, so
    # merge the two kinds by the order they were written: the SDK keeps no global order, so the
    # files ours/ holds carry no monitoring_info.
    for m in messages.get("monitoring_mesgs", []):
        full = unix(m["timestamp"]) if "timestamp" in m else None
        records.append((full, m.get("timestamp_16"), m.get("heart_rate")))
    found = {"sleepItems": sleep_items(levels), "heartRate": heart_rate(records)}
    # alarm_settings (222) is not in the SDK's profile: its messages come under "222", their
    # fields by number (protocol-spec/garmin/garmin.md §10).
    alarms = [[m.get(0), m.get(1), m.get(2)] for m in messages.get("222", [])]
    if alarms:
        found["alarms"] = alarms
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare sdk/ with what the SDK writes now and read ours/ back")
    args = parser.parse_args(argv)
    files = sdk_files()
    expected_text = json.dumps({name: expected for name, (_, expected) in files.items()}, indent=1) + "\n"
    if not args.check:
        os.makedirs(SDK_DIR, exist_ok=True)
        for name, (data, _) in files.items():
            with open(os.path.join(SDK_DIR, name), "wb") as f:
                f.write(data)
        with open(os.path.join(SDK_DIR, "expected.json"), "w", encoding="utf-8") as f:
            f.write(expected_text)
        print("wrote %s: %s" % (os.path.relpath(SDK_DIR, ROOT), ", ".join(sorted(files)) + ", expected.json"))
        return 0
    failures = []
    for name, (data, _) in files.items():
        try:
            with open(os.path.join(SDK_DIR, name), "rb") as f:
                if f.read() != data:
                    failures.append("sdk/%s is not what Garmin's Encoder writes now" % name)
        except OSError as error:
            failures.append("sdk/%s: %s" % (name, error))
    try:
        with open(os.path.join(SDK_DIR, "expected.json"), encoding="utf-8") as f:
            if f.read() != expected_text:
                failures.append("sdk/expected.json is stale")
    except OSError as error:
        failures.append("sdk/expected.json: %s" % error)
    with open(os.path.join(OURS_DIR, "expected.json"), encoding="utf-8") as f:
        ours = json.load(f)
    for name, expected in sorted(ours.items()):
        got = read_back(os.path.join(OURS_DIR, name))
        for key in ("sleepItems", "heartRate", "alarms"):
            if got.get(key, []) != expected.get(key, []):
                failures.append("ours/%s: Garmin's decoder reads %d %s, tsgateway wrote %d (first difference: %s)" % (
                    name, len(got.get(key, [])), key, len(expected.get(key, [])),
                    next(([a, b] for a, b in zip(got.get(key, []), expected.get(key, [])) if a != b), "in the count")))
        print("ours/%s: Garmin's decoder reads %d sleep items, %d heart-rate samples and %d alarms, as tsgateway wrote them"
              % (name, len(got["sleepItems"]), len(got["heartRate"]), len(got.get("alarms", []))) if not failures else "",
              end="\n" if not failures else "")
    if failures:
        print("\n".join(failures) + "\n(run scripts/garmin/python scripts/garmin/fit_sdk_files.py to write sdk/ anew; "
              "TSGATEWAY_WRITE_FIT_EXAMPLES=1 swift test --filter FITSDKTests for ours/)", file=sys.stderr)
        return 1
    print("sdk/ is what Garmin's Encoder writes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
