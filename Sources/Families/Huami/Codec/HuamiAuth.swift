/// The band's per-device 16-byte auth key (from the vendor's cloud; it changes when the band is
/// paired with the vendor app again). protocol-spec/huami/huami.md §2.
public struct HuamiAuthKey: Sendable, Hashable, CustomStringConvertible {
    public static let size = 16
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws(HuamiError) {
        guard bytes.count == Self.size else {
            throw HuamiError(.badAuthKey, "an auth key has 16 bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// 32 hex digits, with or without a leading `0x` (as Gadgetbridge and huami-token print it).
    public init(hex text: String) throws(HuamiError) {
        var digits = Substring(text.trimmingWhitespace())
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        guard digits.count == 32, digits.allSatisfy(\.isHexDigit) else {
            throw HuamiError(.badAuthKey, "an auth key is 32 hex digits (16 bytes), optionally after 0x; this one is \(digits.count) characters")
        }
        var out: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            out.append(UInt8(digits[index..<next], radix: 16)!)
            index = next
        }
        bytes = out
    }

    /// Not the key itself: it is a credential.
    public var description: String { "a 16-byte auth key" }
}

extension String {
    fileprivate func trimmingWhitespace() -> Substring {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return text
    }
}

/// The two flag bytes of a model's auth messages (protocol-spec/huami/huami.md §2): `authFlags` goes in
/// byte 1 of every request; `cryptFlags` is ORed into the opcode of the random-number request and
/// of the encrypted answer, and a non-zero one adds `02 01 00` to the random-number request.
public struct HuamiAuthFlags: Sendable, Hashable {
    public var authFlags: UInt8
    public var cryptFlags: UInt8

    public init(authFlags: UInt8, cryptFlags: UInt8) {
        self.authFlags = authFlags
        self.cryptFlags = cryptFlags
    }

    /// Amazfit Bip (the first): auth flags 0x08, no crypt flag.
    public static let bip = HuamiAuthFlags(authFlags: 0x08, cryptFlags: 0x00)
    /// Mi Band 3: no flags.
    public static let miBand3 = HuamiAuthFlags(authFlags: 0x00, cryptFlags: 0x00)
    /// Mi Band 4/5/6, Amazfit Bip S/U, GTS/GTR 1–2: crypt flag 0x80.
    public static let crypt = HuamiAuthFlags(authFlags: 0x00, cryptFlags: 0x80)
}

/// What the central writes to the auth characteristic (`…0009…`).
public enum HuamiAuthRequest: Sendable, Hashable {
    /// First pairing only: `[01, authFlags] + key`.
    case sendKey(authFlags: UInt8, key: HuamiAuthKey)
    /// `[02 | crypt, authFlags]`, plus `02 01 00` when the crypt flag is set.
    case requestRandom(HuamiAuthFlags)
    /// `[03 | crypt, authFlags] + AES-128-ECB(key, random)`.
    case sendEncrypted(HuamiAuthFlags, encrypted: [UInt8])

    public static let sendKeyOpcode: UInt8 = 0x01
    public static let requestRandomOpcode: UInt8 = 0x02
    public static let sendEncryptedOpcode: UInt8 = 0x03

    public var bytes: [UInt8] {
        switch self {
        case let .sendKey(authFlags, key):
            return [Self.sendKeyOpcode, authFlags] + key.bytes
        case let .requestRandom(flags):
            let head = [Self.requestRandomOpcode | flags.cryptFlags, flags.authFlags]
            return flags.cryptFlags == 0 ? head : head + [0x02, 0x01, 0x00]
        case let .sendEncrypted(flags, encrypted):
            return [Self.sendEncryptedOpcode | flags.cryptFlags, flags.authFlags] + encrypted
        }
    }

    /// Reads a request as the simulated band receives it.
    public init(bytes: some Collection<UInt8>) throws(HuamiError) {
        let raw = Array(bytes)
        guard raw.count >= 2 else { throw HuamiError(.tooShort, "an auth request has \(raw.count) bytes, at least 2 expected") }
        let crypt = raw[0] & 0xF0, flags = HuamiAuthFlags(authFlags: raw[1], cryptFlags: crypt)
        switch raw[0] & 0x0F {
        case Self.sendKeyOpcode where crypt == 0:
            guard raw.count == 18 else { throw HuamiError(.badLength, "a send-key request has 18 bytes, not \(raw.count)") }
            self = .sendKey(authFlags: raw[1], key: try HuamiAuthKey(bytes: Array(raw[2...])))
        case Self.requestRandomOpcode:
            if crypt == 0 {
                guard raw.count == 2 else { throw HuamiError(.badLength, "a random-number request without the crypt flag has 2 bytes, not \(raw.count)") }
            } else {
                guard raw.count == 5 else { throw HuamiError(.badLength, "a random-number request with the crypt flag has 5 bytes, not \(raw.count)") }
                guard Array(raw[2...]) == [0x02, 0x01, 0x00] else {
                    throw HuamiError(.invalidValue, "a random-number request with the crypt flag ends in 02 01 00, not \(hexString(raw[2...]))")
                }
            }
            self = .requestRandom(flags)
        case Self.sendEncryptedOpcode:
            guard raw.count == 18 else { throw HuamiError(.badLength, "an encrypted-number request has 18 bytes, not \(raw.count)") }
            self = .sendEncrypted(flags, encrypted: Array(raw[2...]))
        default:
            throw HuamiError(.unknownOpcode, "auth request opcode \(hex(raw[0])) is none of 01, 02, 03 (with 0x80 on 02 and 03)")
        }
    }
}

/// What the band notifies on the auth characteristic: `10 <opcode> <status> …`. The opcode's high
/// nibble varies by model; it is read with `& 0x0F` (Gadgetbridge).
public enum HuamiAuthAnswer: Sendable, Hashable {
    /// `10 01 01`: the key of a first pairing is stored.
    case keyStored
    /// `10 x2 01` + 16 random bytes: the challenge.
    case random([UInt8])
    /// `10 x3 01`: the encrypted number matched; the central is authenticated.
    case accepted
    /// Any other status for a step (`10 x3 04`: wrong key).
    case refused(opcode: UInt8, status: UInt8)

    public static let wrongKeyStatus: UInt8 = 0x04

    /// The answer's bytes; `cryptFlags` goes into the opcode's high nibble of the challenge and
    /// the verdict (what a band of that model is taken to send).
    public func bytes(cryptFlags: UInt8 = 0) -> [UInt8] {
        switch self {
        case .keyStored: [responseMarker, HuamiAuthRequest.sendKeyOpcode, statusSuccess]
        case let .random(random): [responseMarker, HuamiAuthRequest.requestRandomOpcode | cryptFlags, statusSuccess] + random
        case .accepted: [responseMarker, HuamiAuthRequest.sendEncryptedOpcode | cryptFlags, statusSuccess]
        case let .refused(opcode, status): [responseMarker, opcode == HuamiAuthRequest.sendKeyOpcode ? opcode : opcode | cryptFlags, status]
        }
    }

    public init(bytes: some Collection<UInt8>) throws(HuamiError) {
        let raw = Array(bytes)
        guard raw.count >= 3 else { throw HuamiError(.tooShort, "an auth answer has \(raw.count) bytes, at least 3 expected") }
        guard raw[0] == responseMarker else { throw HuamiError(.notAResponse, "an auth answer starts with 10, not \(hex(raw[0]))") }
        let opcode = raw[1] & 0x0F, status = raw[2]
        guard (1...3).contains(opcode) else { throw HuamiError(.unknownOpcode, "auth answer opcode \(hex(raw[1])) is none of x1, x2, x3") }
        guard status == statusSuccess else {
            guard raw.count == 3 else { throw HuamiError(.badLength, "a refusal has 3 bytes, not \(raw.count)") }
            self = .refused(opcode: opcode, status: status)
            return
        }
        switch opcode {
        case HuamiAuthRequest.requestRandomOpcode:
            guard raw.count == 19 else { throw HuamiError(.badLength, "a challenge has 19 bytes (10 x2 01 + 16), not \(raw.count)") }
            self = .random(Array(raw[3...]))
        default:
            guard raw.count == 3 else { throw HuamiError(.badLength, "auth answer \(hexString(raw.prefix(3))) has 3 bytes, not \(raw.count)") }
            self = opcode == HuamiAuthRequest.sendKeyOpcode ? .keyStored : .accepted
        }
    }

    /// The step it answers (`& 0x0F` of its opcode): 1 storing the key, 2 the random number, 3 the encrypted number.
    public var opcode: UInt8 {
        switch self {
        case .keyStored: HuamiAuthRequest.sendKeyOpcode
        case .random: HuamiAuthRequest.requestRandomOpcode
        case .accepted: HuamiAuthRequest.sendEncryptedOpcode
        case let .refused(opcode, _): opcode
        }
    }

    /// The error a refusal means: a wrong key (status 04 to the encrypted number) is
    /// `authKeyRefused` ("the band refused the auth key"); anything else `authFailed`. Nil when not a refusal.
    public var error: HuamiError? {
        guard case let .refused(opcode, status) = self else { return nil }
        if opcode == HuamiAuthRequest.sendEncryptedOpcode && status == Self.wrongKeyStatus {
            return HuamiError(.authKeyRefused, "the band refused the auth key")
        }
        let step = ["", "storing the key", "the random number", "the encrypted number"][Int(opcode)]
        return HuamiError(.authFailed, "the band answered \(step) with status \(hex(status))")
    }
}
