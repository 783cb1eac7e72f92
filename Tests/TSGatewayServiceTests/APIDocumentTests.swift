import Foundation
@testable import TSGatewayAPI
import TSGatewayService
import TSModels
import TSWatchService
import Testing

/// protocol-spec/dbus-api.md's JSON examples are what the encoders write: each example decodes
/// into its type and encodes back to the same document (no key missing, renamed or extra).
@Suite("D-Bus API document")
struct APIDocumentTests {
    static let document: String = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("protocol-spec/dbus-api.md").path
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }()

    /// `<!-- json: KIND -->` followed by a ```json block.
    static func examples() -> [(kind: String, json: String)] {
        let pattern = try? NSRegularExpression(pattern: #"<!-- json: (\w+) -->\s*```json\n(.*?)```"#, options: [.dotMatchesLineSeparators])
        let text = document as NSString
        return (pattern?.matches(in: document, range: NSRange(location: 0, length: text.length)) ?? []).map {
            (text.substring(with: $0.range(at: 1)), text.substring(with: $0.range(at: 2)))
        }
    }

    static func reencoded(_ kind: String, _ json: String) throws -> String {
        switch kind {
        case "event": return try GatewayBusAPI.json(try GatewayEvent.decode(json: json))
        case "alarms": return try GatewayBusAPI.json(try AlarmJSON.table(from: json.utf8))
        case "monitor": return try GatewayBusAPI.json(try GatewayBusAPI.decode(MonitorConfig.self, json: json))
        case "dailySleep": return try GatewayBusAPI.json(try GatewayBusAPI.decode(DailySleepReport.self, json: json))
        case "session": return try GatewayBusAPI.json(try GatewayBusAPI.decode(SessionReport.self, json: json))
        case "heartRateSummary": return try GatewayBusAPI.json(try GatewayBusAPI.decode(HeartRateSummary.self, json: json))
        default: throw CategorizedFailure(.invalidInput, "dbus-api.md names an example kind \"\(kind)\" this test does not know")
        }
    }

    @Test("the document has an example of every JSON document the API carries")
    func everyKindHasAnExample() {
        #expect(Set(Self.examples().map(\.kind)) == ["event", "alarms", "monitor", "dailySleep", "heartRateSummary", "session"])
    }

    @Test("each example decodes and encodes back to itself", arguments: examples().indices)
    func exampleMatchesTheEncoder(index: Int) throws {
        let (kind, json) = Self.examples()[index]
        let written = try Self.reencoded(kind, json)
        let example = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let encoded = try JSONSerialization.jsonObject(with: Data(written.utf8))
        #expect(NSArray(object: example).isEqual(NSArray(object: encoded)), "\(kind) example:\n\(json)\nencodes as:\n\(written)")
    }
}
