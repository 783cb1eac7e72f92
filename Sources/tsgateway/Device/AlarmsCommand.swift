import ArgumentParser
import Foundation
import TSDevice
import TSModels

struct AlarmsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alarms",
        abstract: "Read and change the watch's alarm table.",
        discussion: """
            Times are HH:MM (24-hour). Repeat days: once, workdays, weekends, everyday, or a list \
            such as mon,wed,fri. --smart MIN lets the watch ring up to MIN minutes early, at the \
            first light or awake stage of your sleep (smart wake; `tsgateway info` shows the \
            watch's limit; a watch of protocol v1 has none).

            Examples:
              tsgateway alarms get
              tsgateway alarms set 07:00 --repeat workdays --label Work
              tsgateway alarms set 07:00 --repeat workdays --smart 30
              tsgateway alarms add 09:30 --repeat weekends --label Weekend --snooze
              tsgateway alarms add 06:15 --smart 20 --label Early
              tsgateway alarms disable 1
            """,
        subcommands: [Get.self, Set.self, Add.self, Remove.self, Enable.self, Disable.self, Watch.self]
    )

    /// One alarm described by command-line flags.
    struct AlarmFlags: ParsableArguments {
        @Option(help: "Repeat days: once, workdays, weekends, everyday, or e.g. mon,wed,fri.")
        var `repeat`: String = "once"
        @Option(help: "Label shown on the watch (at most 32 bytes of UTF-8; a Garmin watch shows only its own: wake up, workout, reminder, appointment, training, class, meditate, bedtime).")
        var label: String = ""
        @Option(help: "Remark (the watch's remark limit applies; see `tsgateway info`).")
        var remark: String = ""
        @Flag(help: "Allow snoozing.")
        var snooze = false
        @Flag(help: "Store the alarm switched off.")
        var disabled = false
        @Option(help: ArgumentHelp("Smart wake: ring up to this many minutes early, at the first light or awake stage (1…255; the watch's limit applies; 0 = off).", valueName: "minutes"))
        var smart: Int = 0

        func alarm(slot: UInt8, time: String) throws -> Alarm {
            let (hour, minute) = try AlarmText.parseTime(time)
            return Alarm(slot: slot, label: label, hour: hour, minute: minute, isEnabled: !disabled,
                         snoozeAllowed: snooze, remark: remark, repeatDays: try AlarmText.parseRepeat(self.repeat),
                         smartWindow: try AlarmText.checkSmartWindow(smart))
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show every alarm on the watch.")
        @OptionGroup var connection: ConnectionOptions
        @Flag(help: "Print JSON: {\"watch\": id, \"alarms\": [{slot, time, enabled, snooze, repeat, label, remark, smart}]} (smart: the smart-wake window in minutes, left out when off).")
        var json = false

        func run() async throws {
            let (watchId, alarms) = try await WatchAccessor.run(connection) { watch in (watch.watchId, try await watch.alarms()) }
            try printAlarms(alarms, json: json, watchId: watchId)
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the whole alarm table: with one alarm from flags, or with a JSON file.",
            discussion: "The file holds a JSON array of alarms as `alarms get --json` prints them (or that whole object); [] clears every alarm.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The alarm time, HH:MM (not with --file).")
        var time: String?
        @OptionGroup var flags: AlarmFlags
        @Option(help: ArgumentHelp("Read the table from a JSON file (- for standard input).", valueName: "file"))
        var file: String?

        func validate() throws {
            if (time == nil) == (file == nil) { throw ValidationError("give either a time (HH:MM) or --file FILE") }
        }

        func run() async throws {
            let table = try file.map(AlarmFile.read) ?? [flags.alarm(slot: 0, time: time ?? "")]
            try await WatchAccessor.run(connection) { watch in try await watch.setAlarms(table) }
            print("set \(table.count) alarm\(table.count == 1 ? "" : "s")")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add one alarm, keeping the others.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The alarm time, HH:MM.")
        var time: String
        @OptionGroup var flags: AlarmFlags
        @Option(help: "Slot 0…255 (default: the lowest free one).")
        var slot: UInt8?

        func run() async throws {
            _ = try AlarmText.parseTime(time)
            let added = try await editTable(connection) { alarms, info in
                if let slot, alarms.contains(where: { $0.slot == slot }) {
                    throw CLIFailure("slot \(slot) is taken; remove it first or pick another slot", status: .dataError)
                }
                guard alarms.count < info.capabilities.maxAlarms else {
                    throw CLIFailure("the watch already holds \(alarms.count) alarms, its limit; remove one first", status: .dataError)
                }
                let free = slot ?? (0...UInt8.max).first { candidate in !alarms.contains { $0.slot == candidate } } ?? 0
                let alarm = try flags.alarm(slot: free, time: time)
                alarms.append(alarm)
                return alarm
            }
            print("added alarm in slot \(added.slot) at \(AlarmText.formatTime(hour: added.hour, minute: added.minute))")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the alarm in a slot.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The slot (see `alarms get`).")
        var slot: UInt8

        func run() async throws {
            try await editTable(connection) { alarms, _ in
                guard let index = alarms.firstIndex(where: { $0.slot == slot }) else { throw noSuchSlot(slot, alarms) }
                alarms.remove(at: index)
            }
            print("removed the alarm in slot \(slot)")
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Switch on the alarm in a slot.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The slot (see `alarms get`).")
        var slot: UInt8

        func run() async throws {
            try await setEnabled(true, slot: slot, connection)
            print("enabled the alarm in slot \(slot)")
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Switch off the alarm in a slot.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The slot (see `alarms get`).")
        var slot: UInt8

        func run() async throws {
            try await setEnabled(false, slot: slot, connection)
            print("disabled the alarm in slot \(slot)")
        }
    }
}

func printAlarms(_ alarms: [Alarm], json: Bool, watchId: WatchID) throws {
    if json {
        struct Output: Encodable { var watch: WatchID; var alarms: [Alarm] }
        try JSONOutput.print(Output(watch: watchId, alarms: alarms.sorted { $0.slot < $1.slot }))
    } else {
        print(AlarmText.table(alarms))
    }
}

private func noSuchSlot(_ slot: UInt8, _ alarms: [Alarm]) -> CLIFailure {
    let used = alarms.map { String($0.slot) }.joined(separator: ", ")
    return CLIFailure("no alarm in slot \(slot)" + (used.isEmpty ? "; the watch has no alarms" : "; used slots: \(used)"), status: .dataError)
}

private func setEnabled(_ enabled: Bool, slot: UInt8, _ connection: ConnectionOptions) async throws {
    try await editTable(connection) { alarms, _ in
        guard let index = alarms.firstIndex(where: { $0.slot == slot }) else { throw noSuchSlot(slot, alarms) }
        alarms[index].isEnabled = enabled
    }
}

/// Read–modify–write of the table.
@discardableResult
private func editTable<T>(_ connection: ConnectionOptions, _ edit: (inout [Alarm], DeviceInfo) throws -> T) async throws -> T {
    try await WatchAccessor.run(connection) { watch in
        let info = try await watch.info()
        var alarms = try await watch.alarms()
        let result = try edit(&alarms, info)
        try await watch.setAlarms(alarms)
        return result
    }
}

enum AlarmFile {
    static func read(_ path: String) throws -> [Alarm] {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw CLIFailure("cannot read alarm file \(path): no such readable file", status: .noInput)
            }
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        do {
            return try AlarmJSON.table(from: data)
        } catch {
            throw CLIFailure("alarm file \(path): \(error.message)", status: .dataError)
        }
    }
}

extension AlarmsCommand {
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "watch",
            abstract: "Print each change made on the watch itself, until interrupted.",
            discussion: """
                It says "watching for alarm changes made on the watch" once it listens (on stderr with \
                --json, so standard output stays one JSON object per change): an edit made after that \
                line is seen. With --simulate, the simulated watch edits its first alarm every 2 \
                seconds so there is something to see.

                  tsgateway alarms watch
                  tsgateway alarms watch --json --count 1
                """)
        @OptionGroup var connection: ConnectionOptions
        @Flag(help: "Print one JSON object per change: {\"origin\", \"alarms\": [...]}.")
        var json = false
        @Option(help: "Stop after this many changes.")
        var count: Int?

        func validate() throws {
            if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        }

        func run() async throws {
            try await WatchAccessor.run(connection) { watch in
                let changesUntilLoss = try await watch.watchSideAlarmChanges()
                // Once subscribed, so a script knows an edit made from now on is seen; with --json on
                // stderr, keeping stdout one JSON object per change.
                let listening = "watching for alarm changes made on the watch (Ctrl-C to stop)\n"
                if json { FileHandle.standardError.write(Data(listening.utf8)) } else { print(listening, terminator: ""); fflush(nil) }
                var seen = 0
                for try await change in changesUntilLoss {
                    if json {
                        struct Output: Encodable { var origin: AlarmTableOrigin; var alarms: [Alarm] }
                        print(String(decoding: try JSONCoding.encoder().encode(Output(origin: change.origin, alarms: change.alarms)), as: UTF8.self))
                    } else {
                        print("alarms changed (\(change.origin.rawValue)):")
                        print(AlarmText.table(change.alarms))
                    }
                    fflush(nil)
                    seen += 1
                    if let count, seen >= count { break }
                }
            }
        }
    }
}
