// libFuzzer entry point for capture files from anyone (target btsnoop of scripts/fuzz): what
// `tsgateway protocol decode --btsnoop` does with one. The btsnoop reader; a file it reads must
// write out to the same bytes. The HCI packets of either datalink, the capture's device filter,
// ACL/L2CAP reassembly, ATT on the fixed channel and EATT, GATT discovery, each dialect's
// exchange (v1, NPK, QRing, Huami) decoded by its own capture decoder, and the exchange as a replayable capture.

import TSHuami
import TSModels
import TSNpk
import TSProtocol
import TSQRing
import TSSnoop
import TSTransport

private let dialects: [(GATTProfile, any CaptureDecoder)] = [
    (.protocolV1, ProtocolV1CaptureDecoder()), (.npk, NpkCaptureDecoder()), (.qring, QRingCaptureDecoder(zone: .gmt)),
    (.huami, HuamiCaptureDecoder()),
]

private let device = BluetoothAddress(littleEndian: [0x66, 0x55, 0x44, 0x33, 0x22, 0x11])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let file: BTSnoopFile
    do {
        file = try BTSnoop.decode(bytes)
    } catch {
        _ = error.description
        return 0
    }
    if BTSnoop.encode(datalink: file.datalink, records: file.records) != bytes { fatalError("a file read does not write out the same") }
    let packets = HCIPacket.packets(of: file)
    var filter = CaptureFilter(index: 0, device: device)
    for packet in packets { _ = filter.keep(packet) }

    let traffic = ATTTraffic(packets: packets)
    for operation in traffic.operations { _ = operation.handleValues }
    for (profile, decoder) in dialects {
        let exchange = CapturedExchange(traffic: traffic, profile: profile, decoder: decoder)
        var sessions: [ConnectionKey: any CaptureSessionDecoder] = [:]
        for value in exchange.values {
            var session = sessions[value.connection] ?? decoder.session(started: nil)
            for frame in session.append(value.bytes, channel: value.channel, flow: value.flow) { _ = frame.text }
            sessions[value.connection] = session
        }
        for (connection, var session) in sessions {
            for channel in CaptureChannel.pairs + profile.characteristics.map(CaptureChannel.init) {
                for flow in [CaptureFlow.write, .notification, .read] { _ = session.finish(channel: channel, flow: flow) }
            }
            sessions[connection] = session
        }
        let replayed = exchange.captureEntries.filter { $0.direction == .write || $0.direction == .notification }
        let expected = exchange.connections.flatMap { connection in exchange.values.filter { $0.connection == connection && $0.flow != .read } }
        if replayed.map(\.bytes) != expected.map(\.bytes) || replayed.map(\.pair) != expected.map(\.channel) {
            fatalError("the replayable capture does not carry the exchange's \(expected.count) value(s)")
        }
    }
    return 0
}
