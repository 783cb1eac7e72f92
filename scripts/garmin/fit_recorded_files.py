#!/usr/bin/env python3
"""FIT files recorded by devices, read by a FIT decoder nobody here wrote (protocol-spec/garmin/garmin.md §9).

protocol-spec/garmin/vectors/recorded/ holds FIT files from python-fitparse's test fixtures
(SOURCES.md says which device wrote each and why it is here): bytes nobody here made, with a
vivofit's monitoring file (timestamp_16 times), a Forerunner 70's files with compressed-timestamp
headers (which Garmin's Python decoder refuses), developer fields, and two damaged files. This
script reads them with fitparse and writes expected.json: for a file that reads, its data messages
counted by global number, the monitoring records' times (timestamp, or timestamp_16 resolved
against the last full timestamp) and the record messages' heart rates with their times, in FIT's
seconds; for a
file that does not, that it does not. Tests/Families/Garmin/CodecTests/FITRecordedTests.swift
checks tsgateway's decoder against it.

    scripts/garmin/python scripts/garmin/fit_recorded_files.py          # write expected.json anew
    scripts/garmin/python scripts/garmin/fit_recorded_files.py --check  # expected.json is what fitparse reads
"""

import argparse
import json
import os
import sys

import fitparse
import fitparse.utils

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIR = os.path.join(ROOT, "protocol-spec", "garmin", "vectors", "recorded")
MONITORING = 55
RECORD = 20


def raw(message, name):
    for field in message.fields:
        if field.name == name:
            return field.raw_value
    return None


def read(path):
    try:
        fit = fitparse.FitFile(path, check_crc=True)
        messages = list(fit.get_messages())
    except fitparse.utils.FitParseError as error:
        return {"readable": False, "fitparse": type(error).__name__}
    counts, monitoring, heart_rates = {}, [], []
    reference = None
    for message in messages:
        counts[str(message.mesg_num)] = counts.get(str(message.mesg_num), 0) + 1
        # Times stay FIT's own seconds (since 1989-12-31 UTC; under 0x10000000, since the device started).
        time = raw(message, "timestamp")
        if time is not None:
            reference = time
        elif message.mesg_num == MONITORING and raw(message, "timestamp_16") is not None and reference is not None:
            # FIT profile: timestamp_16 holds the low 16 bits of the time; it follows the last full one.
            short = raw(message, "timestamp_16")
            reference = reference + ((short - (reference & 0xFFFF)) & 0xFFFF)
            time = reference
        if message.mesg_num == MONITORING and time is not None:
            monitoring.append(time)
        if message.mesg_num == RECORD and time is not None and raw(message, "heart_rate") not in (None, 0xFF):
            heart_rates.append([time, raw(message, "heart_rate")])
    return {"readable": True, "messages": counts, "monitoringTimes": monitoring, "recordHeartRates": heart_rates}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail unless expected.json is what fitparse reads today")
    arguments = parser.parse_args()
    names = sorted(name for name in os.listdir(DIR) if name.endswith(".fit"))
    expected = {name: read(os.path.join(DIR, name)) for name in names}
    path = os.path.join(DIR, "expected.json")
    text = json.dumps(expected, indent=1, sort_keys=True) + "\n"
    if arguments.check:
        with open(path) as file:
            if file.read() != text:
                print(f"fit_recorded_files: {path} is not what fitparse reads from the files beside it; run without --check", file=sys.stderr)
                return 1
        print(f"fit_recorded_files: {len(names)} recorded FIT files read by fitparse {fitparse.__version__} as expected.json says")
        return 0
    with open(path, "w") as file:
        file.write(text)
    readable = [name for name in names if expected[name]["readable"]]
    print(f"fit_recorded_files: wrote {path}: {len(readable)} of {len(names)} files read")
    return 0


if __name__ == "__main__":
    sys.exit(main())
