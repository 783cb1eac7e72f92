/// Consistent overhead byte stuffing as GFDI uses it (protocol-spec/garmin/garmin.md §3): a frame
/// goes out as `00`, its COBS form, `00`, so a receiver finds frames by their zero delimiters
/// however the stream was cut into writes.
public enum COBS {
    /// The COBS form of `bytes`, without the delimiters. A block is a code byte (one more than the
    /// count of non-zero bytes that follow it, before a zero of the original) and those bytes; code
    /// `FF` carries 254 bytes and no zero. The original's end is no zero: the last block's code
    /// counts its bytes alone, and a last block of 254 bytes is not followed by an empty one.
    public static func encode(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 254 + 2)
        var codeAt = out.count
        out.append(0)
        var run: UInt8 = 0
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            if byte == 0 {
                out[codeAt] = run + 1
                codeAt = out.count
                out.append(0)
                run = 0
                continue
            }
            out.append(byte)
            run += 1
            if run == 254 {
                out[codeAt] = 0xFF
                run = 0
                guard index != bytes.endIndex else { return out }
                codeAt = out.count
                out.append(0)
            }
        }
        out[codeAt] = run + 1
        return out
    }

    /// The original of a COBS form found between two delimiters. A zero inside it, or a code that
    /// runs past its end, is `cobsMalformed`. A trailing empty block (`01`) after a 254-byte block
    /// adds nothing, so both ways of ending on such a block read alike.
    public static func decode(_ encoded: some Collection<UInt8>) throws(GarminError) -> [UInt8] {
        let bytes = Array(encoded)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var at = 0
        while at < bytes.count {
            let code = Int(bytes[at])
            guard code != 0 else {
                throw GarminError(.cobsMalformed, "a zero at byte \(at) of a COBS block: zeros only delimit frames")
            }
            let end = at + code
            guard end <= bytes.count else {
                throw GarminError(.cobsMalformed, "the COBS code \(code) at byte \(at) runs past the frame's \(bytes.count) bytes")
            }
            for byte in bytes[(at + 1)..<end] {
                guard byte != 0 else { throw GarminError(.cobsMalformed, "a zero inside the COBS block at byte \(at)") }
                out.append(byte)
            }
            at = end
            if code != 0xFF && at < bytes.count { out.append(0) }
        }
        return out
    }
}

/// Turns chunks of the GFDI stream, cut anywhere, into the COBS forms between delimiters. An
/// empty form (two delimiters in a row: one frame's end and the next one's start) is no frame.
public struct COBSFrameSplitter: Sendable {
    /// The longest COBS form taken before the partial frame is dropped (`frameTooLong`).
    public let limit: Int
    var partial: [UInt8] = []
    var inFrame = false

    public init(limit: Int = 8192) { self.limit = limit }

    /// Bytes of a frame begun and not yet ended.
    public var pending: Int { partial.count }

    /// What `chunk` completes, in order: each COBS form, or `frameTooLong` where a form ran past
    /// `limit` (it is dropped, and what follows its end delimiter is read on).
    public mutating func append(_ chunk: some Sequence<UInt8>) -> [Result<[UInt8], GarminError>] {
        var found: [Result<[UInt8], GarminError>] = []
        for byte in chunk {
            if byte == 0 {
                if !partial.isEmpty { found.append(.success(partial)) }
                partial.removeAll(keepingCapacity: true)
                inFrame = true
                continue
            }
            guard inFrame else { continue }
            partial.append(byte)
            if partial.count > limit {
                found.append(.failure(GarminError(.frameTooLong, "a GFDI frame ran past \(limit) bytes without a delimiter; it was dropped")))
                partial.removeAll()
                inFrame = false
            }
        }
        return found
    }

    /// Drops a partial frame (a receiver does so after 1.5 s without its end).
    public mutating func reset() {
        partial.removeAll()
        inFrame = false
    }
}
