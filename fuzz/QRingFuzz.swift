// libFuzzer entry point for the QRing ring dialect's codecs (target qring of scripts/fuzz): the
// first byte picks the notification size (1…64), the rest is what the ring sends. It is read as
// 16-byte packets (answers, the heart-rate log and steps assemblers) and as the big-data
// characteristic's stream (frames reassembled, sleep replies read into nights). A frame the
// reassembler hands over stays within its bound; a night's stages lie within a day of the night.

import Foundation
import TSModels
import TSQRing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let chunkSize = Int(data[0] % 64) + 1
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let zone = TimeZone(identifier: "Europe/Berlin")!
    let today = RingDate(year: 2025, month: 10, day: 26)

    var log = HeartRateLogAssembler(day: today, zone: zone)
    var steps = StepsAssembler(zone: zone)
    var start = 0
    while start + 16 <= bytes.count {
        let packet = bytes[start..<start + 16]
        _ = try? QRingAnswer(packet: packet)
        _ = try? log.feed(packet)
        _ = try? steps.feed(packet)
        start += 16
    }

    var reassembler = BigDataReassembler(maxPayload: 1024)
    start = 0
    while start < bytes.count {
        let frames = reassembler.feed(bytes[start..<min(start + chunkSize, bytes.count)])
        for frame in frames {
            if frame.payload.count > reassembler.maxPayload { fatalError("a frame of \(frame.payload.count) bytes passed the \(reassembler.maxPayload)-byte bound") }
            guard frame.type == BigDataFrame.sleepType, let nights = try? RingSleep.days(payload: frame.payload, today: today, zone: zone) else { continue }
            for night in nights {
                for item in night.items where item.start < night.start - 86_400 || item.start > night.end + 86_400 {
                    fatalError("a stage at \(item.start) lies far outside its night \(night.start)…\(night.end)")
                }
            }
        }
        start += chunkSize
    }
    reassembler.expire()
    return 0
}
