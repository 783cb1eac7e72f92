import Foundation
import TSModels

/// Reads raw sleep items from a JSON or CSV file (formats in README, "Sleep analysis input").
struct SleepInputReader {
    enum Format: String {
        case json
        case csv
    }

    /// A row that cannot become a sleep item: where it is and what is wrong.
    struct RowError: Error, Equatable {
        var line: Int
        var field: String?
        var message: String
    }

    let displayName: String

    /// Reads `path` ("-" for standard input) and picks the format from the extension, else from
    /// the first non-blank character (`[` means JSON).
    static func read(path: String) throws(CLIFailure) -> (items: [SleepItem], format: Format) {
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
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw CLIFailure("cannot read \(path): permission denied or unreadable", status: .noInput)
            }
        }
        let format = detectFormat(path: path, data: data)
        let reader = SleepInputReader(displayName: path == "-" ? "standard input" : path)
        do {
            switch format {
            case .json: return (try reader.parseJSON(Array(data)), format)
            case .csv: return (try reader.parseCSV(String(decoding: data, as: UTF8.self)), format)
            }
        } catch {
            let field = error.field.map { ", field \"\($0)\"" } ?? ""
            throw CLIFailure("\(reader.displayName) line \(error.line)\(field): \(error.message)", status: .dataError)
        }
    }

    static func detectFormat(path: String, data: Data) -> Format {
        let lowered = path.lowercased()
        if lowered.hasSuffix(".json") { return .json }
        if lowered.hasSuffix(".csv") { return .csv }
        let firstVisible = data.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        return firstVisible == UInt8(ascii: "[") ? .json : .csv
    }

    // MARK: JSON

    /// A top-level array of objects with `stage`, `start` and `duration`; other members are ignored.
    func parseJSON(_ bytes: [UInt8]) throws(RowError) -> [SleepItem] {
        let document: LocatedJSON
        do {
            document = try JSONLineParser.parse(bytes)
        } catch {
            throw RowError(line: error.line, field: nil, message: "not valid JSON at column \(error.column): \(error.message)")
        }
        guard case .array(let elements) = document.value else {
            throw RowError(line: document.line, field: nil, message: "expected a JSON array of sleep items, found \(document.value.kindName)")
        }
        var items: [SleepItem] = []
        items.reserveCapacity(elements.count)
        for element in elements {
            guard case .object(let members) = element.value else {
                throw RowError(line: element.line, field: nil, message: "expected an object with stage, start and duration, found \(element.value.kindName)")
            }
            func member(_ name: String) throws(RowError) -> LocatedJSON {
                guard let found = members.last(where: { $0.key == name }) else {
                    throw RowError(line: element.line, field: name, message: "missing")
                }
                return found.value
            }
            let stage = try member("stage")
            let start = try member("start")
            let duration = try member("duration")
            items.append(SleepItem(
                stage: try parseStage(jsonText(stage), line: stage.line),
                start: try parseStart(jsonText(start), line: start.line, field: "start"),
                duration: try parseSeconds(jsonText(duration), line: duration.line, field: "duration")))
        }
        return items
    }

    /// Strings and numbers as their text; anything else as its kind, which no field accepts.
    private func jsonText(_ located: LocatedJSON) -> String {
        switch located.value {
        case .string(let text): text
        case .number(let text): text
        default: "<\(located.value.kindName)>"
        }
    }

    // MARK: CSV

    /// `stage,start,duration` rows; an optional header line names the columns (any order, extra
    /// columns ignored); blank lines and lines starting with `#` are skipped.
    func parseCSV(_ text: String) throws(RowError) -> [SleepItem] {
        var columns: (stage: Int, start: Int, duration: Int)?
        var items: [SleepItem] = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(rawLine)
            if line.last == "\r" { line = line.dropLast() }
            if lineNumber == 1, line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(unquote)
            if columns == nil {
                let names = fields.map { $0.lowercased() }
                if names.contains("stage") || names.contains("start") || names.contains("duration") {
                    func column(_ name: String) throws(RowError) -> Int {
                        guard let found = names.firstIndex(of: name) else {
                            throw RowError(line: lineNumber, field: name, message: "the header line has no \"\(name)\" column")
                        }
                        return found
                    }
                    columns = (try column("stage"), try column("start"), try column("duration"))
                    continue
                }
                columns = (0, 1, 2)
            }
            guard let columns else { continue }
            func field(_ position: Int, _ name: String) throws(RowError) -> String {
                guard position < fields.count, !fields[position].isEmpty else {
                    throw RowError(line: lineNumber, field: name, message: "missing (a row is stage,start,duration)")
                }
                return fields[position]
            }
            items.append(SleepItem(
                stage: try parseStage(field(columns.stage, "stage"), line: lineNumber),
                start: try parseStart(field(columns.start, "start"), line: lineNumber, field: "start"),
                duration: try parseSeconds(field(columns.duration, "duration"), line: lineNumber, field: "duration")))
        }
        return items
    }

    private func unquote(_ field: Substring) -> String {
        var text = field.trimmingCharacters(in: .whitespaces)
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
        return text
    }

    // MARK: Fields

    private func parseStage(_ text: String, line: Int) throws(RowError) -> SleepStage {
        guard let stage = SleepStage(name: text) else {
            throw RowError(line: line, field: "stage", message: "\(quoted(text)) is not awake, light, deep, rem or 0…3")
        }
        return stage
    }

    /// Whole Unix seconds, or an ISO 8601 date-time with a zone (`2026-01-14T22:00:00+01:00`, `…Z`).
    private func parseStart(_ text: String, line: Int, field: String) throws(RowError) -> Int64 {
        if let seconds = wholeSeconds(text) { return seconds }
        if text.contains("T"), let date = try? Date(text, strategy: .iso8601), date.timeIntervalSince1970.isFinite {
            return Int64(date.timeIntervalSince1970.rounded(.down))
        }
        throw RowError(line: line, field: field, message: "\(quoted(text)) is neither whole Unix seconds nor an ISO 8601 time with a zone (2026-01-14T22:00:00+01:00)")
    }

    private func parseSeconds(_ text: String, line: Int, field: String) throws(RowError) -> Int64 {
        guard let seconds = wholeSeconds(text) else {
            throw RowError(line: line, field: field, message: "\(quoted(text)) is not a whole number of seconds")
        }
        return seconds
    }

    /// Integers, and numbers like `1700000000.0` or `6e2` whose value is whole and fits Int64.
    private func wholeSeconds(_ text: String) -> Int64? {
        if let value = Int64(text) { return value }
        guard text.first.map({ $0.isNumber || $0 == "-" }) == true, let value = Double(text), value.isFinite,
              value == value.rounded(), abs(value) < 9.0e18
        else { return nil }
        return Int64(value)
    }

    private func quoted(_ text: String) -> String {
        let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
        return "\"\(shown)\""
    }
}
