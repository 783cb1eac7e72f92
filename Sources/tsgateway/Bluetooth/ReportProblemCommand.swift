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
        reportProgress("writing \(out)")
        try report.archive(to: out)
        reportProgress("wrote \(out) (0600); its MANIFEST lists what it holds")
    }
}

/// A line of report-problem's progress on standard error.
func reportProgress(_ line: String) {
    FileHandle.standardError.write(Data("report-problem: \(line)\n".utf8))
}
