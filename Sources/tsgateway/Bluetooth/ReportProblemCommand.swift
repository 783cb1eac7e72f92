import ArgumentParser
import Foundation
import TSFiles
import TSModels

/// `tsgateway report-problem`: what a maintainer needs about one problem, in one archive, with
/// the person's health data and secrets left out unless they ask for them to be kept.
struct ReportProblemCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report-problem",
        abstract: "Gather what a maintainer needs into one archive (personal data left out).",
        discussion: """
            Writes one .tar.gz (created 0600) holding tsgateway's version and build, the OS and \
            kernel, BlueZ's version, `adapter list` and `adapter info`, with --device the \
            watch's `probe`, and the log: with --capture, that command run once (given -v) \
            with an HCI capture of it and its decoded exchange; without, the tsgateway \
            service's journal. A MANIFEST lists each piece, and each one missing (no \
            bluetoothd, no journal, no CAP_NET_RAW for the capture) with why.

            Left out or masked unless --include-personal-data: the command's standard output \
            (sleep records, heart rate, alarm labels), the raw capture and the payloads of the \
            decoded frames (their kinds, order and checks stay), quoted text, heart rates, hex \
            dumps, auth codes and keys in the logs, the Serial Number, and every Bluetooth \
            address but the watch's (each becomes address-N).

            Examples:
              tsgateway report-problem --out report.tar.gz --device AA:BB:CC:DD:EE:FF
              sudo tsgateway report-problem --out report.tar.gz --device AA:BB:CC:DD:EE:FF --capture -- tsgateway sleep sync
            """)

    @Option(help: ArgumentHelp("The archive to write (.tar.gz; replaced if it exists).", valueName: "FILE"))
    var out: String
    @Option(help: ArgumentHelp("The watch: probed, and the one address kept unmasked.", valueName: "ADDRESS"))
    var device: String?
    @Option(help: ArgumentHelp("The adapter for adapter info (default: hci0).", valueName: "hciN"))
    var adapter: String?
    @Flag(help: "Keep sleep records, heart rate, alarm labels, the raw capture and other addresses in the archive.")
    var includePersonalData = false
    @Flag(help: "Run the command after -- once under an HCI capture (needs CAP_NET_RAW) and keep its log.")
    var capture = false
    @Argument(parsing: .postTerminator, help: ArgumentHelp("With --capture: the command to run, after --.", valueName: "COMMAND"))
    var command: [String] = []

    func validate() throws {
        guard out.hasSuffix(".tar.gz") || out.hasSuffix(".tgz") else { throw ValidationError("--out must name a .tar.gz file, got \"\(out)\"") }
        if let device, BluetoothAddress(device) == nil { throw ValidationError("--device must be an address like AA:BB:CC:DD:EE:FF, got \"\(device)\"") }
        if let adapter { _ = try adapterIndexOrUsage(adapter) }
        if capture && command.isEmpty { throw ValidationError("--capture needs the command to run after --, e.g. --capture -- tsgateway sleep sync") }
        if !capture && !command.isEmpty { throw ValidationError("a command after -- is run only with --capture; add --capture") }
    }

    func run() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-report-\(getpid())-\(UUID().uuidString.prefix(8))").path
        guard mkdir(work, 0o700) == 0 else { throw CLIFailure("cannot make a private folder \(work): \(String(cString: strerror(errno)))", status: .ioError) }
        defer { try? FileManager.default.removeItem(atPath: work) }
        var report = ReportBuilder(folder: work, masking: includePersonalData ? nil : PersonalDataMask(watch: device))
        let adapterName = adapter ?? "hci0"

        report.step("version and build") { $0.version() }
        report.step("OS and kernel") { $0.system() }
        report.step("BlueZ's version") { $0.bluez() }
        report.step("adapter list and adapter info") { $0.adapters(adapterName) }
        if let device {
            report.step("probe of \(device)") { $0.probe(device, adapter: adapter) }
        } else {
            report.missing("probe.json", "no --device given: the watch was not probed")
        }
        if capture {
            report.step("the command under an HCI capture") { $0.captured(command, device: device, adapter: adapter) }
        } else {
            report.missing("command.txt", "no --capture: no command was run")
            report.step("the service's journal") { $0.journal() }
        }
        report.writeManifest(personalData: includePersonalData)
        progress("writing \(out)")
        try report.archive(to: out)
        progress("wrote \(out) (0600); its MANIFEST lists what it holds")
    }
}

private func progress(_ line: String) {
    FileHandle.standardError.write(Data("report-problem: \(line)\n".utf8))
}

/// The archive's folder as it is filled, and its MANIFEST.
struct ReportBuilder {
    let folder: String
    /// Nil: personal data is kept.
    let masking: PersonalDataMask?
    private(set) var held: [(file: String, what: String)] = []
    private(set) var absent: [(file: String, why: String)] = []

    init(folder: String, masking: PersonalDataMask?) {
        self.folder = folder
        self.masking = masking
    }

    mutating func step(_ title: String, _ body: (inout ReportBuilder) -> Void) {
        progress("\(title)…")
        body(&self)
    }

    mutating func add(_ file: String, _ what: String, _ text: String) {
        do {
            try PrivateFile.write(text, to: folder + "/" + file)
            held.append((file, what))
        } catch {
            absent.append((file, "could not be written: \(error)"))
        }
    }

    mutating func missing(_ file: String, _ why: String) { absent.append((file, why)) }

    /// Text that may hold personal data, masked unless it is kept.
    func masked(_ text: String, freeText: Bool = true) -> String { masking?.apply(text, freeText: freeText) ?? text }

    mutating func version() {
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        let executable = Child.ownExecutable
        let attributes = try? FileManager.default.attributesOfItem(atPath: executable)
        let built = (attributes?[.modificationDate] as? Date).map { ISO8601DateFormatter().string(from: $0) } ?? "unknown"
        let size = (attributes?[.size] as? NSNumber).map { "\($0) bytes" } ?? "unknown"
        add("version.txt", "tsgateway's version and build", """
            tsgateway \(GatewayVersion.current)
            build: \(build)
            executable: \(executable) (\(size), built \(built))

            """)
    }

    mutating func system() {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String { withUnsafeBytes(of: value) { bytes in String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) } }
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? "(no /etc/os-release)\n"
        add("system.txt", "OS and kernel", """
            kernel: \(field(name.sysname)) \(field(name.release)) \(field(name.version)) \(field(name.machine))

            /etc/os-release:
            \(release)
            """)
    }

    mutating func bluez() {
        let candidates = ["/usr/libexec/bluetooth/bluetoothd", "/usr/lib/bluetooth/bluetoothd", "/usr/sbin/bluetoothd"]
        var lines: [String] = []
        if let daemon = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }),
           let answer = Child.run([daemon, "--version"]), answer.status == 0 {
            lines.append("bluetoothd \(answer.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) (\(daemon))")
        }
        if let client = Child.run(["bluetoothctl", "--version"]), client.status == 0 {
            lines.append(client.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let running = Child.run(["pidof", "bluetoothd"]).map { $0.status == 0 } ?? false
        lines.append("bluetoothd running: \(running ? "yes" : "no")")
        if lines.count == 1 && !running {
            missing("bluez.txt", "no bluetoothd or bluetoothctl found and bluetoothd is not running")
            return
        }
        if !running { absent.append(("bluez.txt (running daemon)", "bluetoothd is not running")) }
        add("bluez.txt", "BlueZ's version", lines.joined(separator: "\n") + "\n")
    }

    mutating func adapters(_ adapter: String) {
        var text = ""
        for arguments in [["adapter", "list"], ["adapter", "info", "--adapter", adapter]] {
            let answer = Child.run([Child.ownExecutable] + arguments, timeout: 20)
            text += "$ tsgateway \(arguments.joined(separator: " "))\n"
            guard let answer else {
                text += "(did not finish in 20 s)\n\n"
                continue
            }
            text += answer.stdout + answer.stderr + "(exit status \(answer.status))\n\n"
            if answer.status != 0 { absent.append(("adapter.txt: \(arguments.joined(separator: " "))", answer.stderr.trimmingCharacters(in: .whitespacesAndNewlines))) }
        }
        add("adapter.txt", "`adapter list` and `adapter info`", masked(text, freeText: false))
    }

    mutating func probe(_ device: String, adapter: String?) {
        let arguments = ["probe", device, "--json"] + (adapter.map { ["--adapter", $0] } ?? [])
        guard let answer = Child.run([Child.ownExecutable] + arguments, timeout: 120) else {
            missing("probe.json", "the probe did not finish in 120 s")
            return
        }
        guard answer.status == 0 else {
            missing("probe.json", "the probe failed (exit status \(answer.status)): \(masked(answer.stderr).trimmingCharacters(in: .whitespacesAndNewlines))")
            return
        }
        add("probe.json", "the watch's probe: GATT table, Device Information, which dialect answered", masked(answer.stdout, freeText: false))
    }

    mutating func journal() {
        guard let answer = Child.run(["journalctl", "--unit", "tsgateway.service", "--since", "-2h", "--no-pager", "--output", "short-iso"], timeout: 30) else {
            missing("journal.txt", "journalctl is not installed here (or did not finish in 30 s)")
            return
        }
        guard answer.status != 127 else {
            missing("journal.txt", "journalctl is not installed here")
            return
        }
        let lines = answer.stdout.split(separator: "\n").filter { !$0.hasPrefix("-- ") }
        guard answer.status == 0, !lines.isEmpty else {
            missing("journal.txt", "the journal holds nothing of tsgateway.service from the last 2 hours\(answer.stderr.isEmpty ? "" : ": " + answer.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
            return
        }
        add("journal.txt", "tsgateway.service's journal, the last 2 hours", masked(answer.stdout))
    }

    mutating func captured(_ command: [String], device: String?, adapter: String?) {
        var line = command
        // `tsgateway …` runs this very build, with -v so that its log says what it did.
        if line.first == "tsgateway" || line.first == Child.ownExecutable {
            line[0] = Child.ownExecutable
            // Only a command that takes -v (probe, capture and the like do not).
            let verbose = Array(line.dropFirst()) + ["-v"]
            if !line.contains(where: { ["-v", "-vv", "--verbose"].contains($0) }),
               (try? TSGateway.parseAsRoot(GlobalOptions.movedAfterSubcommands(verbose))) != nil {
                line = [line[0]] + verbose
            }
        }
        let capturePath = folder + "/capture.btsnoop"
        let recorder = Child.start([Child.ownExecutable, "capture", "--out", capturePath] + (device.map { ["--device", $0] } ?? [])
                                   + (adapter.map { ["--adapter", $0] } ?? []))
        // The monitor socket is open within moments, or the capture has failed (no CAP_NET_RAW).
        Thread.sleep(forTimeInterval: 0.7)
        progress("running \(masked(command.joined(separator: " ")))")
        let answer = Child.run(line, timeout: 600)
        var captureFailure: String?
        if let recorder {
            if recorder.process.isRunning {
                kill(recorder.process.processIdentifier, SIGINT)
            }
            // It stops within 200 ms of SIGINT; one that does not is ended (its records are written whole).
            let deadline = Date().addingTimeInterval(5)
            while recorder.process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if recorder.process.isRunning { kill(recorder.process.processIdentifier, SIGKILL) }
            recorder.process.waitUntilExit()
            if recorder.process.terminationStatus != 0 { captureFailure = recorder.stderr().trimmingCharacters(in: .whitespacesAndNewlines) }
        } else {
            captureFailure = "could not start `tsgateway capture`"
        }
        let status = answer.map { "exit status \($0.status)" } ?? "did not finish in 600 s"
        let stdout = answer?.stdout ?? ""
        let output = masking == nil
            ? stdout
            : "(its \(stdout.split(separator: "\n").count) line(s) of standard output are left out: they may hold sleep records, heart rate or alarm labels; --include-personal-data keeps them)\n"
        add("command.txt", "the command run once, its exit status and output", masked("$ \(command.joined(separator: " "))\n\(status)\n\n") + output)
        add("log.txt", "the command's log (standard error, run with -v)", masked(answer?.stderr ?? ""))
        if let captureFailure {
            try? FileManager.default.removeItem(atPath: capturePath)
            missing("capture.btsnoop", "no HCI capture: \(captureFailure.isEmpty ? "it failed" : captureFailure) (run report-problem with sudo, or sudo setcap cap_net_raw+ep \"$(command -v tsgateway)\")")
            missing("exchange.txt", "no capture to decode")
            return
        }
        decode(capturePath)
    }

    /// The capture's exchange as `protocol decode` reads it: whole with personal data, else each
    /// frame's structure (kind, order, checks) without its payload; the raw capture only with it.
    private mutating func decode(_ capturePath: String) {
        let json = masking != nil
        let answer = Child.run([Child.ownExecutable, "protocol", "decode", "--btsnoop", capturePath] + (json ? ["--json"] : []), timeout: 120)
        if let answer, answer.status == 0 {
            let text = json ? PersonalDataMask.frameStructure(answer.stdout) : answer.stdout
            add("exchange.txt", json ? "the decoded exchange, each frame's kind, order and checks (payloads left out)" : "the decoded exchange", text)
        } else {
            missing("exchange.txt", "`protocol decode` could not decode the capture: \(answer.map { masked($0.stderr) } ?? "it did not finish in 120 s")")
        }
        if masking == nil {
            held.append(("capture.btsnoop", "the HCI capture of the command (btsnoop; Wireshark, btmon -r)"))
        } else {
            try? FileManager.default.removeItem(atPath: capturePath)
            missing("capture.btsnoop", "the raw capture is left out: it holds personal data (--include-personal-data keeps it)")
        }
    }

    mutating func writeManifest(personalData: Bool) {
        var lines = ["tsgateway problem report", "made: \(ISO8601DateFormatter().string(from: Date()))",
                     "personal data: " + (personalData ? "kept (--include-personal-data)" : "left out or masked (see `tsgateway report-problem --help`)"),
                     "", "holds:"]
        lines += held.map { "  \($0.file)  \($0.what)" }
        lines += ["", "missing:"]
        lines += absent.isEmpty ? ["  (nothing)"] : absent.map { "  \($0.file)  \($0.why)" }
        add("MANIFEST", "this list", lines.joined(separator: "\n") + "\n")
    }

    /// The folder as a .tar.gz at `path`, created 0600 before a byte is written.
    func archive(to path: String) throws {
        let file: PrivateFileAppender
        do { file = try PrivateFile.appending(to: path) } catch { throw CLIFailure.from(error) }
        defer { file.close() }
        let files = held.map(\.file).filter { FileManager.default.fileExists(atPath: folder + "/" + $0) }
        guard let tar = Child.run(["tar", "-czf", "-", "-C", folder, "--transform", "s,^,tsgateway-report/,"] + files, timeout: 60), tar.status == 0 else {
            unlink(path)
            throw CLIFailure("tar could not make the archive; is tar installed?", status: .software)
        }
        do { try file.append(tar.data) } catch { throw CLIFailure.from(error) }
    }
}

/// What a report leaves out of text unless personal data is kept: Bluetooth addresses but the
/// watch's (each a stable address-N), values after auth code/key/secret/token, heart rates,
/// quoted text (alarm labels, names), hex dumps of frames and the Serial Number.
struct PersonalDataMask {
    let watch: String?

    /// `freeText` false: text of a known shape (the probe's JSON, `adapter info`), where quoted
    /// strings are UUIDs and names, not the person's words.
    func apply(_ text: String, freeText: Bool = true) -> String {
        var result = text
        var pseudonyms: [String: String] = [:]
        let address = /(?:[0-9A-Fa-f]{2}[:_]){5}[0-9A-Fa-f]{2}/
        result = result.replacing(address) { match in
            let normalized = match.output.uppercased().replacingOccurrences(of: "_", with: ":")
            if let watch, normalized == watch.uppercased() { return String(match.output) }
            if let known = pseudonyms[normalized] { return known }
            let name = "address-\(pseudonyms.count + 1)"
            pseudonyms[normalized] = name
            return name
        }
        result = result.replacing(/(?i)((?:auth[ _-]?(?:code|key)|secret|token|key)"?\s*[:=]\s*"?)[^\s",}]+/) { "\($0.output.1)(masked)" }
        result = result.replacing(/(?i)(--(?:auth-code|auth-key|key|secret|token)(?:\s+|=))[^\s;]+/) { "\($0.output.1)(masked)" }
        result = result.replacing(/(?i)(--credential(?:\s+|=)[^\s=;]+=)[^\s;]+/) { "\($0.output.1)(masked)" }
        result = result.replacing(/(?i)("?serial(?:[ _-]?number)?(?: string)?"?\s*[:=]\s*"?)[^",\n}]+/) { "\($0.output.1)(masked)" }
        result = result.replacing(/("name"\s*:\s*"Serial Number String"\s*,\s*"value"\s*:\s*")[^"]*/) { "\($0.output.1)(masked)" }
        result = result.replacing(/(?i)\b\d{1,3}\s*bpm\b/) { _ in "(heart rate masked)" }
        result = result.replacing(/(?:\b[0-9A-Fa-f]{2}[ :]){11,}[0-9A-Fa-f]{2}\b/) { _ in "(hex dump masked)" }
        guard freeText else { return result }
        result = result.replacing(/"[^"\n]*"/) { match in
            // JSON keys stay; values and quoted text go.
            match.output.count <= 2 ? String(match.output) : "\"…\""
        }
        return result
    }

    /// `protocol decode --json` lines reduced to each frame's structure: the keys that say what a
    /// frame is and how it fared, never its body.
    static func frameStructure(_ jsonLines: String) -> String {
        let kept: Set<String> = ["type", "sequence", "flags", "direction", "connection", "time", "command", "code", "bytes", "kind", "dialect", "message", "key"]
        func reduce(_ value: Any) -> Any? {
            switch value {
            case let object as [String: Any]:
                var out: [String: Any] = [:]
                for (key, inner) in object where kept.contains(key) {
                    if let reduced = reduce(inner) { out[key] = reduced }
                }
                return out
            case is [Any]: return nil
            default: return value
            }
        }
        return jsonLines.split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)),
                  let reduced = reduce(object),
                  let data = try? JSONSerialization.data(withJSONObject: reduced, options: [.sortedKeys]) else { return nil }
            return String(decoding: data, as: UTF8.self)
        }.joined(separator: "\n") + "\n"
    }
}

/// A child process of the report: run to the end within a timeout, or started and left running.
enum Child {
    static var ownExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    struct Answer {
        var status: Int32
        var data: Data
        var stderr: String
        var stdout: String { String(decoding: data, as: UTF8.self) }
    }

    /// Runs `arguments` (the first found on PATH when it has no slash); nil when it cannot start or outlives `timeout`.
    static func run(_ arguments: [String], timeout: TimeInterval = 10) -> Answer? {
        guard let started = start(arguments) else { return nil }
        let deadline = Date().addingTimeInterval(timeout)
        while started.process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if started.process.isRunning {
            started.process.terminate()
            started.process.waitUntilExit()
            return nil
        }
        return Answer(status: started.process.terminationStatus, data: started.stdout(), stderr: started.stderr())
    }

    final class Started {
        let process: Process
        private let out: Collector
        private let err: Collector

        init(process: Process, out: Collector, err: Collector) {
            self.process = process
            self.out = out
            self.err = err
        }

        func stdout() -> Data { out.finish() }
        func stderr() -> String { String(decoding: err.finish(), as: UTF8.self) }
    }

    /// Reads a pipe on its own thread, so a chatty child never blocks on a full pipe.
    final class Collector: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(_ pipe: Pipe) {
            let reading = pipe.fileHandleForReading
            Thread.detachNewThread { [self] in
                while true {
                    let chunk = reading.availableData
                    if chunk.isEmpty { break }
                    lock.lock(); data.append(chunk); lock.unlock()
                }
                done.signal()
            }
        }

        func finish() -> Data {
            done.wait()
            done.signal()
            lock.lock(); defer { lock.unlock() }
            return data
        }
    }

    static func start(_ arguments: [String]) -> Started? {
        guard let first = arguments.first else { return nil }
        let process = Process()
        if first.contains("/") {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(arguments.dropFirst())
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = arguments
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        try? out.fileHandleForWriting.close()
        try? err.fileHandleForWriting.close()
        return Started(process: process, out: Collector(out), err: Collector(err))
    }
}
