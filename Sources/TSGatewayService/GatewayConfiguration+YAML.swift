import Foundation
import TSModels
import TSSimulator
import Yams

/// Reading the configuration from its YAML file: every problem names its line.
extension GatewayConfiguration {
    /// Reads the file at `path`; a `dialect:` must be one of `dialects`.
    public static func load(path: String, dialects: [DialectTerms]) throws(ConfigurationError) -> GatewayConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(file: path, line: nil, message: "cannot read the file (\((error as NSError).localizedDescription)); create it from udev/config.example.yaml")
        }
        return try parse(text, file: path, dialects: dialects)
    }

    /// Reads `text` as the file `file`; a `dialect:` must be one of `dialects`.
    public static func parse(_ text: String, file: String, dialects: [DialectTerms]) throws(ConfigurationError) -> GatewayConfiguration {
        do throws(ConfigurationError) {
            return try compose(text, file: file, dialects: dialects)
        } catch {
            // libyaml moves to the line after the last one at the end of the file; the problem is on the last.
            var error = error
            let lastLine = max(1, text.utf8.count { $0 == 0x0A } + (text.utf8.last.map { $0 == 0x0A ? 0 : 1 } ?? 0))
            error.line = error.line.map { min($0, lastLine) }
            throw error
        }
    }

    private static func compose(_ text: String, file: String, dialects: [DialectTerms]) throws(ConfigurationError) -> GatewayConfiguration {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw ConfigurationError(yaml: error, file: file)
        } catch {
            throw ConfigurationError(file: file, line: nil, message: "not valid YAML: \(error)")
        }
        guard let root, case let .mapping(top) = root else {
            throw ConfigurationError(file: file, line: root?.mark?.line ?? 1, message: "the file must be a mapping of keys such as `watches:` (see udev/config.example.yaml)")
        }
        var reader = Reader(file: file, dialects: dialects)
        return try reader.configuration(top, at: root)
    }
}

/// A configuration problem, with the line it is on.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var message: String

    public init(file: String, line: Int?, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    init(yaml error: YamlError, file: String) {
        self.file = file
        switch error {
        case let .scanner(context, problem, mark, _):
            line = mark.line
            message = "not valid YAML: \(problem)\(context.map { " \($0.text)" } ?? "") (column \(mark.column))"
        case let .parser(context, problem, mark, _):
            line = mark.line
            message = "not valid YAML: \(problem)\(context.map { " \($0.text)" } ?? "") (column \(mark.column))"
        case let .composer(context, problem, mark, _):
            line = mark.line
            message = "not valid YAML: \(problem)\(context.map { " \($0.text)" } ?? "") (column \(mark.column))"
        case let .duplicatedKeysInMapping(duplicates, context):
            line = context.mark.line
            message = "\(duplicates.map { "\"\($0)\"" }.joined(separator: ", ")) is given more than once (first on this line); keep one"
        default:
            line = nil
            message = "not valid YAML: \(error)"
        }
    }

    public var description: String {
        "\(file)\(line.map { ":\($0)" } ?? ""): \(message)"
    }
}

private struct Reader {
    let file: String
    /// The dialects a `dialect:` may name, with the pairing secret each takes (`auth-code:`, …).
    let dialects: [DialectTerms]

    func fail(_ node: Node?, _ message: String) -> ConfigurationError {
        ConfigurationError(file: file, line: node?.mark?.line, message: message)
    }

    /// The pairs of a mapping, refusing keys that are unknown or repeated.
    func pairs(_ mapping: Node.Mapping, allowed: [String], what: String) throws(ConfigurationError) -> [String: (key: Node, value: Node)] {
        var seen: [String: (key: Node, value: Node)] = [:]
        for (key, value) in mapping {
            guard let name = key.string else { throw fail(key, "\(what) keys must be plain words") }
            guard allowed.contains(name) else {
                let hint = allowed.first { $0.replacingOccurrences(of: "-", with: "_") == name || $0.replacingOccurrences(of: "-", with: "") == name.lowercased() }
                throw fail(key, "unknown key \"\(name)\" in \(what)" + (hint.map { "; did you mean \"\($0)\"?" } ?? "; known keys: \(allowed.joined(separator: ", "))"))
            }
            guard seen[name] == nil else { throw fail(key, "\"\(name)\" appears twice in \(what)") }
            seen[name] = (key, value)
        }
        return seen
    }

    func string(_ node: Node, _ key: String) throws(ConfigurationError) -> String {
        guard case let .scalar(scalar) = node, !scalar.string.isEmpty else { throw fail(node, "\(key) must be a non-empty text value") }
        return scalar.string
    }

    func integer(_ node: Node, _ key: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard case .scalar = node, let value = Int(node.string ?? "") else { throw fail(node, "\(key) must be a whole number, got \"\(node.string ?? "a list or mapping")\"") }
        guard range.contains(value) else { throw fail(node, "\(key) must be \(range.lowerBound)…\(range.upperBound), got \(value)") }
        return value
    }

    func bool(_ node: Node, _ key: String) throws(ConfigurationError) -> Bool {
        switch node.string?.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw fail(node, "\(key) must be true or false, got \"\(node.string ?? "a list or mapping")\"")
        }
    }

    func duration(_ node: Node, _ key: String, minimum: Duration, allowZero: Bool = false) throws(ConfigurationError) -> Duration {
        let text = try string(node, key).trimmingCharacters(in: .whitespaces)
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        guard let (suffix, factor) = units.first(where: { text.hasSuffix($0.0) && Int64(text.dropLast($0.0.count)) != nil }),
              let count = Int64(text.dropLast(suffix.count)), count >= 0, count <= 3650 * 86_400_000 / factor
        else { throw fail(node, "\(key) \"\(text)\" is not a duration such as 500ms, 90s, 15m, 1h or 1d") }
        let value = Duration.milliseconds(count * factor)
        if value == .zero && allowZero { return value }
        guard value >= minimum else { throw fail(node, "\(key) must be at least \(Self.describe(minimum)), got \(text)") }
        return value
    }

    static func describe(_ duration: Duration) -> String {
        let milliseconds = Int64(duration / .milliseconds(1))
        if milliseconds % 1000 != 0 { return "\(milliseconds)ms" }
        let seconds = milliseconds / 1000
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }

    mutating func configuration(_ top: Node.Mapping, at root: Node) throws(ConfigurationError) -> GatewayConfiguration {
        let keys = ["database", "bus", "time-zone", "sync-interval", "time-sync-interval", "battery-interval", "first-sync-days",
                    "heart-rate-retention", "reconnect-min", "reconnect-max", "statistics-rule", "watches", "upload", "mqtt", "report"]
        let entries = try pairs(top, allowed: keys, what: "the configuration")
        var configuration = GatewayConfiguration(database: GatewayConfiguration.defaultDatabase)
        if let node = entries["database"]?.value {
            let path = try string(node, "database")
            guard path.hasPrefix("/") else { throw fail(node, "database must be an absolute path, got \"\(path)\"") }
            configuration.database = path
        }
        if let node = entries["bus"]?.value {
            let text = try string(node, "bus")
            guard let bus = GatewayConfiguration.BusKind(rawValue: text) else { throw fail(node, "bus must be system or session, got \"\(text)\"") }
            configuration.bus = bus
        }
        if let node = entries["time-zone"]?.value {
            let name = try string(node, "time-zone")
            guard let zone = TimeZone(identifier: name) else { throw fail(node, "time-zone \"\(name)\" is unknown; use an IANA name such as Europe/Berlin") }
            configuration.timeZone = zone
        }
        if let node = entries["sync-interval"]?.value { configuration.syncInterval = try duration(node, "sync-interval", minimum: .seconds(60)) }
        if let node = entries["time-sync-interval"]?.value { configuration.timeSyncInterval = try duration(node, "time-sync-interval", minimum: .seconds(60)) }
        if let node = entries["battery-interval"]?.value { configuration.batteryInterval = try duration(node, "battery-interval", minimum: .seconds(10)) }
        if let node = entries["first-sync-days"]?.value { configuration.firstSyncDays = try integer(node, "first-sync-days", 1...3650) }
        if let node = entries["heart-rate-retention"]?.value { configuration.heartRateRetention = try duration(node, "heart-rate-retention", minimum: .seconds(3600)) }
        if let node = entries["reconnect-min"]?.value { configuration.reconnectMinimum = try duration(node, "reconnect-min", minimum: .milliseconds(10)) }
        if let node = entries["reconnect-max"]?.value {
            configuration.reconnectMaximum = try duration(node, "reconnect-max", minimum: .milliseconds(10))
            guard configuration.reconnectMaximum >= configuration.reconnectMinimum else {
                throw fail(node, "reconnect-max must not be below reconnect-min")
            }
        }
        if let node = entries["statistics-rule"]?.value {
            let number = try integer(node, "statistics-rule", 0...3)
            configuration.statisticsRule = StatisticsRule(rawValue: UInt8(number))
        }
        if let node = entries["upload"]?.value { configuration.upload = try upload(node) }
        if let node = entries["mqtt"]?.value { configuration.mqtt = try mqtt(node) }
        if let node = entries["report"]?.value { configuration.report = try report(node) }
        guard let watchesNode = entries["watches"]?.value else {
            throw fail(root, "no `watches:` list; add one entry per watch, e.g. `watches: [{address: AA:BB:CC:DD:EE:FF, name: bedroom}]`")
        }
        guard case let .sequence(list) = watchesNode, !list.isEmpty else {
            throw fail(watchesNode, "watches must be a list with at least one entry (`- address: AA:BB:CC:DD:EE:FF`)")
        }
        var simulatedCount = 0
        for node in list {
            let watch = try self.watch(node, simulatedIndex: simulatedCount + 1)
            if watch.simulated { simulatedCount += 1 }
            if configuration.watches.contains(where: { $0.address == watch.address }) {
                throw fail(node, "the watch \(watch.address) is listed twice")
            }
            if let name = watch.name, configuration.watches.contains(where: { $0.name == name }) {
                throw fail(node, "two watches are named \"\(name)\"; names must be unique")
            }
            configuration.watches.append(watch)
        }
        return configuration
    }

    func mapping(_ node: Node, _ key: String, example: String) throws(ConfigurationError) -> Node.Mapping {
        guard case let .mapping(mapping) = node else { throw fail(node, "\(key) must be a mapping, e.g. `\(key):` then `  \(example)`") }
        return mapping
    }

    func upload(_ node: Node) throws(ConfigurationError) -> GatewayConfiguration.UploadSettings {
        let entries = try pairs(try mapping(node, "upload", example: "endpoint: https://example.org/api/v1/sleep"),
                                allowed: ["endpoint", "token", "interval", "timeout", "retry-min", "retry-max"], what: "upload")
        guard let endpointNode = entries["endpoint"]?.value else { throw fail(node, "upload needs `endpoint: https://…/api/v1/sleep`") }
        let text = try string(endpointNode, "endpoint")
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw fail(endpointNode, "endpoint \"\(text)\" is not an http(s) URL such as https://example.org/api/v1/sleep")
        }
        var settings = GatewayConfiguration.UploadSettings(endpoint: url)
        if let node = entries["token"]?.value { settings.token = try string(node, "token") }
        if let node = entries["interval"]?.value { settings.interval = try duration(node, "interval", minimum: .milliseconds(100)) }
        if let node = entries["timeout"]?.value { settings.timeout = try duration(node, "timeout", minimum: .milliseconds(100)) }
        if let node = entries["retry-min"]?.value { settings.retryMinimum = try duration(node, "retry-min", minimum: .milliseconds(10)) }
        if let node = entries["retry-max"]?.value {
            settings.retryMaximum = try duration(node, "retry-max", minimum: .milliseconds(10))
            guard settings.retryMaximum >= settings.retryMinimum else { throw fail(node, "retry-max must not be below retry-min") }
        }
        return settings
    }

    func mqtt(_ node: Node) throws(ConfigurationError) -> GatewayConfiguration.MQTTSettings {
        let entries = try pairs(try mapping(node, "mqtt", example: "host: localhost"),
                                allowed: ["host", "port", "username", "password", "ca-file", "cert-file", "key-file", "topic-prefix",
                                          "gateway-id", "discovery-prefix", "discovery", "keepalive"], what: "mqtt")
        guard let hostNode = entries["host"]?.value else { throw fail(node, "mqtt needs `host: BROKER` (e.g. localhost)") }
        let gatewayId = try entries["gateway-id"].map { (pair) throws(ConfigurationError) in try topicWord(pair.value, "gateway-id") }
            ?? ProcessInfo.processInfo.hostName.split(separator: ".").first.map { String($0).filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } }
            ?? "gateway"
        var settings = GatewayConfiguration.MQTTSettings(host: try string(hostNode, "host"), gatewayId: gatewayId.isEmpty ? "gateway" : gatewayId)
        if let node = entries["port"]?.value { settings.port = try integer(node, "port", 1...65535) }
        if let node = entries["username"]?.value { settings.username = try string(node, "username") }
        if let node = entries["password"]?.value { settings.password = try string(node, "password") }
        if settings.password != nil && settings.username == nil { throw fail(entries["password"]?.key, "password needs a username") }
        for (key, path) in [("ca-file", \GatewayConfiguration.MQTTSettings.caFile), ("cert-file", \.certFile), ("key-file", \.keyFile)] {
            guard let node = entries[key]?.value else { continue }
            let file = try string(node, key)
            guard FileManager.default.isReadableFile(atPath: file) else { throw fail(node, "\(key) \(file) is not a readable file") }
            settings[keyPath: path] = file
        }
        if (settings.certFile == nil) != (settings.keyFile == nil) { throw fail(node, "cert-file and key-file go together") }
        if settings.certFile != nil && settings.caFile == nil { throw fail(node, "a client certificate needs ca-file (TLS) too") }
        if let node = entries["topic-prefix"]?.value {
            let prefix = try string(node, "topic-prefix")
            guard !prefix.contains("+"), !prefix.contains("#"), !prefix.hasPrefix("/"), !prefix.hasSuffix("/") else {
                throw fail(node, "topic-prefix \"\(prefix)\" must not contain + or # nor start or end with /")
            }
            settings.topicPrefix = prefix
        }
        if let node = entries["discovery-prefix"]?.value { settings.discoveryPrefix = try topicWord(node, "discovery-prefix") }
        if let node = entries["discovery"]?.value, try !bool(node, "discovery") { settings.discoveryPrefix = nil }
        if let node = entries["keepalive"]?.value { settings.keepAlive = try integer(node, "keepalive", 5...3600) }
        return settings
    }

    func report(_ node: Node) throws(ConfigurationError) -> GatewayConfiguration.ReportSettings {
        let entries = try pairs(try mapping(node, "report", example: "directory: /var/lib/tsgateway/reports"),
                                allowed: ["directory", "days", "every", "mode"], what: "report")
        guard let directoryNode = entries["directory"]?.value else { throw fail(node, "report needs `directory: /var/lib/tsgateway/reports` (an absolute path)") }
        let directory = try string(directoryNode, "directory")
        guard directory.hasPrefix("/") else { throw fail(directoryNode, "report directory must be an absolute path, got \"\(directory)\"") }
        var settings = GatewayConfiguration.ReportSettings(directory: directory)
        if let node = entries["days"]?.value { settings.days = try integer(node, "days", 1...366) }
        if let node = entries["every"]?.value { settings.every = try duration(node, "every", minimum: .seconds(60)) }
        if let node = entries["mode"]?.value {
            // YAML 1.1 reads 0644 as an octal number and 644 as decimal: take the digits as written.
            let text = try string(node, "mode")
            let modes = ["0600": 0o600, "600": 0o600, "0640": 0o640, "640": 0o640, "0644": 0o644, "644": 0o644]
            guard let mode = modes[text] else {
                throw fail(node, "report mode must be 0600 (owner only, the default), 0640 (and the group) or 0644 (everyone), got \"\(text)\"")
            }
            settings.mode = mode
        }
        return settings
    }

    func topicWord(_ node: Node, _ key: String) throws(ConfigurationError) -> String {
        let text = try string(node, key)
        guard text.range(of: "^[A-Za-z0-9_-]+$", options: .regularExpression) != nil else {
            throw fail(node, "\(key) \"\(text)\" may hold only letters, digits, - and _")
        }
        return text
    }

    func watch(_ node: Node, simulatedIndex: Int) throws(ConfigurationError) -> GatewayConfiguration.WatchEntry {
        guard case let .mapping(mapping) = node else {
            throw fail(node, "each watch must be a mapping such as `- address: AA:BB:CC:DD:EE:FF`")
        }
        let secretKeys = Array(Set(dialects.compactMap(\.credential?.key))).sorted()
        let entries = try pairs(mapping, allowed: ["address", "name", "adapter", "simulated", "seed", "history-days", "packet-delay", "pause-after-packets", "resume-file", "disconnect-every", "live-stage-interval", "heart-rate-interval", "standard-services", "protocol-v1", "protocol", "smart-wake", "dialect", "ground-truth"] + secretKeys, what: "a watch")
        let simulated = try entries["simulated"].map { (pair) throws(ConfigurationError) in try bool(pair.value, "simulated") } ?? false
        let address: WatchID
        if let node = entries["address"]?.value {
            let text = try string(node, "address")
            guard let parsed = WatchID(text) else {
                throw fail(node, "address \"\(text)\" is not a Bluetooth address such as AA:BB:CC:DD:EE:FF (find it with `tsgateway scan`)")
            }
            address = parsed
        } else if simulated {
            guard let index = UInt8(exactly: simulatedIndex), let generated = BluetoothAddress(littleEndian: [index, 0x54, 0x00, 0x5E, 0x00, 0x00]) else {
                throw fail(node, "more than 255 simulated watches; give this one an `address: AA:BB:CC:DD:EE:FF`")
            }
            address = WatchID(generated)
        } else {
            throw fail(node, "this watch has no address; add `address: AA:BB:CC:DD:EE:FF` (or `simulated: true`)")
        }
        var watch = GatewayConfiguration.WatchEntry(address: address)
        watch.simulated = simulated
        if let node = entries["name"]?.value {
            let name = try string(node, "name")
            guard name.count <= 64, name.range(of: "^[A-Za-z0-9][A-Za-z0-9 ._-]*$", options: .regularExpression) != nil else {
                throw fail(node, "name \"\(name)\" must be 1–64 letters, digits, spaces, dots, dashes or underscores")
            }
            watch.name = name
        }
        if let node = entries["adapter"]?.value {
            let adapter = try string(node, "adapter")
            guard adapter.hasPrefix("hci"), Int(adapter.dropFirst(3)) != nil else { throw fail(node, "adapter must look like hci0, got \"\(adapter)\"") }
            watch.adapter = adapter
        }
        for key in ["seed", "history-days", "packet-delay", "pause-after-packets", "resume-file", "disconnect-every", "live-stage-interval", "heart-rate-interval", "standard-services", "protocol-v1", "protocol", "ground-truth"] where entries[key] != nil && !simulated {
            throw fail(entries[key]?.key, "\(key) applies only to a simulated watch (`simulated: true`)")
        }
        if let node = entries["seed"]?.value { watch.seed = UInt64(try integer(node, "seed", 0...Int.max)) }
        if let node = entries["history-days"]?.value { watch.historyDays = try integer(node, "history-days", 1...365) }
        if let node = entries["packet-delay"]?.value { watch.packetDelay = try duration(node, "packet-delay", minimum: .zero, allowZero: true) }
        if let node = entries["pause-after-packets"]?.value { watch.pauseAfterPackets = try integer(node, "pause-after-packets", 0...10_000_000) }
        if let node = entries["resume-file"]?.value {
            let path = try string(node, "resume-file")
            guard path.hasPrefix("/") else { throw fail(node, "resume-file must be an absolute path, got \"\(path)\"") }
            watch.resumeFile = path
        }
        if (watch.pauseAfterPackets == nil) != (watch.resumeFile == nil) {
            throw fail((entries["pause-after-packets"] ?? entries["resume-file"])?.key, "pause-after-packets and resume-file go together: the link pauses after that many packets until the file exists")
        }
        if let node = entries["disconnect-every"]?.value { watch.disconnectEvery = try integer(node, "disconnect-every", 10...10_000_000) }
        if let node = entries["live-stage-interval"]?.value { watch.liveStageInterval = try duration(node, "live-stage-interval", minimum: .milliseconds(10)) }
        if let node = entries["heart-rate-interval"]?.value { watch.heartRateInterval = try duration(node, "heart-rate-interval", minimum: .milliseconds(10)) }
        if let node = entries["standard-services"]?.value { watch.standardServices = try bool(node, "standard-services") }
        if let node = entries["protocol-v1"]?.value { watch.servesProtocolV1 = try bool(node, "protocol-v1") }
        if let node = entries["ground-truth"]?.value {
            let path = try string(node, "ground-truth")
            guard path.hasPrefix("/") else { throw fail(node, "ground-truth must be an absolute path, got \"\(path)\"") }
            watch.groundTruth = path
        }
        if !watch.servesProtocolV1 && !watch.standardServices {
            throw fail(entries["protocol-v1"]?.key, "a simulated watch needs protocol-v1 or standard-services (or both)")
        }
        if let node = entries["dialect"]?.value {
            let name = Dialect(rawValue: try string(node, "dialect"))
            guard dialects.contains(where: { $0.name == name }) else { throw fail(node, "dialect: \(DialectError(name: name, known: dialects.map(\.name)))") }
            watch.dialect = name
        }
        for key in secretKeys {
            guard let pair = entries[key] else { continue }
            if let misplaced = DialectTerms.misplaced(key: key, for: watch.dialect, among: dialects, option: { "`dialect: \($0)`" }) {
                throw fail(pair.key, misplaced)
            }
            let text = try string(pair.value, key)
            guard let credential = dialects.first(where: { $0.name == watch.dialect })?.credential else { continue }
            switch credential.secret(text) {
            case let .success(secret): watch.pairingSecret = secret
            case let .failure(error): throw fail(pair.value, error.description)
            }
        }
        if let node = entries["smart-wake"]?.value {
            guard case let .mapping(windows) = node else {
                throw fail(node, "smart-wake must map alarm slots to minutes before the alarm, such as `smart-wake: {0: 30}`")
            }
            var parsed: [Int: Int] = [:]
            for (slotNode, minutesNode) in windows {
                guard let slot = Int(slotNode.string ?? ""), (0...254).contains(slot) else {
                    throw fail(slotNode, "smart-wake: \"\(slotNode.string ?? "")\" is not an alarm slot (0–254; `tsgateway alarms get` shows them)")
                }
                parsed[slot] = try integer(minutesNode, "smart-wake window", 0...Alarm.maxGatewaySmartWindow)
            }
            watch.smartWake = parsed
        }
        if let node = entries["protocol"]?.value {
            let text = try string(node, "protocol")
            guard let spoken = SimulatedProtocol(text: text) else { throw fail(node, "protocol \"\(text)\" is not one the simulated watch speaks; write \(SimulatedProtocol.choices)") }
            watch.simulatedProtocol = spoken
        }
        return watch
    }
}
