// libFuzzer entry point for TopStep's NPK dialect (target npk of scripts/fuzz): the first byte
// picks the notification size (1…64), the rest is what the watch sends. Chunks go through the
// reassembler; every frame it hands over is read as the watch's message for its command (the
// protobuf payload through swift-protobuf), list frames go through a list assembler, and sleep
// days, heart-rate days and alarm lists are mapped to the project's types. A frame handed over
// must encode back to a frame of its own length; a mapped sleep item has a positive duration.

import TSModels
import TSNpk

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let chunkSize = Int(data[0] % 64) + 1
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    var reassembler = NpkReassembler()
    var lists = NpkListAssembler()
    var outputs: [NpkReassembler.Output] = []
    var start = 0
    while start < bytes.count {
        outputs += reassembler.feed(bytes[start..<min(start + chunkSize, bytes.count)])
        start += chunkSize
    }
    outputs += reassembler.flush()
    for case let .frame(frame) in outputs {
        if frame.payload.count > NpkFrame.maxPayloadLength { fatalError("a \(frame.payload.count)-byte payload passed the bound") }
        if let encoded = try? frame.encoded(), encoded.count != NpkFrame.headerSize + frame.payload.count {
            fatalError("\(frame) encodes to \(encoded.count) bytes")
        }
        if frame.flags.contains(.list) { _ = try? lists.add(frame) }
        guard let message = try? NpkMessage(frame, from: .fromWatch) else { continue }
        if let day = message.message as? TSMetaSleepDay {
            for item in NpkSleep.records(from: day).items where item.duration <= 0 {
                fatalError("a sleep item of \(item.duration) s was mapped")
            }
        }
        if let day = message.message as? TSMetaHeartRateDay { _ = NpkHeartRate.samples(from: day) }
        if let list = message.message as? TSMetaAlarmList { _ = try? NpkAlarms.alarms(from: list) }
    }
    _ = try? lists.finish()
    return 0
}
