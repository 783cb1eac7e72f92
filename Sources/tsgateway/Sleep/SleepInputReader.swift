import Foundation
import TSModels
import TSSleep

/// Reads raw sleep items from a JSON or CSV file (formats in docs/cli.md, "Sleep analysis input");
/// the bytes become items in `SleepInputDecoder`.
enum SleepInputReader {
    /// Reads `path` ("-" for standard input) and picks the format from the extension, else from
    /// the first non-blank character (`[` means JSON).
    static func read(path: String) throws(CLIFailure) -> (items: [SleepItem], format: SleepInputFormat) {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CLIFailure("cannot read \(path): no such file", status: .noInput)
            }
            guard !isDirectory.boolValue else { throw CLIFailure("cannot read \(path): it is a directory", status: .noInput) }
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
            } catch {
                throw CLIFailure("cannot read \(path): permission denied or unreadable", status: .noInput)
            }
        }
        let format = SleepInputFormat.detect(name: path, bytes: data)
        do {
            return (try SleepInputDecoder.decode(data, format: format), format)
        } catch {
            let field = error.field.map { ", field \"\($0)\"" } ?? ""
            throw CLIFailure("\(path == "-" ? "standard input" : path) line \(error.line)\(field): \(error.message)", status: .dataError)
        }
    }
}
