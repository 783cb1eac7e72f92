import Foundation

/// Runs the built `tsgateway` binary in a data directory of its own (XDG_DATA_HOME, also its
/// working directory, so relative paths land there; Berlin time): the one way tests run the CLI.
public struct CLI: Sendable {
    public typealias Result = ChildProcess.Output

    public let home: URL

    public init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-cli-\(UUID())")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    }

    public func cleanUp() { try? FileManager.default.removeItem(at: home) }

    /// The executable beside the test bundle in the build directory.
    public static let binary: URL? = builtExecutable("tsgateway")

    public struct MissingBinary: Error, CustomStringConvertible {
        public var description: String { "tsgateway is not built beside the tests; run `swift build --build-tests` first" }
    }

    public static func requireBinary() throws -> URL {
        guard let binary else { throw MissingBinary() }
        return binary
    }

    /// The environment the binary runs in: this directory as XDG_DATA_HOME, Berlin time, and `extra`.
    public func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = home.path
        environment["TZ"] = "Europe/Berlin"
        return environment.merging(extra) { $1 }
    }

    /// Runs `tsgateway` with `arguments` to its end, without holding a concurrency thread while
    /// it waits: on two cores a blocked cooperative thread stalls every other test, and an
    /// in-process fake (a bluetoothd on a private bus) must keep answering the child.
    @discardableResult
    public func runDetached(_ arguments: [String], stdin: String? = nil, environment extra: [String: String] = [:],
                            interruption: ChildProcess.Interruption? = nil, timeout: Duration = .seconds(120)) async throws -> Result {
        try await ChildProcess.run(try Self.requireBinary(), arguments: arguments, stdin: Data((stdin ?? "").utf8), environment: environment(extra),
                                   currentDirectory: home, interruption: interruption, timeout: timeout)
    }

    /// Runs once in a fresh directory, removed afterwards.
    public static func runOnceDetached(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> Result {
        let cli = try CLI()
        defer { cli.cleanUp() }
        return try await cli.runDetached(arguments, environment: extra)
    }

    /// Writes `contents` to a fresh temporary file named `name` and returns its path.
    public static func file(_ name: String, _ contents: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-input-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url.path
    }
}
