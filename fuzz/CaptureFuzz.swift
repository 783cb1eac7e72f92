// libFuzzer entry point for capture files from anyone (target btsnoop of scripts/fuzz): what
// `tsgateway protocol decode --btsnoop` does with one. The btsnoop reader; a file it reads must
// write out to the same bytes. The HCI packets of either datalink, the capture's device filter,
// ACL/L2CAP reassembly, ATT on the fixed channel and EATT, GATT discovery, the watch-service
// exchange with its frames, and the exchange as a replayable capture.

import TSModels
import TSProtocol
import TSSnoop
import TSTransport

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

    let exchange = CapturedExchange(traffic: ATTTraffic(packets: packets))
    for operation in exchange.traffic.operations { _ = operation.handleValues }
    var reassemblers: [ConnectionKey: FrameReassembler] = [:]
    for value in exchange.values {
        var reassembler = reassemblers[value.connection] ?? FrameReassembler()
        for case let .frame(frame) in reassembler.append(value.bytes, at: .zero) { _ = try? Message(frame: frame) }
        reassemblers[value.connection] = reassembler
    }
    let replayed = exchange.captureEntries.filter { $0.direction == .write || $0.direction == .notification }.map(\.bytes)
    let expected = exchange.connections.flatMap { connection in exchange.values.filter { $0.connection == connection }.map(\.bytes) }
    if replayed != expected { fatalError("the replayable capture does not carry the exchange's \(expected.count) value(s)") }
    return 0
}
