import ArgumentParser
import Foundation
import TSModels

struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Read and change the watch's automatic measurements.",
        discussion: """
            Types: heart-rate, spo2, blood-pressure, stress, temperature, sleep.

            Examples:
              tsgateway monitor get
              tsgateway monitor set heart-rate --enable --window 08:00-22:00 --interval 10 --alert-high 120 --alert-low 45
              tsgateway monitor set temperature --alert-high 38.0 --alert-low 35.5
            """,
        subcommands: [Get.self, Set.self]
    )

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the settings of one type, or of every type the watch has.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The monitor type (default: all).", transform: MonitorCommand.parseType)
        var type: MonitorType?
        @Flag(help: "Print JSON: {\"watch\": id, \"monitors\": [{type, schedule: {enabled, startMinute, endMinute, intervalMinutes}, alert: {enabled, upper, lower}}]}.")
        var json = false

        func run() async throws {
            let (watchId, configs) = try await WatchAccessor.run(connection) { watch in
                var types = type.map { [$0] } ?? []
                if type == nil { types = try await watch.info().capabilities.monitorTypes }
                var configs: [MonitorConfig] = []
                for type in types { configs.append(try await watch.monitorConfig(type)) }
                return (watch.watchId, configs)
            }
            if json {
                struct Output: Encodable { var watch: WatchID; var monitors: [MonitorConfig] }
                try JSONOutput.print(Output(watch: watchId, monitors: configs))
                return
            }
            var rows = [["type", "on", "window", "every", "alert", "high", "low", "unit"]]
            for config in configs {
                rows.append([config.type.name, config.schedule.enabled ? "yes" : "no",
                             MinuteOfDay.format(config.schedule.startMinute) + "-" + MinuteOfDay.format(config.schedule.endMinute),
                             "\(config.schedule.intervalMinutes) min", config.alert.enabled ? "yes" : "no",
                             MonitorCommand.formatLimit(config.alert.upper, config.type), MonitorCommand.formatLimit(config.alert.lower, config.type),
                             config.type.alertUnit.replacingOccurrences(of: "0.1 ", with: "")])
            }
            print(TextTable.render(rows))
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change the settings of one type; flags not given keep their value.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The monitor type.", transform: MonitorCommand.parseType)
        var type: MonitorType
        /// `--enable` or `--disable`; neither keeps the watch's setting.
        @Flag(exclusivity: .exclusive)
        var scheduledMeasurement: ScheduledMeasurement?
        @Option(help: ArgumentHelp("Daily window HH:MM-HH:MM (end after start; 24:00 allowed).", valueName: "start-end"))
        var window: String?
        @Option(help: "Minutes between measurements: a multiple of 5, 5…1440.")
        var interval: Int?
        @Option(help: "Alert above this value (°C for temperature).")
        var alertHigh: Double?
        @Option(help: "Alert below this value (°C for temperature).")
        var alertLow: Double?
        @Flag(inversion: .prefixedNo, help: "Switch alerts on or off (on by default when a limit is given).")
        var alert: Bool?

        func run() async throws {
            let window = try self.window.map(MonitorCommand.parseWindow)
            if let interval, interval < 5 || interval > 1440 || interval % 5 != 0 {
                throw CLIFailure("--interval \(interval): must be a multiple of 5 between 5 and 1440 minutes", status: .usage)
            }
            let high = try alertHigh.map { try MonitorCommand.wireLimit($0, type, flag: "--alert-high") }
            let low = try alertLow.map { try MonitorCommand.wireLimit($0, type, flag: "--alert-low") }
            let config = try await WatchAccessor.run(connection) { watch in
                var config = try await watch.monitorConfig(type)
                if let scheduledMeasurement { config.schedule.enabled = scheduledMeasurement == .enable }
                if let window { (config.schedule.startMinute, config.schedule.endMinute) = window }
                if let interval { config.schedule.intervalMinutes = UInt16(interval) }
                if let high { config.alert.upper = high }
                if let low { config.alert.lower = low }
                if let alert { config.alert.enabled = alert } else if high != nil || low != nil { config.alert.enabled = true }
                try await watch.setMonitorConfig(config)
                return config
            }
            print("\(config.type.name): \(config.schedule.enabled ? "on" : "off"), \(MinuteOfDay.format(config.schedule.startMinute))-\(MinuteOfDay.format(config.schedule.endMinute)) every \(config.schedule.intervalMinutes) min, alert \(config.alert.enabled ? "\(MonitorCommand.formatLimit(config.alert.lower, type))…\(MonitorCommand.formatLimit(config.alert.upper, type))" : "off")")
        }
    }

    /// The two flags that switch a type's scheduled measurement: `--enable`, `--disable`.
    enum ScheduledMeasurement: String, EnumerableFlag {
        case enable, disable

        static func help(for value: Self) -> ArgumentHelp? {
            switch value {
            case .enable: "Switch the scheduled measurement on."
            case .disable: "Switch the scheduled measurement off."
            }
        }
    }

    static func parseType(_ text: String) throws -> MonitorType {
        guard let type = MonitorType(name: text) else {
            throw ValidationError("unknown monitor type \"\(text)\"; use heart-rate, spo2, blood-pressure, stress, temperature or sleep")
        }
        return type
    }

    static func parseWindow(_ text: String) throws -> (UInt16, UInt16) {
        let parts = text.split(separator: "-")
        guard parts.count == 2 else { throw CLIFailure("--window \"\(text)\" is not HH:MM-HH:MM", status: .usage) }
        func minute(_ part: Substring) throws -> UInt16 {
            if part == "24:00" { return 1440 }
            let (hour, minute) = try AlarmText.parseTime(String(part))
            return UInt16(hour) * 60 + UInt16(minute)
        }
        let start = try minute(parts[0]), end = try minute(parts[1])
        guard end > start else {
            throw CLIFailure("--window \(text): the end must be after the start; the watch's schedule cannot wrap past midnight (use e.g. 00:00-07:00)", status: .usage)
        }
        return (start, end)
    }

    /// The wire value of an alert limit: tenths of a degree for temperature, whole units otherwise.
    static func wireLimit(_ value: Double, _ type: MonitorType, flag: String) throws -> Int16 {
        let scaled = type == .temperature ? (value * 10).rounded() : value
        guard type == .temperature || value == value.rounded() else {
            throw CLIFailure("\(flag) \(value): \(type.name) limits are whole numbers (\(type.alertUnit))", status: .usage)
        }
        guard let wire = Int16(exactly: scaled) else { throw CLIFailure("\(flag) \(value) is out of range", status: .usage) }
        return wire
    }

    static func formatLimit(_ value: Int16, _ type: MonitorType) -> String {
        type == .temperature ? String(format: "%.1f", Double(value) / 10) : String(value)
    }
}
