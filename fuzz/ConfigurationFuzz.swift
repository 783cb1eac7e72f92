// libFuzzer entry point for the daemon's configuration reader (target config of scripts/fuzz):
// any bytes as the YAML file. Built with Yams from the package checkout and the reader's own
// files alone (see scripts/fuzz). A refused file must name one of its lines, or none.

import TSGatewayService
import TSModels

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        _ = try GatewayConfiguration.parse(text, file: "fuzz.yaml", dialects: [DialectTerms(name: .protocolV1), DialectTerms(name: .standard)])
    } catch {
        let lines = max(1, text.utf8.count { $0 == 0x0A } + (text.utf8.last.map { $0 == 0x0A ? 0 : 1 } ?? 0))
        if let line = error.line, !(1...lines).contains(line) { fatalError("error on line \(line) of a \(lines)-line file: \(error.message)") }
        _ = error.description
    }
    return 0
}
