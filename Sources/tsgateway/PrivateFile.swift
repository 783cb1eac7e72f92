import Foundation

/// Files with personal data (exports, the simulator's ground truth, HCI captures): created 0600,
/// replaced in place, with an error that says what to check.
enum PrivateFile {
    static func write(_ data: Data, to path: String) throws {
        let handle = try open(path)
        do {
            try handle.handle.write(contentsOf: data)
            try handle.handle.close()
        } catch {
            throw CLIFailure("cannot write \(path): \(error.localizedDescription)", status: .ioError)
        }
    }

    /// Creates or empties `path` with mode 0600 and opens it for appending.
    static func open(_ path: String) throws -> Writer {
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            let directory = (path as NSString).deletingLastPathComponent
            throw CLIFailure("cannot create \(path): check that the directory \(directory.isEmpty ? "." : directory) exists and is writable", status: .ioError)
        }
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: 0)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            return Writer(handle: handle, path: path)
        } catch {
            throw CLIFailure("cannot write \(path): \(error.localizedDescription)", status: .ioError)
        }
    }

    struct Writer {
        let handle: FileHandle
        let path: String

        func append(_ bytes: [UInt8]) throws {
            do { try handle.write(contentsOf: Data(bytes)) } catch {
                throw CLIFailure("cannot write \(path): \(error.localizedDescription)", status: .ioError)
            }
        }

        func close() throws { try handle.close() }
    }
}
