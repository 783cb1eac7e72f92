import Foundation
import TSFiles
import TSModels

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
        reportProgress("\(title)…")
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
        reportProgress("running \(masked(command.joined(separator: " ")))")
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
