import Foundation
import TSTestSupport
import Testing

/// Runs the built `tsgateway` binary in its own data directory.
struct CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    let home: URL

    init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("tsgateway-cli-\(UUID())")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: home) }

    /// The executable beside the test bundle in the build directory.
    static let binary: URL? = builtExecutable("tsgateway")

    @discardableResult
    func run(_ arguments: [String], stdin: String? = nil, environment extra: [String: String] = [:]) throws -> Result {
        let binary = try #require(CLI.binary, "tsgateway is not built beside the tests; run `swift build --build-tests` first")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = home.path
        environment["TZ"] = "Europe/Berlin"
        environment.merge(extra) { $1 }
        process.environment = environment
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
                      stderr: String(decoding: stderrData, as: UTF8.self))
    }

    func json(_ arguments: [String]) throws -> Any {
        let result = try run(arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }
}
