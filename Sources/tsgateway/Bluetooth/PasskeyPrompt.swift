import Foundation
import Synchronization

/// The passkey a watch shows while it pairs (BlueZ's Agent1.RequestPasskey; six digits on a watch that
/// displays one): the one `pair --passkey` gave, or one typed on standard input after a prompt on
/// standard error (a script may write it there once the watch shows it). Never logged.
final class PasskeyPrompt: Sendable {
    let given: UInt32?
    private let problem = Mutex<String?>(nil)

    init(given: UInt32?) { self.given = given }

    /// One to six digits as the passkey; nil for anything else.
    static func parse(_ text: String) -> UInt32? {
        let digits = text.trimmingCharacters(in: .whitespaces)
        guard (1...6).contains(digits.count), digits.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        return UInt32(digits)
    }

    /// Why no passkey could be given, when the watch asked and none was (for the pair's error).
    var failure: String? { problem.withLock { $0 } }

    func passkey() async throws -> UInt32 {
        if let given { return given }
        for _ in 1...3 {
            FileHandle.standardError.write(Data("tsgateway: the watch shows a passkey: type its six digits and press Enter: ".utf8))
            guard let line = await Self.readLine() else {
                return try refuse("the watch asked for the passkey it shows and standard input ended before one was typed; give it with --passkey, or run pair on a terminal")
            }
            if let passkey = Self.parse(line) { return passkey }
            FileHandle.standardError.write(Data("tsgateway: that is not the six digits the watch shows\n".utf8))
        }
        return try refuse("three entries were not the six digits the watch shows; run pair again")
    }

    private func refuse(_ reason: String) throws -> UInt32 {
        problem.withLock { $0 = reason }
        throw PasskeyNotGiven(reason: reason)
    }

    /// One line of standard input, read on a thread of its own so that no task waits blocked on it; nil at its end.
    static func readLine() async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Swift.readLine(strippingNewline: true)) }
        }
    }
}

struct PasskeyNotGiven: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
