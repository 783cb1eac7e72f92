import Foundation

/// An executable of this package's build, found beside the test bundle in the build directory.
public func builtExecutable(_ name: String) -> URL? {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory.deleteLastPathComponent()
    }
    return nil
}
