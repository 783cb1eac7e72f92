import TSHuami

/// Authentication (protocol-spec/huami/huami.md §2): a new key stored or refused, the challenge, the
/// encrypted answer checked against the band's key.
extension SimulatedHuamiBand {
    func auth(_ request: HuamiAuthRequest) async {
        switch request {
        case let .sendKey(_, newKey):
            if configuration.acceptsNewKey {
                key = newKey
                refusesKey = false
                await send(.auth, HuamiAuthAnswer.keyStored.bytes())
            } else {
                await send(.auth, HuamiAuthAnswer.refused(opcode: HuamiAuthRequest.sendKeyOpcode, status: HuamiAuthAnswer.wrongKeyStatus).bytes())
            }
        case let .requestRandom(flags):
            let random = nextChallenge()
            challenge = random
            await send(.auth, HuamiAuthAnswer.random(random).bytes(cryptFlags: flags.cryptFlags))
        case let .sendEncrypted(flags, encrypted):
            guard let challenge, !refusesKey, key.accepts(encrypted: encrypted, challenge: challenge) else {
                statistics.authsRefused += 1
                isAuthenticated = false
                say("auth refused: \(challenge == nil ? "no challenge was asked for" : "not the band's key")")
                await send(.auth, HuamiAuthAnswer.refused(opcode: HuamiAuthRequest.sendEncryptedOpcode, status: HuamiAuthAnswer.wrongKeyStatus)
                    .bytes(cryptFlags: flags.cryptFlags))
                return
            }
            self.challenge = nil
            isAuthenticated = true
            statistics.authsAccepted += 1
            say("auth accepted")
            await send(.auth, HuamiAuthAnswer.accepted.bytes(cryptFlags: flags.cryptFlags))
        }
    }

    /// 16 bytes that differ each time and repeat from run to run (SplitMix64 of a counter).
    func nextChallenge() -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<2 {
            challenges &+= 1
            var z = challenges &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            out += (0..<8).map { UInt8(truncatingIfNeeded: z >> (8 * $0)) }
        }
        return out
    }
}

extension HuamiAuthKey {
    /// The simulated band's key unless told otherwise: `00112233445566778899aabbccddeeff`. It is
    /// no secret (documented in docs/testing.md), which is why it may appear in tests and journeys.
    public static let simulatorDefault = try! HuamiAuthKey(bytes: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                                                  0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
}
