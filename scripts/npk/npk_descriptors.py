#!/usr/bin/env python3
"""Compare the project's NPK payloads (protocol-spec/npk/npk.proto) with the descriptors
compiled into TopStep's SDK (protocol-spec/npk/sdk-descriptors.tsv).

For every message of npk.proto: the SDK has a message of that name, and the two have the same
fields: same numbers, same protobuf types (int32 is not sint32 is not uint32: the wire differs
for negative values), same repeated/packed label, and the same name once the project's
snake_case name is spelled as the SDK's Objective-C code spells it (camelCase, "Array" after a
repeated field, "_p" after a reserved word). Exit 1 on any difference.

Before comparing, it checks that it can fail: the descriptors with TSMetaTimeModel.zone_offset
made int32 (the classic mistake) must not pass.

Run through scripts/npk/python (Google's protobuf runtime reads protoc's descriptor set).
"""

import copy
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO_DIR = os.path.join(ROOT, "protocol-spec", "npk")
SDK_TABLE = os.path.join(PROTO_DIR, "sdk-descriptors.tsv")
F = descriptor_pb2.FieldDescriptorProto
TYPE_NAMES = {F.TYPE_INT32: "int32", F.TYPE_SINT32: "sint32", F.TYPE_UINT32: "uint32", F.TYPE_INT64: "int64",
              F.TYPE_SINT64: "sint64", F.TYPE_UINT64: "uint64", F.TYPE_FIXED32: "fixed32", F.TYPE_FIXED64: "fixed64",
              F.TYPE_SFIXED32: "sfixed32", F.TYPE_SFIXED64: "sfixed64", F.TYPE_BOOL: "bool", F.TYPE_FLOAT: "float",
              F.TYPE_DOUBLE: "double", F.TYPE_STRING: "string", F.TYPE_BYTES: "bytes", F.TYPE_MESSAGE: "message",
              F.TYPE_ENUM: "enum"}
OBJC_RESERVED = {"id", "data", "description", "hash", "class", "self"}


def sdk_table():
    table = {}
    with open(SDK_TABLE, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip() and not line.startswith("#")]
    assert rows[0] == ["message", "number", "objc_name", "type", "label"], rows[0]
    for message, number, name, type_, label in rows[1:]:
        table.setdefault(message, {})[int(number)] = (name, type_, label)
    return table


def project_messages():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "npk.protoset")
        subprocess.run(["protoc", "--proto_path=" + PROTO_DIR, "--descriptor_set_out=" + out,
                        os.path.join(PROTO_DIR, "npk.proto")], check=True)
        with open(out, "rb") as f:
            files = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    (file_proto,) = files.file
    assert file_proto.syntax == "proto3" and not file_proto.package, "npk.proto: proto3 without a package, as the SDK's"
    return list(file_proto.message_type)


def objc_name(field):
    parts = field.name.split("_")
    name = parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    if name in OBJC_RESERVED:
        name += "_p"
    if field.label == F.LABEL_REPEATED:
        name += "Array"
    return name


def label(field):
    if field.label != F.LABEL_REPEATED:
        return "singular"
    scalar = field.type not in (F.TYPE_MESSAGE, F.TYPE_STRING, F.TYPE_BYTES)
    packed = scalar and not (field.options.HasField("packed") and not field.options.packed)
    return "repeated packed" if packed else "repeated"


def differences(messages, sdk):
    found = []
    for message in messages:
        theirs = sdk.get(message.name)
        if theirs is None:
            found.append("%s: no such message in the SDK" % message.name)
            continue
        ours = {field.number: field for field in message.field}
        for number in sorted(set(ours) | set(theirs)):
            where = "%s field %d" % (message.name, number)
            if number not in theirs:
                found.append("%s (%s): the SDK has no such field" % (where, ours[number].name))
                continue
            if number not in ours:
                found.append("%s (%s %s): missing from npk.proto" % (where, theirs[number][1], theirs[number][0]))
                continue
            field, (their_name, their_type, their_label) = ours[number], theirs[number]
            our_type = TYPE_NAMES[field.type]
            if our_type != their_type:
                found.append("%s (%s): type %s, the SDK's is %s" % (where, field.name, our_type, their_type))
            if label(field) != their_label:
                found.append("%s (%s): %s, the SDK's is %s" % (where, field.name, label(field), their_label))
            if objc_name(field) != their_name:
                found.append("%s: %s is %s in Objective-C, the SDK's field is %s" % (where, field.name, objc_name(field), their_name))
    return found


def main():
    sdk = sdk_table()
    messages = project_messages()
    mutated = copy.deepcopy(messages)
    for message in mutated:
        for field in message.field:
            if (message.name, field.name) == ("TSMetaTimeModel", "zone_offset"):
                field.type = F.TYPE_INT32
    if not any("zone_offset" in d and "sint32" in d for d in differences(mutated, sdk)):
        print("npk-descriptors: the comparison did not notice zone_offset made int32; it cannot be trusted", file=sys.stderr)
        return 2
    found = differences(messages, sdk)
    fields = sum(len(m.field) for m in messages)
    if found:
        print("npk-descriptors: npk.proto differs from the SDK's compiled descriptors:", file=sys.stderr)
        for line in found:
            print("  " + line, file=sys.stderr)
        return 1
    print("npk-descriptors: %d messages, %d fields of npk.proto match the SDK's descriptors (numbers, types, labels, names)"
          % (len(messages), fields))
    return 0


if __name__ == "__main__":
    sys.exit(main())
