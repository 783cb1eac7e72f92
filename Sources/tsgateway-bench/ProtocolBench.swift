import Foundation
import TSGATT
import TSModels
import TSProtocol

/// Decoding received sleep pages (reassembly, CRC, payload decode) against a plain memory copy
/// of the same notification bytes, for 7 days and 1 year of records.
func runProtocolBenchmarks() throws {
    let mtu = try ATTMTU(247)
    for (label, days) in [("7 days", 7), ("1 year", 365)] {
        let records = syntheticNights(days: days)
        let chunks = try notificationChunks(records: records, mtu: mtu)
        let streamBytes = chunks.reduce(0) { $0 + $1.count }
        // Repeat small inputs so each timed run lasts long enough to measure.
        let repetitions = max(1, 4_000_000 / streamBytes)

        var decodedRecords = 0
        let decodeSeconds = try fastestSeconds {
            decodedRecords = 0
            for _ in 0..<repetitions { decodedRecords += try decodeAll(chunks) }
        }
        guard decodedRecords == records.count * repetitions else {
            throw BenchFailure("decoded \(decodedRecords) records, expected \(records.count * repetitions)")
        }
        var sink = [UInt8](repeating: 0, count: mtu.chunkSize)
        let copySeconds = fastestSeconds {
            for _ in 0..<repetitions {
                for chunk in chunks {
                    chunk.withUnsafeBytes { source in
                        sink.withUnsafeMutableBytes { $0.copyMemory(from: source) }
                    }
                    blackHole(sink)
                }
            }
        }
        let totalBytes = Double(streamBytes * repetitions)
        print("""
            \(label): \(records.count) records in \(chunks.count) notifications of ≤\(mtu.chunkSize) B (\(streamBytes) B on the wire)
              decode (reassemble + CRC + payload): \(formatRate(totalBytes / decodeSeconds, unit: "B")), \(formatRate(Double(records.count * repetitions) / decodeSeconds, unit: " records"))
              memcpy of the same notifications:    \(formatRate(totalBytes / copySeconds, unit: "B"))
              ratio decode/memcpy throughput:      \(String(format: "%.3f", copySeconds / decodeSeconds))
            """)
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

private func decodeAll(_ chunks: [[UInt8]]) throws -> Int {
    var reassembler = FrameReassembler()
    var count = 0
    for chunk in chunks {
        for case let .frame(frame) in reassembler.append(chunk, at: .zero) {
            if case let .sleepPage(page) = try Message(frame: frame) { count += page.records.count }
        }
    }
    return count
}

/// Pages of 33 records (a 249-byte frame) packed back to back and cut at the MTU, as the watch sends them.
private func notificationChunks(records: [SleepItem], mtu: ATTMTU) throws -> [[UInt8]] {
    var frames: [Frame] = []
    let perPage = 33
    for (index, start) in stride(from: 0, to: records.count, by: perPage).enumerated() {
        let page = SleepPage(transferId: 1, page: UInt16(index), last: start + perPage >= records.count,
                             records: Array(records[start..<min(start + perPage, records.count)]))
        frames.append(try Message.sleepPage(page).frame(sequence: UInt8(truncatingIfNeeded: index)))
    }
    return try Fragmenter.chunks(of: frames, mtu: mtu)
}

/// Nights of about 8 h in 10–25 minute stage items, deterministic.
func syntheticNights(days: Int) -> [SleepItem] {
    var items: [SleepItem] = []
    var state: UInt64 = 0x5EED
    func next(_ range: ClosedRange<Int>) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return range.lowerBound + Int((state >> 33) % UInt64(range.count))
    }
    let stages: [SleepStage] = [.light, .deep, .light, .rem, .awake]
    for day in 0..<days {
        var time = Int64(1_735_700_000 + day * 86_400 + next(0...3600))
        let end = time + 8 * 3600
        var index = 0
        while time < end {
            let duration = Int64(next(600...1500))
            items.append(SleepItem(stage: stages[index % stages.count], start: time, duration: duration))
            time += duration
            index += 1
        }
    }
    return items
}
