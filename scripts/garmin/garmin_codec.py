"""The Garmin family's framing (protocol-spec/garmin/garmin.md §2–3) in Python: the project's
second, independent implementation of the spec, written from it (not from the Swift code), with
the standard library only.

Used by scripts/garmin/garmin_vectors.py, which writes protocol-spec/garmin/vectors/*.json; the
Swift module TSGarmin is tested against those files.

  * crc16: CRC-16/ARC, bit by bit (the Swift codec uses a nibble table)
  * cobs_encode / cobs_decode, and split_stream: delimited COBS forms out of chunks
  * frame / read_frame: GFDI frames (length, type, compact types, CRC)
  * control / read_control: multi-link control messages on handle 0
"""

import struct


class GarminError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def crc16(data, seed=0):
    """CRC-16/ARC: reflected polynomial 0xA001, initial value `seed` (0), no final XOR."""
    crc = seed
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def cobs_encode(data):
    """COBS without delimiters; the end of the data implies no zero, and a block of 254 bytes
    at the very end is not followed by an empty block."""
    out = bytearray()
    block = bytearray()
    for i, byte in enumerate(data):
        if byte == 0:
            out.append(len(block) + 1)
            out += block
            block = bytearray()
            continue
        block.append(byte)
        if len(block) == 254:
            out.append(0xFF)
            out += block
            block = bytearray()
            if i == len(data) - 1:
                return bytes(out)
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_decode(data):
    out = bytearray()
    i = 0
    while i < len(data):
        code = data[i]
        if code == 0:
            raise GarminError("cobsMalformed", "zero code at %d" % i)
        end = i + code
        if end > len(data):
            raise GarminError("cobsMalformed", "code %d at %d runs past %d bytes" % (code, i, len(data)))
        block = data[i + 1:end]
        if 0 in block:
            raise GarminError("cobsMalformed", "zero inside the block at %d" % i)
        out += block
        i = end
        if code != 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


def split_stream(chunks, limit=8192):
    """The COBS forms between zero delimiters over `chunks`; ("tooLong",) for a form over `limit`."""
    found = []
    partial = None  # None: before the first delimiter
    for chunk in chunks:
        for byte in chunk:
            if byte == 0:
                if partial:
                    found.append(("form", bytes(partial)))
                partial = bytearray()
            elif partial is not None:
                partial.append(byte)
                if len(partial) > limit:
                    found.append(("tooLong",))
                    partial = None
    return found


def frame(type_, payload, sequence=None):
    """A GFDI frame: length (the whole frame), type (compact when `sequence` is given), payload, CRC."""
    field = type_ if sequence is None else 0x8000 | (sequence & 0x7F) << 8 | ((type_ - 5000) & 0xFF)
    body = struct.pack("<HH", len(payload) + 6, field) + bytes(payload)
    return body + struct.pack("<H", crc16(body))


def read_frame(data):
    """(type, sequence or None, payload) of a decoded COBS form."""
    if len(data) < 6:
        raise GarminError("frameTooShort", "%d bytes" % len(data))
    length, field = struct.unpack_from("<HH", data)
    if length != len(data):
        raise GarminError("lengthMismatch", "says %d, is %d" % (length, len(data)))
    (sent,) = struct.unpack_from("<H", data, length - 2)
    if crc16(data[:length - 2]) != sent:
        raise GarminError("crcMismatch", "crc")
    if field & 0x8000:
        return (field & 0xFF) + 5000, (field >> 8) & 0x7F, bytes(data[4:length - 2])
    return field, None, bytes(data[4:length - 2])


CONTROL = {"registerRequest": 0, "registerResponse": 1, "closeHandleRequest": 2, "closeHandleResponse": 3,
           "closeAllRequest": 5, "closeAllResponse": 6}


def control(message):
    """A multi-link control message, handle byte included, from its dict form."""
    kind, client = message["kind"], message["client"]
    head = bytes([0, CONTROL[kind]]) + struct.pack("<Q", client)
    if kind == "registerRequest":
        return head + struct.pack("<HB", message["service"], message["reliable"])
    if kind == "registerResponse":
        return head + struct.pack("<HBBB", message["service"], message["status"], message["handle"], message["reliable"])
    if kind == "closeHandleRequest":
        return head + struct.pack("<HB", message["service"], message["handle"])
    if kind == "closeHandleResponse":
        return head + struct.pack("<HBB", message["service"], message["handle"], message["status"])
    return head + b"\x00\x00"


def read_control(data):
    """The dict form of a control message; CLOSE_ALL_REQ in either layout (client at 2, or at 4
    after two zero bytes: garmin-ble's)."""
    if len(data) < 2:
        raise GarminError("controlTooShort", "%d bytes" % len(data))
    if data[0] != 0:
        raise GarminError("unknownControl", "handle %d" % data[0])
    kinds = {v: k for k, v in CONTROL.items()}
    if data[1] not in kinds:
        raise GarminError("unknownControl", "type %d" % data[1])
    kind = kinds[data[1]]
    need = {"registerRequest": 13, "registerResponse": 14, "closeHandleRequest": 13, "closeHandleResponse": 14,
            "closeAllRequest": 10, "closeAllResponse": 2}[kind]
    if len(data) < need:
        raise GarminError("controlTooShort", "%s of %d bytes" % (kind, len(data)))
    if kind == "closeAllRequest":
        shifted = len(data) >= 12 and data[2] == 0 and data[3] == 0
        return {"kind": kind, "client": struct.unpack_from("<Q", data, 4 if shifted else 2)[0]}
    if kind == "closeAllResponse":
        # garmin-ble's simulated watch answers 00 06 alone: no client, read as 0.
        return {"kind": kind, "client": struct.unpack_from("<Q", data, 2)[0] if len(data) >= 10 else 0}
    client = struct.unpack_from("<Q", data, 2)[0]
    (service,) = struct.unpack_from("<H", data, 10)
    if kind == "registerRequest":
        return {"kind": kind, "client": client, "service": service, "reliable": data[12]}
    if kind == "registerResponse":
        return {"kind": kind, "client": client, "service": service, "status": data[12], "handle": data[13],
                "reliable": data[14] if len(data) > 14 else 0}
    if kind == "closeHandleRequest":
        return {"kind": kind, "client": client, "service": service, "handle": data[12]}
    return {"kind": kind, "client": client, "service": service, "handle": data[12], "status": data[13]}


# --- GFDI payloads (§3.2–§8), each kind both ways: fields (a dict) ↔ payload bytes.

def _string(text):
    raw = text.encode("utf-8")
    if len(raw) > 255:
        raise GarminError("stringTooLong", "%d bytes" % len(raw))
    return bytes([len(raw)]) + raw


class _Reader:
    def __init__(self, data, message):
        self.data, self.at, self.message = bytes(data), 0, message

    def take(self, count, field):
        if self.at + count > len(self.data):
            raise GarminError("payloadTooShort", "%s: ends before %s" % (self.message, field))
        chunk = self.data[self.at:self.at + count]
        self.at += count
        return chunk

    def u8(self, field):
        return self.take(1, field)[0]

    def u16(self, field):
        return struct.unpack("<H", self.take(2, field))[0]

    def u32(self, field):
        return struct.unpack("<I", self.take(4, field))[0]

    def string(self, field):
        raw = self.take(self.u8(field), field)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise GarminError("invalidUTF8", field)

    def rest(self):
        chunk = self.data[self.at:]
        self.at = len(self.data)
        return chunk


def payload(kind, f):
    """The payload of a message of `kind` with fields `f`."""
    if kind == "response":
        return struct.pack("<HB", f["originalType"], f["status"]) + bytes.fromhex(f["extra"])
    if kind == "deviceInformation":
        return (struct.pack("<HHIHH", f["protocolVersion"], f["product"], f["unit"], f["software"], f["maxPacket"])
                + _string(f["bluetoothName"]) + _string(f["deviceName"]) + _string(f["model"]) + bytes.fromhex(f["trailing"]))
    if kind == "authNegotiation":
        return struct.pack("<BI", f["unknown"], f["flags"])
    if kind == "configuration":
        bitmap = bytearray((max(f["capabilities"]) // 8 + 1) if f["capabilities"] else 0)
        for bit in f["capabilities"]:
            bitmap[bit // 8] |= 1 << (bit % 8)
        return bytes([len(bitmap)]) + bytes(bitmap)
    if kind == "currentTimeRequest":
        return struct.pack("<I", f["reference"])
    if kind == "currentTimeAnswer":
        return struct.pack("<HBIIiII", 5052, 0, f["reference"], f["now"], f["utcOffset"], f["nextDSTEnd"], f["nextDSTStart"])
    if kind == "systemEvent":
        return bytes([f["event"]]) + bytes.fromhex(f["value"])
    if kind == "downloadRequest":
        return struct.pack("<HIBHI", f["index"], f["offset"], f["kind"], f["crcSeed"], f["size"])
    if kind == "downloadAnswer":
        return struct.pack("<HBBI", 5002, 0, f["downloadStatus"], f["fileSize"])
    if kind == "fileData":
        return struct.pack("<BHI", f["flags"], f["crc"], f["offset"]) + bytes.fromhex(f["data"])
    if kind == "fileDataAnswer":
        return struct.pack("<HBBI", 5004, 0, f["status"], f["nextOffset"])
    if kind == "directory":
        return b"".join(struct.pack("<HBBHBBII", e["index"], e["type"], e["subtype"], e["number"], e["specificFlags"],
                                    e["flags"], e["size"], e["time"]) for e in f["entries"]) + bytes(16 * f.get("zeroEntries", 0))
    if kind == "setFileFlag":
        return struct.pack("<HB", f["index"], f["flags"])
    if kind == "createFile":
        return struct.pack("<IBBHHHHQ", f["size"], f["type"], f["subtype"], f["index"], 0, f["numberMask"], 0, f["nonce"])
    if kind == "createFileAnswer":
        return struct.pack("<HBBHBBH", 5005, 0, f["createStatus"], f["index"], f["type"], f["subtype"], f["number"])
    if kind == "uploadRequest":
        return struct.pack("<HIIH", f["index"], f["size"], f["offset"], f["crcSeed"])
    if kind == "uploadAnswer":
        return struct.pack("<HBBIIH", 5003, 0, f["uploadStatus"], f["offset"], f["maxSize"], f["crcSeed"])
    if kind == "protobufMessage":
        body = bytes.fromhex(f["protobuf"])
        return struct.pack("<HIII", f["requestId"], f["offset"], f["total"], len(body)) + body
    if kind == "protobufAcknowledgement":
        return struct.pack("<HBHIBB", f["originalType"], 0, f["requestId"], f["offset"], f["chunkStatus"], f["code"])
    raise ValueError(kind)


# The protobuf wire format (protobuf.dev/programming-guides/encoding), as much of it as the
# battery's messages (protocol-spec/garmin/garmin_smart.proto) need: varints and
# length-delimited fields, written from the encoding guide.
def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def pb_varint(field, value):
    return varint(field << 3 | 0) + varint(value)


def pb_message(field, body):
    return varint(field << 3 | 2) + varint(len(body)) + body


def battery_request():
    """Smart {device_status (8) {battery_request (2) {}}}."""
    return pb_message(8, pb_message(2, b""))


def battery_status(level, status=1):
    """Smart {device_status (8) {battery_status (3) {status (1), level (2)}}}."""
    return pb_message(8, pb_message(3, pb_varint(1, status) + pb_varint(2, level)))


def read_payload(kind, data):
    """The fields of a payload of `kind`."""
    r = _Reader(data, kind)
    if kind == "response":
        return {"originalType": r.u16("type"), "status": r.u8("status"), "extra": r.rest().hex()}
    if kind == "deviceInformation":
        f = {"protocolVersion": r.u16("protocol"), "product": r.u16("product"), "unit": r.u32("unit"),
             "software": r.u16("software"), "maxPacket": r.u16("max packet")}
        f.update({"bluetoothName": r.string("bluetooth name"), "deviceName": r.string("device name"),
                  "model": r.string("model"), "trailing": r.rest().hex()})
        return f
    if kind == "authNegotiation":
        return {"unknown": r.u8("unknown"), "flags": r.u32("flags")}
    if kind == "configuration":
        bitmap = r.take(r.u8("length"), "bitmap")
        return {"capabilities": [i for i in range(len(bitmap) * 8) if bitmap[i // 8] >> (i % 8) & 1]}
    if kind == "currentTimeRequest":
        return {"reference": r.u32("reference")}
    if kind == "currentTimeAnswer":
        r.u16("type"), r.u8("status")
        return {"reference": r.u32("reference"), "now": r.u32("now"), "utcOffset": struct.unpack("<i", r.take(4, "offset"))[0],
                "nextDSTEnd": r.u32("dst end"), "nextDSTStart": r.u32("dst start")}
    if kind == "systemEvent":
        return {"event": r.u8("event"), "value": r.rest().hex()}
    if kind == "downloadRequest":
        return {"index": r.u16("index"), "offset": r.u32("offset"), "kind": r.u8("kind"), "crcSeed": r.u16("seed"), "size": r.u32("size")}
    if kind == "downloadAnswer":
        r.u16("type"), r.u8("status")
        return {"downloadStatus": r.u8("download status"), "fileSize": r.u32("size")}
    if kind == "fileData":
        return {"flags": r.u8("flags"), "crc": r.u16("crc"), "offset": r.u32("offset"), "data": r.rest().hex()}
    if kind == "fileDataAnswer":
        r.u16("type"), r.u8("status")
        return {"status": r.u8("transfer status"), "nextOffset": r.u32("next offset")}
    if kind == "directory":
        if len(data) % 16:
            raise GarminError("payloadTooShort", "directory of %d bytes" % len(data))
        entries = []
        for start in range(0, len(data), 16):
            chunk = data[start:start + 16]
            if any(chunk):
                i, t, s, n, sf, fl, size, time = struct.unpack("<HBBHBBII", chunk)
                entries.append({"index": i, "type": t, "subtype": s, "number": n, "specificFlags": sf, "flags": fl,
                                "size": size, "time": time})
        return {"entries": entries}
    if kind == "setFileFlag":
        return {"index": r.u16("index"), "flags": r.u8("flags")}
    if kind == "createFile":
        f = {"size": r.u32("size"), "type": r.u8("type"), "subtype": r.u8("subtype"), "index": r.u16("index")}
        r.u16("reserved")
        f["numberMask"] = r.u16("number mask")
        r.u16("reserved")
        f["nonce"] = struct.unpack("<Q", r.take(8, "nonce"))[0]
        return f
    if kind == "createFileAnswer":
        r.u16("type"), r.u8("status")
        return {"createStatus": r.u8("create status"), "index": r.u16("index"), "type": r.u8("type"), "subtype": r.u8("subtype"),
                "number": r.u16("number")}
    if kind == "uploadRequest":
        return {"index": r.u16("index"), "size": r.u32("size"), "offset": r.u32("offset"), "crcSeed": r.u16("crc seed")}
    if kind == "uploadAnswer":
        r.u16("type"), r.u8("status")
        return {"uploadStatus": r.u8("upload status"), "offset": r.u32("offset"), "maxSize": r.u32("max size"), "crcSeed": r.u16("crc seed")}
    if kind == "protobufMessage":
        f = {"requestId": r.u16("request id"), "offset": r.u32("offset"), "total": r.u32("total")}
        f["protobuf"] = r.take(r.u32("length"), "protobuf bytes").hex()
        return f
    if kind == "protobufAcknowledgement":
        f = {"originalType": r.u16("type")}
        r.u8("status")
        f.update({"requestId": r.u16("request id"), "offset": r.u32("offset"), "chunkStatus": r.u8("chunk status"), "code": r.u8("code")})
        return f
    raise ValueError(kind)
