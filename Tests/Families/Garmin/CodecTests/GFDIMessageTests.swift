import Foundation
import Testing
import TSGarmin

/// Every GFDI payload kind of protocol-spec/garmin/vectors/messages.json, written from its fields
/// and read back to them.
@Suite struct GFDIMessageTests {
    static let messages = GarminVectors.load("messages.json")

    static func number<T: FixedWidthInteger>(_ fields: [String: Any], _ key: String) -> T {
        T(truncatingIfNeeded: (fields[key] as? NSNumber)?.int64Value ?? -1)
    }

    static func text(_ fields: [String: Any], _ key: String) -> String { fields[key] as? String ?? "" }

    /// The payload the codec writes for the vector's fields, and the fields it reads back, as the
    /// vector spells them.
    static func roundTrip(_ kind: String, _ f: [String: Any], payload: [UInt8]) throws -> (written: [UInt8], read: [String: AnyHashable]) {
        switch kind {
        case "response":
            let response = GFDIResponse(originalType: number(f, "originalType"), status: try #require(GFDIResponse.Status(rawValue: number(f, "status"))),
                                        extra: hexBytes(text(f, "extra")))
            let read = try GFDIResponse(payload: payload)
            return (response.payload, ["originalType": Int(read.originalType), "status": Int(read.statusByte), "extra": hexString(read.extra)])
        case "deviceInformation":
            let info = GarminDeviceInformation(protocolVersion: number(f, "protocolVersion"), product: number(f, "product"), unit: number(f, "unit"),
                                               software: number(f, "software"), maxPacket: number(f, "maxPacket"), bluetoothName: text(f, "bluetoothName"),
                                               deviceName: text(f, "deviceName"), model: text(f, "model"), trailing: hexBytes(text(f, "trailing")))
            let read = try GarminDeviceInformation(payload: payload)
            return (try info.payload(), ["protocolVersion": Int(read.protocolVersion), "product": Int(read.product), "unit": Int(read.unit),
                                         "software": Int(read.software), "maxPacket": Int(read.maxPacket), "bluetoothName": read.bluetoothName,
                                         "deviceName": read.deviceName, "model": read.model, "trailing": hexString(read.trailing)])
        case "authNegotiation":
            let read = try GarminAuthNegotiation(payload: payload)
            return (GarminAuthNegotiation(unknown: number(f, "unknown"), flags: number(f, "flags")).payload,
                    ["unknown": Int(read.unknown), "flags": Int(read.flags)])
        case "configuration":
            let capabilities = (f["capabilities"] as? [NSNumber] ?? []).map(\.intValue)
            let read = try GarminConfiguration(payload: payload)
            return (GarminConfiguration(capabilities: capabilities).payload, ["capabilities": (0..<(read.bitmap.count * 8)).filter(read.has)])
        case "currentTimeRequest":
            let read = try GarminCurrentTimeRequest(payload: payload)
            return (GarminCurrentTimeRequest(reference: number(f, "reference")).payload, ["reference": Int(read.reference)])
        case "currentTimeAnswer":
            let answer = GarminCurrentTimeRequest(reference: number(f, "reference")).answer(now: number(f, "now"), utcOffset: number(f, "utcOffset"),
                                                                                            nextDSTEnd: number(f, "nextDSTEnd"), nextDSTStart: number(f, "nextDSTStart"))
            let read = try GarminCurrentTimeRequest.answered(GFDIResponse(payload: payload))
            let extra = try GFDIResponse(payload: payload).extra
            return (answer.payload, ["reference": Int(read.reference), "now": Int(read.now), "utcOffset": Int(read.utcOffset),
                                     "nextDSTEnd": Int(UInt32(extra[12]) | UInt32(extra[13]) << 8 | UInt32(extra[14]) << 16 | UInt32(extra[15]) << 24),
                                     "nextDSTStart": Int(UInt32(extra[16]) | UInt32(extra[17]) << 8 | UInt32(extra[18]) << 16 | UInt32(extra[19]) << 24)])
        case "systemEvent":
            let read = try GarminSystemEvent(payload: payload)
            return (GarminSystemEvent(event: number(f, "event"), value: hexBytes(text(f, "value"))).payload,
                    ["event": Int(read.event), "value": hexString(read.value)])
        case "downloadRequest":
            let read = try GarminDownloadRequest(payload: payload)
            let request = GarminDownloadRequest(index: number(f, "index"), offset: number(f, "offset"), kind: number(f, "kind"),
                                                crcSeed: number(f, "crcSeed"), size: number(f, "size"))
            return (request.payload, ["index": Int(read.index), "offset": Int(read.offset), "kind": Int(read.kind), "crcSeed": Int(read.crcSeed),
                                      "size": Int(read.size)])
        case "downloadAnswer":
            let read = try GarminDownloadRequest.answered(GFDIResponse(payload: payload))
            return (GarminDownloadRequest(index: 0).answer(downloadStatus: number(f, "downloadStatus"), fileSize: number(f, "fileSize")).payload,
                    ["downloadStatus": Int(read.downloadStatus), "fileSize": Int(read.fileSize)])
        case "fileData":
            let read = try GarminFileData(payload: payload)
            return (GarminFileData(flags: number(f, "flags"), crc: number(f, "crc"), offset: number(f, "offset"), data: hexBytes(text(f, "data"))).payload,
                    ["flags": Int(read.flags), "crc": Int(read.crc), "offset": Int(read.offset), "data": hexString(read.data)])
        case "fileDataAnswer":
            // The answer to a chunk at 0 of `nextOffset` bytes.
            let chunk = GarminFileData(crc: 0, offset: 0, data: Array(repeating: 1, count: number(f, "nextOffset")))
            let read = try GarminFileData.answered(GFDIResponse(payload: payload))
            return (chunk.answer(try #require(GarminFileData.TransferStatus(rawValue: number(f, "status")))).payload,
                    ["status": Int(read.status), "nextOffset": Int(read.nextOffset)])
        case "directory":
            let entries = (f["entries"] as? [[String: Any]] ?? []).map { e in
                GarminDirectoryEntry(index: number(e, "index"), type: number(e, "type"), subtype: number(e, "subtype"), number: number(e, "number"),
                                     specificFlags: number(e, "specificFlags"), flags: number(e, "flags"), size: number(e, "size"), time: number(e, "time"))
            }
            let read = try GarminDirectoryEntry.entries(payload)
            #expect(read == entries)
            let padding = payload.count - entries.count * GarminDirectoryEntry.size
            return (entries.flatMap(\.bytes) + Array(repeating: 0, count: padding), ["entries": read.count])
        case "setFileFlag":
            let read = try GarminSetFileFlag(payload: payload)
            return (GarminSetFileFlag(index: number(f, "index"), flags: number(f, "flags")).payload, ["index": Int(read.index), "flags": Int(read.flags)])
        case "createFile":
            let read = try GarminCreateFile(payload: payload)
            let request = GarminCreateFile(size: number(f, "size"), type: number(f, "type"), subtype: number(f, "subtype"), index: number(f, "index"),
                                           numberMask: number(f, "numberMask"), nonce: number(f, "nonce"))
            return (request.payload, ["size": Int(read.size), "type": Int(read.type), "subtype": Int(read.subtype), "index": Int(read.index),
                                      "numberMask": Int(read.numberMask), "nonce": Int(read.nonce)])
        case "createFileAnswer":
            let read = try GarminCreateFile.answered(GFDIResponse(payload: payload))
            let request = GarminCreateFile(size: 0, type: number(f, "type"), subtype: number(f, "subtype"), nonce: 0)
            return (request.answer(createStatus: number(f, "createStatus"), index: number(f, "index"), number: number(f, "number")).payload,
                    ["createStatus": Int(read.createStatus), "index": Int(read.index), "type": Int(read.type), "subtype": Int(read.subtype),
                     "number": Int(read.number)])
        case "uploadRequest":
            let read = try GarminUploadRequest(payload: payload)
            let request = GarminUploadRequest(index: number(f, "index"), size: number(f, "size"), offset: number(f, "offset"), crcSeed: number(f, "crcSeed"))
            return (request.payload, ["index": Int(read.index), "size": Int(read.size), "offset": Int(read.offset), "crcSeed": Int(read.crcSeed)])
        case "uploadAnswer":
            let read = try GarminUploadRequest.answered(GFDIResponse(payload: payload))
            return (GarminUploadRequest(index: 0, size: 0).answer(uploadStatus: number(f, "uploadStatus"), offset: number(f, "offset"),
                                                                 maxSize: number(f, "maxSize"), crcSeed: number(f, "crcSeed")).payload,
                    ["uploadStatus": Int(read.uploadStatus), "offset": Int(read.offset), "maxSize": Int(read.maxSize), "crcSeed": Int(read.crcSeed)])
        case "protobufMessage":
            let bytes = hexBytes(text(f, "protobuf"))
            let read = try GarminProtobufMessage(payload: payload)
            // The Python side wrote the protobuf bytes from the encoding guide; swift-protobuf reads
            // them and writes the same bytes for the same message.
            let smart = try read.smart()
            let again = smart.asksBattery ? GarminSmart.batteryRequest
                : GarminSmart.batteryStatus(level: smart.deviceStatus.batteryStatus.level, status: smart.deviceStatus.batteryStatus.status)
            #expect(try GarminProtobufMessage(requestID: read.requestID, smart: again).bytes == bytes)
            return (GarminProtobufMessage(requestID: number(f, "requestId"), offset: number(f, "offset"), total: number(f, "total"), bytes: bytes).payload,
                    ["requestId": Int(read.requestID), "offset": Int(read.offset), "total": Int(read.total), "protobuf": hexString(read.bytes)])
        case "protobufAcknowledgement":
            let read = try GFDIResponse(payload: payload)
            let acknowledged = GarminProtobufMessage(requestID: number(f, "requestId"), offset: number(f, "offset"), total: 0, bytes: [])
            let extra = read.extra
            return (acknowledged.acknowledgement(of: number(f, "originalType")).payload,
                    ["originalType": Int(read.originalType), "requestId": Int(try GarminProtobufMessage.acknowledged(read)),
                     "offset": Int(UInt32(extra[2]) | UInt32(extra[3]) << 8 | UInt32(extra[4]) << 16 | UInt32(extra[5]) << 24),
                     "chunkStatus": Int(extra[6]), "code": Int(extra[7])])
        default:
            Issue.record("no reader for \(kind)")
            return ([], [:])
        }
    }

    static func expected(_ kind: String, _ f: [String: Any]) -> [String: AnyHashable] {
        if kind == "directory" { return ["entries": (f["entries"] as? [Any] ?? []).count] }
        if kind == "configuration" { return ["capabilities": (f["capabilities"] as? [NSNumber] ?? []).map(\.intValue)] }
        return f.mapValues { value -> AnyHashable in (value as? NSNumber).map { AnyHashable($0.intValue) } ?? AnyHashable(value as? String ?? "") }
    }

    @Test("each payload written from its fields, and read back to them", arguments: messages)
    func message(_ vector: GarminVectors.Entry) throws {
        let kind = vector.fields["kind"] as? String ?? ""
        let (written, read) = try Self.roundTrip(kind, vector.object("fields"), payload: vector.bytes("payload"))
        #expect(written == vector.bytes("payload"))
        #expect(read == Self.expected(kind, vector.object("fields")))
    }

    @Test("the battery through PROTOBUF: the request and the answer read by swift-protobuf; parts and strangers are clear errors")
    func batteryMessages() throws {
        let request = try GarminProtobufMessage(requestID: 7, smart: .batteryRequest)
        #expect(request.bytes == [0x42, 0x02, 0x12, 0x00], "{8: {2: {}}}: an empty request still marks its field")
        #expect(try GarminProtobufMessage(payload: request.payload).smart().asksBattery)
        let answer = try GarminProtobufMessage(payload: GarminProtobufMessage(requestID: 7, smart: .batteryStatus(level: 61)).payload).smart()
        #expect(answer.deviceStatus.batteryStatus.level == 61 && answer.deviceStatus.batteryStatus.status == .ok)
        // A part of a longer message is not joined; bytes that are not a Smart message are refused.
        let part = GarminProtobufMessage(requestID: 7, offset: 0, total: 40, bytes: request.bytes)
        #expect(throws: GarminError.self) { try part.smart() }
        let garbage = GarminProtobufMessage(requestID: 7, total: 3, bytes: [0x42, 0x05, 0x12])
        #expect { try garbage.smart() } throws: { ($0 as? GarminError)?.code == .protobufInvalid }
        // A length past the payload's end.
        #expect { try GarminProtobufMessage(payload: [7, 0, 0, 0, 0, 0, 4, 0, 0, 0, 9, 0, 0, 0, 0x42]) } throws: { ($0 as? GarminError)?.code == .payloadTooShort }
    }

    @Test("a payload cut short names the message and the field it ends before")
    func shortPayload() {
        let error = #expect(throws: GarminError.self) { try GarminDeviceInformation(payload: [0x96, 0x00, 0x31]) }
        #expect(error?.code == .payloadTooShort && error?.message.contains("the product") == true, "\(String(describing: error))")
        #expect(throws: GarminError.self) { try GarminDirectoryEntry.entries(Array(repeating: 1, count: 17)) }
    }

    @Test("a file's chunks carry the running CRC, and each answer names the next offset")
    func fileChunks() {
        let file = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 13) }
        let chunks = GarminFileData.chunks(of: file, chunkSize: 375)
        #expect(chunks.map(\.offset) == [0, 375, 750])
        #expect(chunks.last?.crc == GarminCRC.checksum(file))
        #expect(chunks.flatMap(\.data) == file)
        #expect(chunks.map { (try? GarminFileData.answered($0.answer(.ok)))?.nextOffset } == [375, 750, 1000])
        // Resumed from an offset: the same CRCs as the whole run's.
        #expect(GarminFileData.chunks(of: file, from: 375, chunkSize: 375) == Array(chunks[1...]))
        // One chunk at a time: with the CRC before it kept, or computed from the file.
        #expect(GarminFileData.chunk(of: file, at: 750, chunkSize: 375, crcBefore: chunks[1].crc) == chunks[2])
        #expect(GarminFileData.chunk(of: file, at: 375, chunkSize: 375) == chunks[1])
        #expect(GarminFileData.chunk(of: file, at: 0, chunkSize: 375, crcBefore: 0) == chunks[0])
    }
}

func hexString(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
