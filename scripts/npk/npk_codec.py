"""TopStep NPK dialect (protocol-spec/npk/topstep-npk.md) in Python: the project's second,
independent implementation of the frame, list mode, chunking, reassembly and the mappings to
the gateway's models. Payloads go through Google's protobuf runtime: the message classes are
built at run time from protoc's descriptor set of protocol-spec/npk/npk.proto (no generated
code, no hand-written varints).

Used by scripts/npk/npk_vectors.py, which writes protocol-spec/npk/vectors/. Run it through
scripts/npk/python, which makes the virtual environment with the pinned protobuf runtime.

  * constants, CRC-16/ARC, the command table
  * frames: build, decode (error codes of topstep-npk.md section 8)
  * list mode: payload, assembler
  * chunking and the reassembler (section 4)
  * payloads: protobuf messages <-> proto3 JSON bodies
  * mappings to the gateway's models (section 7)
"""

import base64
import os
import struct
import subprocess
import tempfile

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import DecodeError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO_DIR = os.path.join(ROOT, "protocol-spec", "npk")
PROTO_FILE = "npk.proto"

# --------------------------------------------------------------------------- constants

MAGIC = 0xAB
HEADER_SIZE = 10
MAX_LENGTH = 0x2000
FLAG_RESPONSE = 0x80
FLAG_RETRANSMISSION = 0x40
FLAG_LIST = 0x20
LIST_HEADER_SIZE = 8
SECONDS_1970_TO_2000 = 946684800
MAX_LABEL_BYTES = 63
# Chunk sizes the vectors cut frames into: MTU 23, 185, 247 less 3 (the ATT header), and the
# 2 bytes less that BlueZ's Multiple Handle Value Notifications carry per entry.
CHUNK_SIZES = (18, 20, 182, 244)


class NpkError(Exception):
    """A rule of the dialect broken: `code` is the stable name the vectors use."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def crc16_arc(data):
    """CRC-16/ARC: polynomial 0x8005 reflected (0xA001), init 0, no final xor."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


assert crc16_arc(b"123456789") == 0xBB3D, "CRC-16/ARC check value"

# name -> (cmd, key, message the central sends, message the watch sends, list mode)
# None = empty payload. A command the watch starts has no central message.
COMMANDS = {
    "deviceInfo": (0x02, 0x02, None, "TSMetaPeripheralInfo", False),
    "heartRateConfigGet": (0x02, 0x0D, None, "TSMetaHeartRateConfig", False),
    "heartRateConfigSet": (0x02, 0x0E, "TSMetaHeartRateConfig", "TSCommonResponse", False),
    "stressConfigGet": (0x02, 0x0F, None, "TSMetaStressConfig", False),
    "stressConfigSet": (0x02, 0x10, "TSMetaStressConfig", "TSCommonResponse", False),
    "spo2ConfigGet": (0x02, 0x11, None, "TSMetaBloodOxygenConfig", False),
    "spo2ConfigSet": (0x02, 0x12, "TSMetaBloodOxygenConfig", "TSCommonResponse", False),
    "bloodPressureConfigGet": (0x02, 0x13, None, "TSMetaBloodPressureConfig", False),
    "bloodPressureConfigSet": (0x02, 0x14, "TSMetaBloodPressureConfig", "TSCommonResponse", False),
    "heartRateConfigChanged": (0x02, 0x1E, None, "TSMetaHeartRateConfig", False),
    "stressConfigChanged": (0x02, 0x1F, None, "TSMetaStressConfig", False),
    "spo2ConfigChanged": (0x02, 0x20, None, "TSMetaBloodOxygenConfig", False),
    "bloodPressureConfigChanged": (0x02, 0x21, None, "TSMetaBloodPressureConfig", False),
    "alarmsGet": (0x02, 0x38, None, "TSMetaAlarmList", False),
    "alarmsSet": (0x02, 0x39, "TSMetaAlarmList", "TSCommonResponse", False),
    "dataChanged": (0x02, 0x48, None, "TSMetaDataChanged", False),
    "bind": (0x03, 0x01, "TSMetaAuthParam", "TSMetaAuthRespond", False),
    "login": (0x03, 0x02, "TSMetaAuthParam", "TSMetaAuthRespond", False),
    "timeSet": (0x03, 0x05, "TSMetaTimeModel", "TSCommonResponse", False),
    "battery": (0x03, 0x09, None, "TSMetaBatteryModel", False),
    "batteryChanged": (0x03, 0x0A, None, "TSMetaBatteryModel", False),
    "heartRateData": (0x05, 0x01, None, "TSMetaHeartRateDay", True),
    "sleepData": (0x05, 0x05, None, "TSMetaSleepDay", True),
    "syncStart": (0x05, 0x21, "TSMetaSyncStartRequest", "TSMetaSyncStartResponse", False),
    "syncEnd": (0x05, 0x22, None, "TSMetaSyncStopRequest", False),
    "fileHead": (0x06, 0x21, "TSMetaFileHead", None, False),
}
BY_CMD_KEY = {(c[0], c[1]): name for name, c in COMMANDS.items()}
# Directions: "central" (central -> watch) and "watch" (watch -> central).
DIRECTIONS = ("central", "watch")

# --------------------------------------------------------------------------- message classes

_CLASSES = None


def _load_classes():
    """protoc compiles npk.proto to a FileDescriptorSet; the runtime builds classes from it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "npk.protoset")
        subprocess.run(["protoc", "--proto_path=" + PROTO_DIR, "--descriptor_set_out=" + out,
                        os.path.join(PROTO_DIR, PROTO_FILE)], check=True)
        with open(out, "rb") as f:
            files = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    classes = {}
    for file_proto in files.file:
        pool.Add(file_proto)
        for message in file_proto.message_type:
            classes[message.name] = message_factory.GetMessageClass(
                pool.FindMessageTypeByName(message.name))
    return classes


def message_class(name):
    global _CLASSES
    if _CLASSES is None:
        _CLASSES = _load_classes()
    return _CLASSES[name]


def message_name(command, direction):
    central, watch = COMMANDS[command][2], COMMANDS[command][3]
    return central if direction == "central" else watch


def encode_body(command, direction, body):
    """A proto3 JSON body (proto field names) -> payload bytes; {} for an empty payload."""
    name = message_name(command, direction)
    if name is None:
        assert body == {}, (command, body)
        return b""
    return json_format.ParseDict(body, message_class(name)()).SerializeToString()


def decode_body(command, direction, payload):
    """Payload bytes -> proto3 JSON body with every field (defaults too), proto field names."""
    name = message_name(command, direction)
    if name is None:
        if payload:
            raise NpkError("unexpectedPayload", "%s from the %s carries no payload, but %d bytes came"
                           % (command, direction, len(payload)))
        return {}
    message = message_class(name)()
    try:
        message.ParseFromString(bytes(payload))
    except DecodeError as error:
        raise NpkError("payloadDoesNotParse", "%s payload is not a %s: %s" % (command, name, error))
    return json_format.MessageToDict(message, preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True)


# --------------------------------------------------------------------------- frames

def build_frame(cmd, key, sequence, payload, flags=0):
    payload = bytes(payload)
    crc = crc16_arc(payload) if payload else 0
    return struct.pack(">BBBBHHH", MAGIC, cmd, key, flags, len(payload), crc, sequence) + payload


def frame_for(command, direction, sequence, body, flags=0):
    cmd, key = COMMANDS[command][:2]
    return build_frame(cmd, key, sequence, encode_body(command, direction, body), flags)


def decode_frame(data):
    """One whole frame -> dict(cmd, key, flags, sequence, payload). Raises NpkError."""
    data = bytes(data)
    if not data or data[0] != MAGIC:
        raise NpkError("badMagic", "a frame starts with 0xAB")
    if len(data) < HEADER_SIZE:
        raise NpkError("truncatedHeader", "a frame header is 10 bytes, got %d" % len(data))
    _, cmd, key, flags, length, crc, sequence = struct.unpack_from(">BBBBHHH", data)
    if length > MAX_LENGTH:
        raise NpkError("lengthOverBound", "payload length %d is over 0x2000" % length)
    if len(data) != HEADER_SIZE + length:
        raise NpkError("lengthMismatch", "header says %d payload bytes, %d follow"
                       % (length, len(data) - HEADER_SIZE))
    payload = data[HEADER_SIZE:]
    expected = crc16_arc(payload) if payload else 0
    if crc != expected:
        raise NpkError("crcMismatch", "CRC 0x%04X, payload gives 0x%04X" % (crc, expected))
    return {"cmd": cmd, "key": key, "flags": flags, "sequence": sequence, "payload": payload}


def command_of(frame):
    name = BY_CMD_KEY.get((frame["cmd"], frame["key"]))
    if name is None:
        raise NpkError("unknownCommand", "cmd 0x%02X key 0x%02X" % (frame["cmd"], frame["key"]))
    return name


def decode_message(data, direction):
    """A whole frame from `direction` -> (command, list header or None, body)."""
    frame = decode_frame(data)
    command = command_of(frame)
    payload = frame["payload"]
    header = None
    if frame["flags"] & FLAG_LIST:
        if not COMMANDS[command][4]:
            raise NpkError("unexpectedListFrame", "%s is not sent in list mode" % command)
        header, payload = split_list_payload(payload)
    elif COMMANDS[command][4]:
        raise NpkError("notAListFrame", "%s comes in list mode (flag bit 5)" % command)
    return command, header, decode_body(command, direction, payload)


# --------------------------------------------------------------------------- list mode

def list_payload(total, index, message_bytes):
    return struct.pack(">II", total, index) + bytes(message_bytes)


def split_list_payload(payload):
    if len(payload) < LIST_HEADER_SIZE:
        raise NpkError("truncatedListHeader", "a list payload starts with 8 bytes, got %d" % len(payload))
    total, index = struct.unpack_from(">II", payload)
    if index >= total:
        raise NpkError("listIndexOutOfRange", "index %d of a list of %d" % (index, total))
    return {"total": total, "index": index}, payload[LIST_HEADER_SIZE:]


def assemble_list(frames):
    """Frames of one list, in arrival order -> the elements' payloads. Every frame must be a list
    frame of the first one's cmd, key, sequence and total, with the next index."""
    elements = []
    first = None
    for data in frames:
        frame = decode_frame(data)
        if not frame["flags"] & FLAG_LIST:
            raise NpkError("notAListFrame", "flag bit 5 is not set")
        header, payload = split_list_payload(frame["payload"])
        if first is None:
            first = (frame["cmd"], frame["key"], frame["sequence"], header["total"])
        elif (frame["cmd"], frame["key"]) != first[:2]:
            raise NpkError("listCommandChanged", "another command inside a list")
        elif frame["sequence"] != first[2]:
            raise NpkError("listSequenceChanged", "sequence %d inside a list of sequence %d" % (frame["sequence"], first[2]))
        elif header["total"] != first[3]:
            raise NpkError("listTotalChanged", "total %d inside a list of %d" % (header["total"], first[3]))
        if header["index"] != len(elements):
            raise NpkError("listIndexOutOfOrder", "index %d where %d was next" % (header["index"], len(elements)))
        elements.append(payload)
    if first is None or len(elements) != first[3]:
        raise NpkError("listIncomplete", "%d of %s elements" % (len(elements), first[3] if first else "?"))
    return elements


# --------------------------------------------------------------------------- chunks, reassembly

def chunk(stream, size):
    return [bytes(stream[i:i + size]) for i in range(0, len(stream), size)]


class Reassembler:
    """Section 4: find 0xAB, need 10 bytes, refuse a length over 0x2000 (drop the 0xAB), wait for
    10 + length bytes, check the CRC (on a mismatch drop the 0xAB only and scan on)."""

    def __init__(self):
        self.buf = bytearray()
        self.frames = []
        self.drops = {"crcMismatch": 0, "lengthOverBound": 0, "truncated": 0}

    def feed(self, data):
        self.buf += data
        self._scan()

    def _scan(self):
        while True:
            start = self.buf.find(MAGIC)
            if start < 0:
                del self.buf[:]
                return
            del self.buf[:start]
            if len(self.buf) < HEADER_SIZE:
                return
            (length, crc) = struct.unpack_from(">HH", self.buf, 4)
            if length > MAX_LENGTH:
                self.drops["lengthOverBound"] += 1
                del self.buf[:1]
                continue
            if len(self.buf) < HEADER_SIZE + length:
                return
            payload = bytes(self.buf[HEADER_SIZE:HEADER_SIZE + length])
            if crc == (crc16_arc(payload) if payload else 0):
                self.frames.append(bytes(self.buf[:HEADER_SIZE + length]))
                del self.buf[:HEADER_SIZE + length]
            else:
                self.drops["crcMismatch"] += 1
                del self.buf[:1]

    def flush(self):
        """The link went quiet or away: every pending partial frame is abandoned (its 0xAB
        dropped, counted as truncated) and the bytes behind it scanned again."""
        while self.buf:
            self.drops["truncated"] += 1
            del self.buf[:1]
            self._scan()


def reassemble(chunks):
    r = Reassembler()
    for c in chunks:
        r.feed(c)
    r.flush()
    return r.frames, r.drops


# --------------------------------------------------------------------------- mappings

STAGES = ("awake", "light", "deep", "rem")


def unix_from_2000(seconds):
    return seconds + SECONDS_1970_TO_2000


def sleep_day_records(day):
    """A TSMetaSleepDay body -> (records, rejected): records as {stage, start (unix), duration};
    rejected items as {index, error}. A rejected item is never a record."""
    records, rejected = [], []
    for i, item in enumerate(day["items"]):
        if item["duration"] < 0:
            rejected.append({"index": i, "error": "negativeDuration"})
        elif item["duration"] == 0:
            rejected.append({"index": i, "error": "zeroDuration"})
        elif not 0 <= item["type"] < len(STAGES):
            rejected.append({"index": i, "error": "unknownSleepStage"})
        else:
            records.append({"stage": STAGES[item["type"]], "start": unix_from_2000(item["timestamp"]),
                            "duration": item["duration"]})
    return records, rejected


def heart_rate_samples(day):
    """A TSMetaHeartRateDay body -> samples {time (unix), bpm}, sorted by time: one per non-zero
    byte of auto_data (5 minutes apart from start_timestamp) and one per manual reading with a
    value in 1...255. Returns (samples, rejected manual readings)."""
    samples, rejected = [], 0
    for i, bpm in enumerate(base64.b64decode(day["auto_data"])):
        if bpm:
            samples.append({"time": unix_from_2000(day["start_timestamp"] + 300 * i), "bpm": bpm})
    for item in day["manual_data"]:
        if 1 <= item["value"] <= 255:
            samples.append({"time": unix_from_2000(item["timestamp"]), "bpm": item["value"]})
        else:
            rejected += 1
    samples.sort(key=lambda s: (s["time"], s["bpm"]))
    return samples, rejected


def alarms_from_list(alarm_list):
    """A TSMetaAlarmList body -> the gateway's alarms {slot, enabled, hour, minute, repeat, label}.
    Raises NpkError for an item the gateway cannot hold."""
    out = []
    for item in alarm_list["items"]:
        if not 0 <= item["id"] <= 255:
            raise NpkError("alarmIdOutOfRange", "alarm id %d" % item["id"])
        if not 0 <= item["hour"] <= 23:
            raise NpkError("hourOutOfRange", "hour %d" % item["hour"])
        if not 0 <= item["minute"] <= 59:
            raise NpkError("minuteOutOfRange", "minute %d" % item["minute"])
        if not 0 <= item["repeat"] <= 0x7F:
            raise NpkError("repeatOutOfRange", "repeat 0x%X" % item["repeat"])
        if len(item["label"].encode("utf-8")) > MAX_LABEL_BYTES:
            raise NpkError("labelTooLong", "label of %d bytes" % len(item["label"].encode("utf-8")))
        out.append({"slot": item["id"], "enabled": item["is_enabled"], "hour": item["hour"],
                    "minute": item["minute"], "repeat": item["repeat"], "label": item["label"]})
    return out


def battery_status(model):
    if model["level"] > 100:
        raise NpkError("batteryLevelOutOfRange", "level %d" % model["level"])
    return {"level": model["level"], "state": "charging" if model["charging"] else "discharging"}
