import TSModels

/// A defect in bytes from a Huami band (or, for the simulated band, from the central), or a value
/// a band cannot take: which rule was broken (`code`, stable, named by the test vectors in
/// protocol-spec/huami/vectors/) and a sentence for people (protocol-spec/huami/huami.md §11).
public struct HuamiError: CategorizedError, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        // any message
        case tooShort, badLength, notAResponse, unknownOpcode, invalidValue, valueOutOfRange
        // the auth exchange
        case badAuthKey, authKeyRefused, authFailed
        // the activity fetch
        case fetchRefused, countNotWholeSamples, counterSkipped, counterRepeated, countMismatch
        case transferEndedEarly, crcMismatch, partialSample
        // the alarm table's chunks
        case chunkOutOfOrder
        // values the gateway was asked to send
        case slotOutOfRange, timeOutOfRange, intervalOutOfRange, windowNotSupported
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var category: ErrorCategory {
        switch code {
        case .badAuthKey, .slotOutOfRange, .timeOutOfRange, .intervalOutOfRange, .windowNotSupported: .invalidInput
        case .authKeyRefused: .notPaired
        default: .protocolError
        }
    }

    public var description: String { message }
}

func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16)
    return "0x" + (digits.count == 1 ? "0" : "") + digits
}

func hexString(_ bytes: some Collection<UInt8>) -> String {
    bytes.map { let d = String($0, radix: 16); return d.count == 1 ? "0" + d : d }.joined()
}

func u16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }

func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
}

func le16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }

func le32(_ value: UInt32) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)] }

/// `10 <opcode> <status>`: the head of every answer on the auth, configuration and fetch-control characteristics.
let responseMarker: UInt8 = 0x10
let statusSuccess: UInt8 = 0x01
