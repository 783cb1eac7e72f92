import Foundation
import TSTestSupport
import Testing

/// Runs the built `tsgateway` binary in its own data directory.
struct CLI {
    typealias Result = ChildProcess.Output

    let home: URL

    init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-cli-\(UUID())")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: home) }

    /// The executable beside the test bundle in the build directory.
    static let binary: URL? = builtExecutable("tsgateway")

    /// The environment the binary runs in: this directory as XDG_DATA_HOME, Berlin time.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = home.path
        environment["TZ"] = "Europe/Berlin"
        return environment.merging(extra) { $1 }
    }

    /// Runs `tsgateway` with `arguments` in this directory (also its working directory, so relative
    /// paths land here).
    @discardableResult
    func run(_ arguments: [String], stdin: String? = nil, environment extra: [String: String] = [:],
             interruption: ChildProcess.Interruption? = nil, timeout: Duration = .seconds(120)) throws -> Result {
        try ChildProcess.run(try Self.requireBinary(), arguments: arguments, stdin: Data((stdin ?? "").utf8), environment: environment(extra),
                             currentDirectory: home, interruption: interruption, timeout: timeout)
    }

    static func requireBinary() throws -> URL {
        try #require(CLI.binary, "tsgateway is not built beside the tests; run `swift build --build-tests` first")
    }

    func json(_ arguments: [String], environment extra: [String: String] = [:]) throws -> Any {
        let result = try run(arguments, environment: extra)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }
}
