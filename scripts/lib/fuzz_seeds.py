#!/usr/bin/env python3
"""Seed corpora for scripts/fuzz, made from the project's own fixtures at run time.

    scripts/lib/fuzz_seeds.py TARGET DIRECTORY

frame       the valid frames of protocol-spec/v1/vectors/valid.json (first byte: chunk size)
sleep-json  the JSON documents in Tests/TSSleepTests/SleepInputDecoderTests.swift, and a few written here
sleep-csv   the CSV documents of the same tests, and a few written here
btsnoop     captures written here: the monitor datalink with an LE link, GATT discovery of the
            watch service, writes and notifications carrying the vectors' frames, EATT, and the
            same traffic in H4 (datalink 1002); a Huami band's link from protocol-spec/huami/vectors/
config      udev/config.example.yaml and the YAML documents in Tests/TSGatewayServiceTests/ConfigurationTests.swift
npk         the valid frames (from the watch) and chunked streams of protocol-spec/npk/vectors/ (first byte: chunk size)
qring       the packets, big-data streams and sleep frames of protocol-spec/qring/vectors/ (first byte: chunk size)
garmin      the delimited GFDI frames, streams and control messages of protocol-spec/garmin/vectors/, and its
            FIT files (sdk/, ours/) (first byte: write size)

Unknown targets get no seeds (libFuzzer starts from an empty input).
"""
import json
import pathlib
import re
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def swift_literals(path):
    """The string literals of a Swift test file: multi-line ones with their indentation removed,
    then one-line ones, with Swift's escapes decoded."""
    text = (ROOT / path).read_text()
    found = []
    for match in re.finditer(r'"""\n(.*?)\n([ \t]*)"""', text, re.S):
        indent = match.group(2)
        lines = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in match.group(1).split("\n")]
        found.append(unescape("\n".join(lines)))
    for match in re.finditer(r'(?<!")"((?:[^"\\\n]|\\.)+)"(?!")', text):
        found.append(unescape(match.group(1)))
    return found


def unescape(text):
    def replace(match):
        escape = match.group(1)
        if escape.startswith("u{"):
            return chr(int(escape[2:-1], 16))
        return {"n": "\n", "r": "\r", "t": "\t", "0": "\0", "\\": "\\", '"': '"', "'": "'"}.get(escape, escape)
    return re.sub(r"\\(u\{[0-9A-Fa-f]+\}|.)", replace, text)


def vectors():
    return [bytes.fromhex(v["frame"]) for v in json.loads((ROOT / "protocol-spec/v1/vectors/valid.json").read_text())]


def frame_seeds():
    return {f"vector-{i:03d}": bytes([19]) + frame for i, frame in enumerate(vectors())}


def sleep_seeds(fmt):
    literals = swift_literals("Tests/TSSleepTests/SleepInputDecoderTests.swift")
    if fmt == "json":
        chosen = [t for t in literals if t.lstrip("\ufeff \n\r\t").startswith(("[", "{"))]
        chosen += [
            '[{"stage":"light","start":1768428000,"duration":60},{"stage":"deep","start":1768428060,"duration":1800}]',
            '[{"stage":2,"start":"2026-01-14T22:00:00+01:00","duration":600.0}]',
            '[{"stage":"rem","start":"2026-01-14T22:00:00.5Z","duration":6e2,"x":[{"y":null}]}]',
        ]
    else:
        chosen = [t for t in literals if "," in t and not t.lstrip().startswith(("[", "{"))]
        chosen += [
            "stage,start,duration\nlight,1768428000,60\ndeep,1768428060,1800\n",
            "# night\r\nduration,stage,start\r\n600,\"rem\",2026-01-14T22:00:00Z\r\n\r\n60,0,1768428600\r\n",
        ]
    return {f"{fmt}-{i:03d}": text.encode() for i, text in enumerate(chosen)}


def le16(value):
    return struct.pack("<H", value & 0xFFFF)


def att_uuid(text):
    return bytes(reversed(bytes.fromhex(text.replace("-", ""))))


SERVICE = "54530001-6777-4e3b-9c2a-7473676174e5"
WRITE = "54530002-6777-4e3b-9c2a-7473676174e5"
NOTIFY = "54530003-6777-4e3b-9c2a-7473676174e5"
PEER = bytes([0x66, 0x55, 0x44, 0x33, 0x22, 0x11])


def link_packets(frames, discovery=True, eatt=False):
    """(opcode, data) monitor packets of one LE link: connection, MTU exchange, discovery,
    the frames as writes and notifications, disconnection."""
    handle = 0x0040
    packets = [(3, bytes([0x3E, 19, 0x01, 0x00]) + le16(handle) + bytes([0x00, 0x00]) + PEER + le16(24) + le16(0) + le16(42) + bytes([0]))]

    def l2cap(cid, payload, sent, fragment=27):
        pdu = le16(len(payload)) + le16(cid) + payload
        for offset in range(0, len(pdu), fragment):
            chunk = pdu[offset:offset + fragment]
            boundary = (0x0 if sent else 0x2) if offset == 0 else 0x1
            packets.append((4 if sent else 5, le16(handle | boundary << 12) + le16(len(chunk)) + chunk))

    l2cap(4, bytes([0x02]) + le16(247), True)
    l2cap(4, bytes([0x03]) + le16(185), False)
    if discovery:
        l2cap(4, bytes([0x11, 20]) + le16(0x0010) + le16(0x0020) + att_uuid(SERVICE), False)
        l2cap(4, bytes([0x09, 21]) + le16(0x0011) + bytes([0x0C]) + le16(0x0012) + att_uuid(WRITE)
              + le16(0x0013) + bytes([0x10]) + le16(0x0014) + att_uuid(NOTIFY), False)
        l2cap(4, bytes([0x05, 0x02]) + le16(0x0014) + att_uuid(NOTIFY), False)
    if eatt:
        l2cap(5, bytes([0x14, 0x02]) + le16(10) + le16(0x0027) + le16(0x0041) + le16(247) + le16(64) + le16(10), True)
        l2cap(5, bytes([0x15, 0x02]) + le16(10) + le16(0x0042) + le16(247) + le16(64) + le16(10) + le16(0), False)
    for i, frame in enumerate(frames):
        sent = i % 2 == 0
        pdu = (bytes([0x52]) + le16(0x0012) if sent else bytes([0x1B]) + le16(0x0014)) + frame
        if eatt and i % 3 == 2:
            sdu = le16(len(pdu)) + pdu
            for offset in range(0, len(sdu), 30):
                l2cap(0x0042 if sent else 0x0041, sdu[offset:offset + 30], sent)
        else:
            l2cap(4, pdu, sent)
    if len(frames) > 1:
        multiple = bytes([0x23]) + le16(0x0014) + le16(len(frames[1])) + frames[1] + le16(0x0014) + le16(len(frames[-1])) + frames[-1]
        l2cap(4, multiple, False)
    packets.append((3, bytes([0x05, 4, 0x00]) + le16(handle) + bytes([0x13])))
    return packets


HUAMI_VECTORS = ROOT / "protocol-spec/huami/vectors"


def huami_vendor(number):
    return f"000000{number:02x}-0000-3512-2118-0009af100700"


def huami_link_packets():
    """(opcode, data) monitor packets of one LE link to a Huami band: discovery of its two vendor
    services (16-bit UUIDs FEE0, FEE1) and their characteristics, then the messages of
    protocol-spec/huami/vectors/messages.json as writes (to the band) and notifications (from it)
    on their characteristics, and a fetch's data."""
    handle = 0x0040
    packets = [(3, bytes([0x3E, 19, 0x01, 0x00]) + le16(handle) + bytes([0x00, 0x00]) + PEER + le16(24) + le16(0) + le16(42) + bytes([0]))]

    def att(payload, sent):
        pdu = le16(len(payload)) + le16(4) + payload
        for offset in range(0, len(pdu), 27):
            chunk = pdu[offset:offset + 27]
            boundary = (0x0 if sent else 0x2) if offset == 0 else 0x1
            packets.append((4 if sent else 5, le16(handle | boundary << 12) + le16(len(chunk)) + chunk))

    # (name, UUID, value handle): FEE0's from 0x0010, FEE1's (auth) from 0x0030.
    characteristics = [("configuration", huami_vendor(0x03), 0x0012), ("fetchControl", huami_vendor(0x04), 0x0015),
                       ("activityData", huami_vendor(0x05), 0x0018), ("battery", huami_vendor(0x06), 0x001B),
                       ("currentTime", "00002a2b-0000-1000-8000-00805f9b34fb", 0x001E),
                       ("heartRateControl", "00002a39-0000-1000-8000-00805f9b34fb", 0x0021),
                       ("auth", huami_vendor(0x09), 0x0032)]
    values = {name: value for name, _, value in characteristics}
    att(bytes([0x02]) + le16(247), True)
    att(bytes([0x03]) + le16(185), False)
    att(bytes([0x11, 6]) + le16(0x0010) + le16(0x002F) + le16(0xFEE0) + le16(0x0030) + le16(0x003F) + le16(0xFEE1), False)
    att(bytes([0x09, 21]) + b"".join(le16(value - 1) + bytes([0x1A]) + le16(value) + att_uuid(uuid) for _, uuid, value in characteristics[:4]), False)
    att(bytes([0x09, 21]) + b"".join(le16(value - 1) + bytes([0x1A]) + le16(value) + att_uuid(uuid) for _, uuid, value in characteristics[4:]), False)
    for message in json.loads((HUAMI_VECTORS / "messages.json").read_text()):
        to_band = message["direction"] == "toBand"
        att(bytes([0x12 if to_band else 0x1B]) + le16(values[message["characteristic"]]) + bytes.fromhex(message["bytes"]), to_band)
    for fetch in json.loads((HUAMI_VECTORS / "fetch.json").read_text())[:2]:
        for notification in fetch["notifications"]:
            att(bytes([0x1B]) + le16(values["activityData"]) + bytes.fromhex(notification), False)
    packets.append((3, bytes([0x05, 4, 0x00]) + le16(handle) + bytes([0x13])))
    return packets


def btsnoop(datalink, records):
    out = b"btsnoop\0" + struct.pack(">II", 1, datalink)
    time = 0x00DCDDB30F2F8000 + 1_762_156_800_000_000
    for flags, data in records:
        time += 1250
        out += struct.pack(">IIIIQ", len(data), len(data), flags, 0, time) + data
    return out


def btsnoop_seeds():
    frames = vectors()
    seeds = {}
    for name, packets in {
        "monitor-discovery": link_packets(frames[:6]),
        "monitor-no-discovery": link_packets(frames[6:10], discovery=False),
        "monitor-eatt": link_packets(frames[10:16], eatt=True),
    }.items():
        seeds[name] = btsnoop(2001, [(0 << 16 | opcode, data) for opcode, data in packets])
    h4_type = {3: 0x04, 4: 0x02, 5: 0x02}
    h4_flags = {3: 0x3, 4: 0x0, 5: 0x1}
    seeds["h4"] = btsnoop(1002, [(h4_flags[op], bytes([h4_type[op]]) + data) for op, data in link_packets(frames[16:20])])
    seeds["empty-monitor"] = btsnoop(2001, [])
    seeds["monitor-huami"] = btsnoop(2001, [(0 << 16 | opcode, data) for opcode, data in huami_link_packets()])
    return seeds


def config_seeds():
    documents = [(ROOT / "udev/config.example.yaml").read_text()]
    documents += [t for t in swift_literals("Tests/TSGatewayServiceTests/ConfigurationTests.swift") if ":" in t and "\n" in t]
    return {f"config-{i:03d}": text.encode() for i, text in enumerate(documents)}


def qring_seeds():
    folder = ROOT / "protocol-spec/qring/vectors"
    seeds = {}
    packets = b"".join(bytes.fromhex(v["packet"]) for v in json.loads((folder / "packets.json").read_text()))
    seeds["qring-packets"] = bytes([15]) + packets
    for i, v in enumerate(json.loads((folder / "big-data.json").read_text())):
        seeds[f"qring-bigdata-{i:03d}"] = bytes([19]) + b"".join(bytes.fromhex(c) for c in v["chunks"])
    for i, v in enumerate(json.loads((folder / "sleep.json").read_text())):
        if v.get("frame"):
            seeds[f"qring-sleep-{i:03d}"] = bytes([243]) + bytes.fromhex(v["frame"])
    return seeds


def npk_seeds():
    folder = ROOT / "protocol-spec/npk/vectors"
    seeds = {}
    for i, v in enumerate(json.loads((folder / "valid.json").read_text())):
        seeds[f"npk-frame-{i:03d}"] = bytes([19]) + bytes.fromhex(v["frame"])
    for i, v in enumerate(json.loads((folder / "stream.json").read_text())):
        seeds[f"npk-stream-{i:03d}"] = bytes([19]) + b"".join(bytes.fromhex(c) for c in v["chunks"])
    return seeds


def garmin_seeds():
    folder = ROOT / "protocol-spec/garmin/vectors"
    seeds = {}
    for i, v in enumerate(json.loads((folder / "gfdi.json").read_text())):
        seeds[f"garmin-frame-{i:03d}"] = bytes([19]) + bytes.fromhex(v["delimited"])
    for i, v in enumerate(json.loads((folder / "stream.json").read_text())):
        seeds[f"garmin-stream-{i:03d}"] = bytes([19]) + b"".join(bytes.fromhex(c) for c in v["chunks"])
    for i, v in enumerate(json.loads((folder / "multilink.json").read_text())):
        data = bytes.fromhex(v["bytes"])
        seeds[f"garmin-control-{i:03d}"] = bytes([len(data) - 1]) + data
    for kind in ("sdk", "ours"):
        for path in sorted((folder / kind).glob("*.fit")):
            seeds[f"garmin-fit-{kind}-{path.stem}"] = bytes([63]) + path.read_bytes()
    return seeds


def main():
    target, directory = sys.argv[1], pathlib.Path(sys.argv[2])
    makers = {
        "frame": frame_seeds,
        "sleep-json": lambda: sleep_seeds("json"),
        "sleep-csv": lambda: sleep_seeds("csv"),
        "btsnoop": btsnoop_seeds,
        "config": config_seeds,
        "qring": qring_seeds,
        "npk": npk_seeds,
        "garmin": garmin_seeds,
    }
    seeds = makers[target]() if target in makers else {}
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in seeds.items():
        (directory / name).write_bytes(data)
    print(f"fuzz: {len(seeds)} seed(s) for {target} in {directory}")


if __name__ == "__main__":
    main()
