import TSDevice
import TSGarmin
import TSModels

/// The watch's battery (protocol-spec/garmin/garmin.md §7): a PROTOBUF request (5043) carrying
/// the device-status service's battery request, which the watch acknowledges and answers with a
/// PROTOBUF response (5044) reusing its id; the response is acknowledged as it arrives
/// (`received`). The payloads are `GarminSmart` messages through swift-protobuf.
extension GarminWatch {
    public func battery() async throws -> BatteryStatus {
        guard connection != nil else { throw WatchError.notConnected }
        protobufRequestID &+= 1
        let id = protobufRequestID
        let request = try GarminProtobufMessage(requestID: id, smart: .batteryRequest)
        let status = try await exchange(frames: [request.frame(type: GFDIType.protobufRequest)], what: "the battery (PROTOBUF request \(id))") { delivery -> GarminBatteryStatus? in
            guard case let .frame(frame) = delivery else { return nil }
            if frame.type == GFDIType.response, let response = try? GFDIResponse(payload: frame.payload),
               response.originalType == GFDIType.protobufRequest, response.status != .ack {
                throw WatchError.unsupported("a battery reading (the watch answered the PROTOBUF request with status \(response.statusByte))")
            }
            guard frame.type == GFDIType.protobufResponse else { return nil }
            let smart: GarminSmart
            do {
                let message = try GarminProtobufMessage(payload: frame.payload)
                guard message.requestID == id else { return nil }
                smart = try message.smart()
            } catch {
                throw WatchError.protocolViolation("the watch's answer to the battery request: \(error)")
            }
            guard smart.hasDeviceStatus, smart.deviceStatus.hasBatteryStatus else {
                throw WatchError.protocolViolation("the watch answered the battery request with a message without a battery status (\(frame.payload.count) payload bytes)")
            }
            return smart.deviceStatus.batteryStatus
        }
        guard status.status == .ok, status.hasLevel, (0...100).contains(status.level) else {
            throw WatchError.protocolViolation("the watch's battery answer says status \(status.hasStatus ? "\(status.status)" : "none"), level \(status.hasLevel ? "\(status.level)" : "none")")
        }
        return BatteryStatus(level: UInt8(status.level), state: .unknown)
    }
}
