/// A JSON decoding error in words: what was wrong and where (`alarms[2].time`).
public enum JSONErrorText {
    public static func describe(_ error: any Error) -> String {
        guard let decodingError = error as? DecodingError else { return String(describing: error) }
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty ? "top level" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch decodingError {
        case let .dataCorrupted(context): return "\(context.debugDescription) at \(path(context.codingPath))"
        case let .keyNotFound(key, context): return "missing key \"\(key.stringValue)\" at \(path(context.codingPath))"
        case let .typeMismatch(type, context): return "expected \(type) at \(path(context.codingPath))"
        case let .valueNotFound(type, context): return "missing \(type) value at \(path(context.codingPath))"
        @unknown default: return String(describing: error)
        }
    }
}
