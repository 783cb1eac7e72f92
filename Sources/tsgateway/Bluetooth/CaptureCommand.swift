import ArgumentParser
import Foundation
import Synchronization
import TSFiles
import TSHCI
import TSModels
import TSSnoop
import TSWatchService

/// `tsgateway capture`: the kernel's HCI monitor channel into a btsnoop file (datalink 2001,
/// the format btmon writes), for bug reports and for adding a watch that speaks another dialect.
struct CaptureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Record the HCI traffic of the Bluetooth adapters into a btsnoop file (opens in Wireshark).",
        discussion: """
            Reads the kernel's HCI monitor channel, as btmon does, and writes a btsnoop file \
            (Linux monitor format) that Wireshark, tshark and btmon -r open. Runs until Ctrl-C, \
            SIGTERM or --duration. The file is created 0600: it holds your watch's data.

            Needs CAP_NET_RAW: run it with sudo, or once: sudo setcap cap_net_raw+ep "$(command -v tsgateway)"

            Example:
              sudo tsgateway capture --out sync.btsnoop --adapter hci0 --device AA:BB:CC:DD:EE:FF
              tsgateway protocol decode --btsnoop sync.btsnoop
            """
    )

    @Option(help: ArgumentHelp("The btsnoop file to write (replaced if it exists).", valueName: "FILE"))
    var out: String

    @Option(help: ArgumentHelp("Only this adapter's traffic (default: every adapter).", valueName: "hciN"))
    var adapter: String?

    @Option(help: ArgumentHelp("Only this device's connections' data (commands, events and notes stay).", valueName: "ADDRESS"))
    var device: String?

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "SECONDS"))
    var duration: Double?

    func validate() throws {
        if let adapter { _ = try adapterIndexOrUsage(adapter) }
        if let device, BluetoothAddress(device) == nil { throw ValidationError("--device must be an address like AA:BB:CC:DD:EE:FF, got \"\(device)\"") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds") }
    }

    func run() throws {
        var filter = CaptureFilter(index: try adapter.map(adapterIndexOrUsage), device: device.flatMap(BluetoothAddress.init))
        let monitor: HCIMonitor
        do { monitor = try HCIMonitor() } catch { throw CLIFailure(error.description, status: ExitStatus(error.category)) }
        if let device {
            // A link that is already up: its handle, from the kernel, since its Connection Complete has passed.
            for name in adapter.map({ [$0] }) ?? FastConnection.adapters() {
                guard let index = try? adapterIndex(name), let handle = try? ConnectionParameters.handle(adapter: name, address: device) else { continue }
                filter.track(ConnectionKey(index: index, handle: handle))
            }
        }
        let file: PrivateFileAppender
        do { file = try PrivateFile.appending(to: out) } catch { throw CLIFailure.from(error) }
        defer { file.close() }
        do { try file.append(BTSnoop.header(datalink: .monitor)) } catch { throw CLIFailure.from(error) }
        StopSignals.install()
        FileHandle.standardError.write(Data("tsgateway: capturing\(adapter.map { " on \($0)" } ?? "")\(device.map { " for \($0)" } ?? "") into \(out); Ctrl-C stops\n".utf8))
        let deadline = duration.map { ContinuousClock.now.advanced(by: .milliseconds(Int($0 * 1000))) }
        var kept = 0, seen = 0
        while !StopSignals.stopped.load(ordering: .relaxed) {
            if let deadline, ContinuousClock.now >= deadline { break }
            let packet: HCIPacket?
            do { packet = try monitor.next(timeoutMilliseconds: 200) } catch { throw CLIFailure(error.description, status: ExitStatus(error.category)) }
            guard let packet else { continue }
            seen += 1
            guard filter.keep(packet) else { continue }
            do { try file.append(BTSnoop.encode(packet.monitorRecord)) } catch { throw CLIFailure.from(error) }
            kept += 1
        }
        FileHandle.standardError.write(Data("tsgateway: wrote \(kept) of \(seen) HCI record(s) to \(out)\n".utf8))
    }
}

func adapterIndexOrUsage(_ name: String) throws -> UInt16 {
    do { return try adapterIndex(name) } catch { throw ValidationError(error.description) }
}

/// SIGINT and SIGTERM end a capture cleanly (the file stays valid: records are written whole).
enum StopSignals {
    static let stopped = Atomic<Bool>(false)

    static func install() {
        let handler: @convention(c) (Int32) -> Void = { _ in StopSignals.stopped.store(true, ordering: .relaxed) }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0  // no SA_RESTART: the poll returns at once
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        // A parent that spawned us with them blocked (Foundation's Process from an async
        // program does) would otherwise never stop the capture.
        var stopping = sigset_t()
        sigemptyset(&stopping)
        sigaddset(&stopping, SIGINT)
        sigaddset(&stopping, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &stopping, nil)
    }
}
