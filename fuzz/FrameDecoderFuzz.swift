// libFuzzer entry point for the wire-protocol decoder, built by scripts/fuzz together with the
// sources of TSModels and TSProtocol (swiftc -sanitize=fuzzer,address).
//
// The first input byte picks the chunk size; the rest is fed to a FrameReassembler as received
// notifications, every frame that comes out is decoded as a Message, and a decoded message must
// re-encode to the same frame bytes (canonical encoding). A second pass wraps the raw input in a
// frame with a valid CRC for every command, so the payload decoders see arbitrary bytes too.

import TSProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let chunkSize = Int(first % 64) + 1
    let stream = Array(bytes.dropFirst())

    var reassembler = FrameReassembler()
    var events: [FrameReassembler.Event] = []
    var offset = 0
    while offset < stream.count {
        let end = min(offset + chunkSize, stream.count)
        events += reassembler.append(stream[offset..<end], at: .milliseconds(offset))
        offset = end
    }
    events += reassembler.flush()
    if reassembler.pendingByteCount != 0 { fatalError("flush left \(reassembler.pendingByteCount) bytes pending") }

    for case let .frame(frame) in events {
        guard let message = try? Message(frame: frame) else { continue }
        checkCanonical(message, frame)
    }
    let payload = Array(stream.prefix(Frame.maxPayload))
    for command in CommandID.all {
        for flags in [FrameFlags(), .response, .event] {
            let frame = Frame(flags: flags, sequence: first, command: command, payload: payload)
            if let message = try? Message(frame: frame) { checkCanonical(message, frame) }
        }
    }
    return 0
}

/// A message decoded from a frame must encode back to exactly that frame.
private func checkCanonical(_ message: Message, _ frame: Frame) {
    guard let again = try? message.frame(sequence: frame.sequence) else {
        fatalError("\(message.kind) decoded but does not re-encode")
    }
    if again.payload != frame.payload || again.command != frame.command {
        fatalError("\(message.kind) re-encodes differently")
    }
}
