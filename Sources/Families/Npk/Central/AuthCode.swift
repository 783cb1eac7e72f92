/// The code a watch shows for pairing, as the wearer reads or scans it (TopStep NPK: the
/// `authCode` of the QR code on the watch's screen). Its format is not published: the gateway
/// takes 1…128 bytes of UTF-8 without spaces or control characters and sends them unchanged.
public struct AuthCode: Sendable, Hashable, CustomStringConvertible {
    public static let maxBytes = 128
    public let text: String

    /// Nil when `text` cannot be a code; `problem(_:)` says why.
    public init?(_ text: String) {
        guard Self.problem(text) == nil else { return nil }
        self.text = text
    }

    /// What is wrong with `text` as a code, in words for the person who typed it; nil: nothing.
    public static func problem(_ text: String) -> String? {
        if text.isEmpty { return "the auth code is empty" }
        if text.utf8.count > maxBytes { return "the auth code is \(text.utf8.count) bytes, limit \(maxBytes)" }
        if text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
            return "the auth code holds a space or a control character; give it as the watch shows it"
        }
        return nil
    }

    /// Not the code itself: it is a credential.
    public var description: String { "an auth code of \(text.utf8.count) bytes" }
}
