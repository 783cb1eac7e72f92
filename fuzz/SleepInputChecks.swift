// What `tsgateway sleep analyze` does with a file from anyone, shared by the sleep-json and
// sleep-csv targets (scripts/fuzz): detect, decode, then analyse. A decoded file must read back
// the same after the items are written out again in the plain form; a refused one must name a
// line of the input.

import Foundation
import TSModels
import TSSleep

private let zone = TimeZone(identifier: "Europe/Berlin") ?? .gmt

func checkSleepInput(_ data: UnsafePointer<UInt8>, _ size: Int, format: SleepInputFormat) {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = SleepInputFormat.detect(name: "-", bytes: bytes)
    let items: [SleepItem]
    do {
        items = try SleepInputDecoder.decode(bytes, format: format)
    } catch {
        let lines = bytes.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        if !(1...lines).contains(error.line) { fatalError("error on line \(error.line) of a \(lines)-line input: \(error.message)") }
        return
    }
    let again: [SleepItem]
    do {
        again = try SleepInputDecoder.decode(Array(plainText(items, format).utf8), format: format)
    } catch {
        fatalError("\(items.count) decoded item(s) written out again do not read back: line \(error.line): \(error.message)")
    }
    if again != items { fatalError("\(items.count) decoded item(s) read back differently") }
    let rule = StatisticsRule(rawValue: UInt8(size % 4)) ?? .withNap
    _ = SleepProcessor.analyse(items, rule: rule, timeZone: zone)
}

private func plainText(_ items: [SleepItem], _ format: SleepInputFormat) -> String {
    switch format {
    case .json:
        "[" + items.map { "{\"stage\":\"\($0.stage.name)\",\"start\":\($0.start),\"duration\":\($0.duration)}" }.joined(separator: ",") + "]"
    case .csv:
        "stage,start,duration\n" + items.map { "\($0.stage.name),\($0.start),\($0.duration)\n" }.joined()
    }
}
