import Foundation
import TSModels

/// Prints a dialect's decoded frames for `protocol decode`, as text or JSON lines.
struct DecodePrinter {
    let json: Bool
    let dialect: Dialect
    /// For pasted bytes whose way was not given: the way they parse as, in every JSON object.
    var direction: String?
    private(set) var frames = 0
    private let encoder = JSONCoding.encoder(iso8601Dates: true)

    init(json: Bool, dialect: Dialect) {
        self.json = json
        self.dialect = dialect
    }

    /// `context`, for frames from a capture: which way the bytes went ("write" central → watch,
    /// "notification" and "read" watch → central), over which pair or characteristic, on which
    /// connection, and when (seconds into the capture).
    struct Context {
        var direction: String
        var connection: String
        var channel: CaptureChannel = .main
        var time: Double

        var text: String {
            let way = direction == "write" ? " (central → watch" : direction == "read" ? " (read, watch → central" : " (watch → central"
            if let characteristic = channel.characteristic { return way + ", \(Self.short(characteristic.uuid)))" }
            return way + (channel == .second ? ", second pair)" : ")")
        }

        /// A UUID on the Bluetooth base by its 4 digits, another by its first 8.
        static func short(_ uuid: String) -> String {
            uuid.hasPrefix("0000") && uuid.hasSuffix("-0000-1000-8000-00805f9b34fb") ? String(uuid.prefix(8).dropFirst(4)) : String(uuid.prefix(8))
        }
        var fields: [String: any Encodable] {
            var fields: [String: any Encodable] = ["direction": direction, "connection": connection, "time": (time * 1000).rounded() / 1000]
            if channel != .main { fields["channel"] = channel.rawValue }
            return fields
        }
    }

    mutating func print(_ frame: DecodedFrame, context: Context? = nil) throws {
        var object: [String: any Encodable] = ["type": frame.verdict.rawValue, "dialect": dialect.rawValue]
        for (key, value) in frame.fields { object[key] = value }
        if let meaning = frame.meaning { object["message"] = meaning }
        for (key, value) in context?.fields ?? [:] where object[key] == nil { object[key] = value }
        if let direction, object["direction"] == nil { object["direction"] = direction }
        let where_ = context?.text ?? ""
        if frame.isFrame { frames += 1 }
        if json {
            Swift.print(String(decoding: try encoder.encode(object.mapValues(AnyEncodable.init)), as: UTF8.self))
            return
        }
        switch frame.verdict {
        case .frame:
            Swift.print("frame \(frames)\(where_): \(frame.text)")
            if let meaning = frame.meaning { Swift.print("  " + String(decoding: try encoder.encode(AnyEncodable(value: meaning)), as: UTF8.self)) }
        case .invalidMessage: Swift.print("frame \(frames)\(where_): \(frame.text)")
        case .corruptFrame: Swift.print("corrupt frame\(where_): \(frame.text)")
        case .garbage: Swift.print("skipped \(frame.text)\(where_)")
        }
    }
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
