#!/usr/bin/env python3
"""Generate the Garmin family's test vectors (protocol-spec/garmin/vectors/*.json).

The codec is scripts/garmin/garmin_codec.py, an independent implementation of
protocol-spec/garmin/garmin.md. The Swift module TSGarmin is tested against the files this script
writes (Tests/Families/Garmin/CodecTests/GarminVectorTests.swift). scripts/test runs it with
--check, so a stale file fails the test command.

    python3 scripts/garmin/garmin_vectors.py          # (re)write the files
    python3 scripts/garmin/garmin_vectors.py --check  # exit 1 if the files on disk differ

Every vector is produced by running garmin_codec on its input; the asserts pin the facts the spec
states by hand (the CRC check value, the Instinct 2S frame of Gadgetbridge's test and its COBS
form's ends).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))  # scripts/lib: vector_files
import vector_files  # noqa: E402  (writing and --check of the vector files)
import garmin_codec as g  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTOR_DIR = os.path.join(ROOT, "protocol-spec", "garmin", "vectors")


def string(text):
    raw = text.encode("utf-8")
    return bytes([len(raw)]) + raw


# The Instinct 2S's DEVICE_INFORMATION (§3): protocol 150, product 3889, unit, software 1412,
# max packet 520, three names, two trailing bytes.
INSTINCT_PAYLOAD = (bytes.fromhex("9600310f684c1bca84050802") + string("Instinct 2S") + string("Instinct")
                    + string("2S") + b"\x00\x00")


def cobs_vectors():
    cases = [
        ("empty", b""),
        ("one zero", b"\x00"),
        ("two zeros", b"\x00\x00"),
        ("no zero", b"\x11\x22\x33"),
        ("zero inside", b"\x11\x00\x22"),
        ("zero at the end", b"\x11\x22\x00"),
        ("253 non-zero bytes", bytes((i % 255) + 1 for i in range(253))),
        ("254 non-zero bytes: one full block, nothing after", bytes((i % 255) + 1 for i in range(254))),
        ("255 non-zero bytes: a full block and one more", bytes((i % 255) + 1 for i in range(255))),
        ("254 non-zero bytes then a zero", bytes((i % 255) + 1 for i in range(254)) + b"\x00"),
        ("600 bytes with zeros every 100", bytes(0 if i % 100 == 99 else (i % 250) + 1 for i in range(600))),
        ("the Instinct 2S frame", g.frame(5024, INSTINCT_PAYLOAD)),
    ]
    out = []
    for name, data in cases:
        encoded = g.cobs_encode(data)
        assert g.cobs_decode(encoded) == data, name
        assert 0 not in encoded, name
        out.append({"name": name, "decoded": data.hex(), "encoded": encoded.hex()})
    instinct = out[-1]["encoded"]
    assert instinct.startswith("022c04a0139623") and instinct.endswith("325301030 4b8".replace(" ", "")), instinct
    # A block of 254 followed by an empty one reads alike (another encoder's choice).
    full = bytes((i % 255) + 1 for i in range(254))
    assert g.cobs_decode(b"\xff" + full + b"\x01") == full
    out.append({"name": "254 non-zero bytes, ended by an empty block as another encoder may", "decoded": full.hex(),
                "encoded": (b"\xff" + full + b"\x01").hex(), "decodeOnly": True})
    return out


def gfdi_vectors():
    assert g.crc16(b"123456789") == 0xBB3D
    instinct = g.frame(5024, INSTINCT_PAYLOAD)
    assert len(instinct) == 44 and instinct[-2:] == bytes.fromhex("04b8")
    cases = [
        ("DEVICE_INFORMATION of an Instinct 2S (Gadgetbridge's test)", 5024, None, INSTINCT_PAYLOAD),
        ("RESPONSE ACK for DEVICE_INFORMATION, no extra", 5000, None, bytes.fromhex("a01300")),
        ("CURRENT_TIME_REQUEST", 5052, None, bytes.fromhex("01020304")),
        ("SYSTEM_EVENT TIME_UPDATED", 5030, None, bytes([16, 0])),
        ("an empty payload", 5031, None, b""),
        ("compact type: RESPONSE, sequence 5", 5000, 5, bytes.fromhex("a01300")),
        ("compact type: CURRENT_TIME_REQUEST, sequence 127", 5052, 127, bytes.fromhex("0a000000")),
        ("a payload holding zeros and 300 bytes", 5004, None, bytes((i * 7) % 256 for i in range(300))),
    ]
    out = []
    for name, type_, sequence, payload in cases:
        data = g.frame(type_, payload, sequence)
        assert g.read_frame(data) == (type_, sequence, payload), name
        vector = {"name": name, "type": type_, "payload": payload.hex(), "frame": data.hex(),
                  "delimited": (b"\x00" + g.cobs_encode(data) + b"\x00").hex()}
        if sequence is not None:
            vector["sequence"] = sequence
        out.append(vector)
    return out


def control_vectors():
    messages = [
        ("CLOSE_ALL_REQ, client 2", {"kind": "closeAllRequest", "client": 2}),
        ("CLOSE_ALL_RESP, client 2", {"kind": "closeAllResponse", "client": 2}),
        ("REGISTER_ML_REQ for GFDI, not reliable", {"kind": "registerRequest", "client": 2, "service": 1, "reliable": 0}),
        ("REGISTER_ML_RESP for GFDI: ok, handle 1", {"kind": "registerResponse", "client": 2, "service": 1, "status": 0,
                                                     "handle": 1, "reliable": 0}),
        ("REGISTER_ML_REQ for real-time heart rate", {"kind": "registerRequest", "client": 2, "service": 6, "reliable": 0}),
        ("CLOSE_HANDLE_REQ", {"kind": "closeHandleRequest", "client": 2, "service": 6, "handle": 2}),
        ("CLOSE_HANDLE_RESP", {"kind": "closeHandleResponse", "client": 2, "service": 6, "handle": 2, "status": 0}),
        ("REGISTER_ML_RESP for a file-transfer service", {"kind": "registerResponse", "client": 2, "service": 0x2018,
                                                          "status": 0, "handle": 5, "reliable": 0}),
    ]
    out = []
    for name, message in messages:
        data = g.control(message)
        assert g.read_control(data) == message, name
        out.append({"name": name, "message": message, "bytes": data.hex()})
    # Read only: the layouts other clients send.
    read_only = [
        ("CLOSE_ALL_REQ as Gadgetbridge sends it (a trailing zero more)", bytes.fromhex("0005") + (2).to_bytes(8, "little") + b"\x00\x00\x00"),
        ("CLOSE_ALL_REQ as garmin-bridge sends it (12 bytes)", bytes.fromhex("0005") + (2).to_bytes(8, "little") + b"\x00\x00"),
        ("CLOSE_ALL_REQ as garmin-ble 0.3.2 sends it (client after two zeros)", bytes.fromhex("00050000") + (2).to_bytes(8, "little") + b"\x00"),
        ("REGISTER_ML_RESP without its reliable byte (14 bytes)", bytes.fromhex("0001") + (2).to_bytes(8, "little") + bytes.fromhex("01000001")),
        ("CLOSE_ALL_RESP as garmin-ble 0.3.2's simulated watch sends it (no client)", bytes.fromhex("0006")),
        ("REGISTER_ML_RESP as garmin-ble 0.3.2's simulated watch sends it (client 0)", bytes.fromhex("0001") + bytes(8) + bytes.fromhex("01000001")),
    ]
    for name, data in read_only:
        out.append({"name": name, "message": g.read_control(data), "bytes": data.hex(), "readOnly": True})
    return out


def invalid_vectors():
    good = g.frame(5052, bytes.fromhex("01020304"))
    bad_crc = good[:-1] + bytes([good[-1] ^ 0x01])
    long_length = bytes([good[0] + 1]) + good[1:]
    cases = [
        ("a frame of 5 bytes", "frame", bytes.fromhex("0500a013ff"), "frameTooShort"),
        ("a frame whose length says one byte more", "frame", long_length, "lengthMismatch"),
        ("a frame whose CRC is off by one bit", "frame", bad_crc, "crcMismatch"),
        ("a COBS code that runs past the form", "cobs", bytes.fromhex("051122"), "cobsMalformed"),
        ("a zero inside a COBS form", "cobs", bytes.fromhex("03110022"), "cobsMalformed"),
        ("a control message of one byte", "control", bytes.fromhex("00"), "controlTooShort"),
        ("a REGISTER_ML_RESP of 13 bytes", "control", bytes.fromhex("0001") + (2).to_bytes(8, "little") + bytes.fromhex("0100 00".replace(" ", "")), "controlTooShort"),
        ("control type 4", "control", bytes.fromhex("0004") + (2).to_bytes(8, "little") + b"\x00\x00", "unknownControl"),
        ("a control message on handle 1", "control", bytes.fromhex("0105") + (2).to_bytes(8, "little") + b"\x00\x00", "unknownControl"),
    ]
    readers = {"frame": g.read_frame, "cobs": g.cobs_decode, "control": g.read_control}
    out = []
    for name, kind, data, code in cases:
        try:
            readers[kind](data)
        except g.GarminError as error:
            assert error.code == code, (name, error.code)
        else:
            raise AssertionError("%s was read" % name)
        out.append({"name": name, "kind": kind, "bytes": data.hex(), "error": code})
    return out


def stream_vectors():
    """Frames cut into writes anywhere, with noise before the first delimiter and two frames in one write."""
    a = b"\x00" + g.cobs_encode(g.frame(5030, bytes([16, 0]))) + b"\x00"
    b = b"\x00" + g.cobs_encode(g.frame(5052, bytes.fromhex("01020304"))) + b"\x00"
    cases = [
        ("one frame, one write", [a]),
        ("one frame cut into writes of 3", [a[i:i + 3] for i in range(0, len(a), 3)]),
        ("two frames in one write", [a + b]),
        ("bytes before the first delimiter are not a frame", [bytes.fromhex("1122") + a]),
        ("two frames sharing no delimiter: end of one, start of the next", [a[:-1] + b]),
    ]
    out = []
    for name, chunks in cases:
        found = g.split_stream(chunks)
        frames = [g.read_frame(g.cobs_decode(form[1])) for form in found]
        out.append({"name": name, "chunks": [c.hex() for c in chunks],
                    "frames": [{"type": t, "payload": p.hex()} for t, _, p in frames]})
    return out


def message_vectors():
    """Every GFDI payload kind both ways; the running CRC of file chunks computed here."""
    chunk_one = bytes(range(1, 101))
    chunk_two = bytes(range(101, 161))
    crc_one = g.crc16(chunk_one)
    crc_two = g.crc16(chunk_two, crc_one)
    assert crc_two == g.crc16(chunk_one + chunk_two)
    cases = [
        ("DEVICE_INFORMATION of an Instinct 2S", "deviceInformation",
         {"protocolVersion": 150, "product": 3889, "unit": 0xCA1B4C68, "software": 1412, "maxPacket": 520,
          "bluetoothName": "Instinct 2S", "deviceName": "Instinct", "model": "2S", "trailing": "0000"}),
        ("the host's DEVICE_INFORMATION (Gadgetbridge's values), no trailing bytes", "deviceInformation",
         {"protocolVersion": 150, "product": 0xFFFF, "unit": 0xFFFFFFFF, "software": 7791, "maxPacket": 0xFFFF,
          "bluetoothName": "tsgateway", "deviceName": "tsgateway", "model": "Linux", "trailing": ""}),
        ("a name in UTF-8", "deviceInformation",
         {"protocolVersion": 150, "product": 4315, "unit": 1, "software": 905, "maxPacket": 375,
          "bluetoothName": "vívoactive 5", "deviceName": "vívoactive 5", "model": "5", "trailing": ""}),
        ("RESPONSE ACK for DEVICE_INFORMATION", "response", {"originalType": 5024, "status": 0, "extra": ""}),
        ("RESPONSE unsupported for an unknown type", "response", {"originalType": 5999, "status": 2, "extra": ""}),
        ("AUTH_NEGOTIATION", "authNegotiation", {"unknown": 1, "flags": 0x0000_0003}),
        ("CONFIGURATION with multi-link service and explicit archive", "configuration", {"capabilities": [1, 29, 76]}),
        ("CONFIGURATION with real-time settings", "configuration", {"capabilities": [92]}),
        ("CURRENT_TIME_REQUEST", "currentTimeRequest", {"reference": 7}),
        ("its answer: Berlin in winter, no next change given", "currentTimeAnswer",
         {"reference": 7, "now": 1795211200 - 631065600, "utcOffset": 3600, "nextDSTEnd": 0, "nextDSTStart": 0}),
        ("its answer: a zone west of UTC", "currentTimeAnswer",
         {"reference": 9, "now": 1164146000, "utcOffset": -18000, "nextDSTEnd": 0, "nextDSTStart": 0}),
        ("SYSTEM_EVENT TIME_UPDATED", "systemEvent", {"event": 16, "value": "00"}),
        ("SYSTEM_EVENT SYNC_READY", "systemEvent", {"event": 8, "value": "00"}),
        ("DOWNLOAD_REQUEST of the directory", "downloadRequest", {"index": 0, "offset": 0, "kind": 1, "crcSeed": 0, "size": 0}),
        ("DOWNLOAD_REQUEST going on from an offset", "downloadRequest", {"index": 7, "offset": 4096, "kind": 0, "crcSeed": 0x1234, "size": 0}),
        ("the watch's answer to a download", "downloadAnswer", {"downloadStatus": 0, "fileSize": 160}),
        ("FILE_TRANSFER_DATA, the first chunk", "fileData", {"flags": 0, "crc": crc_one, "offset": 0, "data": chunk_one.hex()}),
        ("FILE_TRANSFER_DATA, the next chunk: the CRC runs on", "fileData", {"flags": 0, "crc": crc_two, "offset": 100, "data": chunk_two.hex()}),
        ("the host's answer to the first chunk: the next offset, not its own", "fileDataAnswer", {"status": 0, "nextOffset": 100}),
        ("a directory of a sleep and a monitoring file, and an empty entry", "directory",
         {"entries": [{"index": 5, "type": 128, "subtype": 49, "number": 1, "specificFlags": 0, "flags": 0, "size": 1200, "time": 1164146000},
                      {"index": 6, "type": 128, "subtype": 32, "number": 2, "specificFlags": 0, "flags": 0x10, "size": 9000, "time": 0}],
          "zeroEntries": 1}),
        ("SET_FILE_FLAG archive", "setFileFlag", {"index": 5, "flags": 0x10}),
        ("CREATE_FILE for a settings file of 180 bytes, the index left to the watch", "createFile",
         {"size": 180, "type": 128, "subtype": 2, "index": 0, "numberMask": 0xFFFF, "nonce": 0x0123_4567_89AB_CDEF}),
        ("the watch's answer to CREATE_FILE: created at index 31", "createFileAnswer",
         {"createStatus": 0, "index": 31, "type": 128, "subtype": 2, "number": 1}),
        ("UPLOAD_REQUEST of that file from its start", "uploadRequest", {"index": 31, "size": 180, "offset": 0, "crcSeed": 0}),
        ("the watch's answer to UPLOAD_REQUEST: from 0, chunks of at most 500 bytes", "uploadAnswer",
         {"uploadStatus": 0, "offset": 0, "maxSize": 500, "crcSeed": 0}),
        ("PROTOBUF_REQUEST: the battery request", "protobufMessage",
         {"requestId": 1, "offset": 0, "total": len(g.battery_request()), "protobuf": g.battery_request().hex()}),
        ("PROTOBUF_RESPONSE: the battery, 83 %, status ok", "protobufMessage",
         {"requestId": 1, "offset": 0, "total": len(g.battery_status(83)), "protobuf": g.battery_status(83).hex()}),
        ("PROTOBUF_RESPONSE: the battery, 100 %, request id 513", "protobufMessage",
         {"requestId": 513, "offset": 0, "total": len(g.battery_status(100)), "protobuf": g.battery_status(100).hex()}),
        ("RESPONSE acknowledging PROTOBUF_REQUEST 1: kept, no error", "protobufAcknowledgement",
         {"originalType": 5043, "requestId": 1, "offset": 0, "chunkStatus": 0, "code": 0}),
    ]
    out = []
    for name, kind, fields in cases:
        data = g.payload(kind, fields)
        read = g.read_payload(kind, data)
        fields = {k: v for k, v in fields.items() if k != "zeroEntries"}
        assert read == fields, (name, read, fields)
        out.append({"name": name, "kind": kind, "fields": fields, "payload": data.hex()})
    return out


def generate():
    render = vector_files.render
    return {
        "cobs.json": render(cobs_vectors()),
        "gfdi.json": render(gfdi_vectors()),
        "multilink.json": render(control_vectors()),
        "invalid.json": render(invalid_vectors()),
        "stream.json": render(stream_vectors()),
        "messages.json": render(message_vectors()),
    }


def main(argv=None):
    return vector_files.run(__doc__.splitlines()[0], VECTOR_DIR, generate, "garmin vectors",
                            "scripts/garmin/garmin_vectors.py", argv)


if __name__ == "__main__":
    sys.exit(main())
