import Foundation
import SwiftProtobuf
import TSGATT

/// PROTOBUF_REQUEST (5043) and PROTOBUF_RESPONSE (5044) (protocol-spec/garmin/garmin.md §7):
/// `request_id:u16 offset:u32 total:u32 length:u32 bytes`, the bytes a `GarminSmart` message
/// (garmin_smart.proto through swift-protobuf) or, when longer than a frame, its part at `offset`
/// of `total`. The answer reuses the request id; each message is acknowledged with a RESPONSE
/// naming its id (`acknowledgement`). The family sends and reads whole messages only (a battery
/// message is a few bytes).
public struct GarminProtobufMessage: Sendable, Hashable {
    public var requestID: UInt16
    public var offset: UInt32
    public var total: UInt32
    public var bytes: [UInt8]

    public init(requestID: UInt16, offset: UInt32 = 0, total: UInt32, bytes: [UInt8]) {
        self.requestID = requestID
        self.offset = offset
        self.total = total
        self.bytes = bytes
    }

    /// A whole message carrying `smart`.
    public init(requestID: UInt16, smart: GarminSmart) throws(GarminError) {
        let serialized: [UInt8]
        do { serialized = try smart.serializedBytes() } catch {
            throw GarminError(.protobufInvalid, "the PROTOBUF message could not be written: \(error)")
        }
        self.init(requestID: requestID, total: UInt32(serialized.count), bytes: serialized)
    }

    public init(payload: [UInt8]) throws(GarminError) {
        var reader = GarminPayloadReader(payload, message: "a PROTOBUF message")
        requestID = try reader.u16("the request id")
        offset = try reader.u32("the offset")
        total = try reader.u32("the total length")
        let length = try reader.u32("the length")
        bytes = Array(try reader.take(Int(length), "its \(length) protobuf byte(s)"))
    }

    public var payload: [UInt8] {
        var writer = ByteWriter()
        writer.u16(requestID); writer.u32(offset); writer.u32(total); writer.u32(UInt32(bytes.count))
        return writer.bytes + bytes
    }

    /// The message as a GFDI frame of `type` (`protobufRequest` or `protobufResponse`).
    public func frame(type: UInt16) -> GFDIFrame { GFDIFrame(type: type, payload: payload) }

    /// The whole message: one part from offset 0 holding all `total` bytes.
    public var isWhole: Bool { offset == 0 && Int(total) == bytes.count }

    /// What the bytes say; a part of a longer message, or bytes that are not a `GarminSmart`, is `protobufInvalid`.
    public func smart() throws(GarminError) -> GarminSmart {
        guard isWhole else {
            throw GarminError(.protobufInvalid, "PROTOBUF request \(requestID) came in parts (\(bytes.count) bytes at offset \(offset) of \(total)), which the gateway does not join")
        }
        do { return try GarminSmart(serializedBytes: bytes) } catch {
            throw GarminError(.protobufInvalid, "PROTOBUF request \(requestID): \(bytes.count) bytes that are not a Smart message (\(error))")
        }
    }

    /// The RESPONSE (5000) acknowledging this message of `type`: `status request_id:u16
    /// offset:u32 chunk_status:u8 (0 kept) code:u8 (0 no error)`.
    public func acknowledgement(of type: UInt16) -> GFDIResponse {
        var writer = ByteWriter()
        writer.u16(requestID); writer.u32(offset); writer.u8(0); writer.u8(0)
        return GFDIResponse(originalType: type, status: .ack, extra: writer.bytes)
    }

    /// The request id an acknowledgement names.
    public static func acknowledged(_ response: GFDIResponse) throws(GarminError) -> UInt16 {
        var reader = GarminPayloadReader(response.extra, message: "the acknowledgement of a PROTOBUF message")
        return try reader.u16("the request id")
    }
}

extension GarminSmart {
    /// The host's battery request: `{8: {2: {}}}`.
    public static var batteryRequest: GarminSmart {
        var smart = GarminSmart()
        smart.deviceStatus.batteryRequest = GarminBatteryRequest()
        return smart
    }

    /// The watch's battery answer: `{8: {3: {1: status, 2: level}}}`.
    public static func batteryStatus(level: Int32, status: GarminResponseStatus = .ok) -> GarminSmart {
        var smart = GarminSmart()
        smart.deviceStatus.batteryStatus.status = status
        smart.deviceStatus.batteryStatus.level = level
        return smart
    }

    /// Whether it is a battery request.
    public var asksBattery: Bool { hasDeviceStatus && deviceStatus.hasBatteryRequest }
}
