// tsgateway-bench: throughput figures for each layer, each as a ratio to a baseline measured in
// the same run on the same machine, so numbers compare across machines.
//
//   swift run -c release tsgateway-bench            all sections
//   swift run -c release tsgateway-bench protocol   one section
//   (the daemon section runs the tsgateway binary of the same build: `swift build -c release` first)
import Foundation

let sections: [(name: String, run: () async throws -> Void)] = [
    ("protocol", runProtocolBenchmarks),
    ("sleep", runSleepBenchmarks),
    ("sync", runSyncBenchmarks),
    ("interval", runIntervalBenchmarks),
    ("dbus", runDBusBenchmarks),
    ("daemon", runDaemonBenchmarks),
]

if CommandLine.arguments.count == 3, CommandLine.arguments[1] == EchoServer.argument {
    // The dbus section's server, in its own process.
    try await EchoServer.serve(address: CommandLine.arguments[2])
}

let requested = Set(CommandLine.arguments.dropFirst())
let unknown = requested.subtracting(sections.map(\.name))
if !unknown.isEmpty {
    FileHandle.standardError.write(Data("tsgateway-bench: unknown section(s) \(unknown.sorted().joined(separator: ", ")); known: \(sections.map(\.name).joined(separator: ", "))\n".utf8))
    exit(64)
}
#if DEBUG
print("warning: debug build; run `swift run -c release tsgateway-bench` for meaningful figures")
#endif
for section in sections where requested.isEmpty || requested.contains(section.name) {
    print("== \(section.name)")
    do {
        try await section.run()
    } catch {
        print("section \(section.name) failed: \(error)")
        exit(1)
    }
}
