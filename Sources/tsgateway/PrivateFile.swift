import Foundation

/// Files with personal data (exports, the simulator's ground truth): created 0600, replaced in
/// place, with an error that says what to check.
enum PrivateFile {
    static func write(_ data: Data, to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            let directory = (path as NSString).deletingLastPathComponent
            throw CLIFailure("cannot create \(path): check that the directory \(directory.isEmpty ? "." : directory) exists and is writable", status: .ioError)
        }
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: data)
            try handle.close()
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        } catch {
            throw CLIFailure("cannot write \(path): \(error.localizedDescription)", status: .ioError)
        }
    }
}
