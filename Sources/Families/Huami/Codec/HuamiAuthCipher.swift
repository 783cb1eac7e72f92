// AES-128-ECB of the band's 16-byte challenge, through swift-crypto's single-block AES
// (`AES.permute` in _CryptoExtras). Compiled where _CryptoExtras is there (every SwiftPM build of
// this package); scripts/fuzz builds TSHuami without it, as its harness sends nothing.
#if canImport(_CryptoExtras)
import Crypto
import _CryptoExtras

extension HuamiAuthKey {
    /// AES-128-ECB(key, challenge): one block, no padding (protocol-spec/huami/huami.md §2).
    public func encrypt(challenge: [UInt8]) throws(HuamiError) -> [UInt8] {
        guard challenge.count == 16 else {
            throw HuamiError(.badLength, "the band's challenge has 16 bytes, not \(challenge.count)")
        }
        var block = challenge
        do {
            try AES.permute(&block, key: SymmetricKey(data: bytes))
        } catch {
            throw HuamiError(.badAuthKey, "AES refused the key: \(error)")
        }
        return block
    }

    /// The request that answers a challenge: `[03 | crypt, authFlags] + AES-128-ECB(key, challenge)`.
    public func answer(challenge: [UInt8], flags: HuamiAuthFlags) throws(HuamiError) -> HuamiAuthRequest {
        .sendEncrypted(flags, encrypted: try encrypt(challenge: challenge))
    }

    /// The simulated band's check of an encrypted number.
    public func accepts(encrypted: [UInt8], challenge: [UInt8]) -> Bool {
        (try? encrypt(challenge: challenge)) == encrypted
    }
}
#endif
