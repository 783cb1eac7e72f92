import Foundation
import TSModels

/// `stage,start,duration` rows; an optional header line names the columns (any order, extra
/// columns ignored); blank lines and lines starting with `#` are skipped; a field may be wrapped
/// in double quotes.
struct CSVItemScanner {
    private let bytes: UnsafeBufferPointer<UInt8>

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private typealias Columns = (stage: Int, start: Int, duration: Int)

    func items() throws(SleepInputError) -> [SleepItem] {
        var columns: Columns?
        var items: [SleepItem] = []
        // About 20 bytes per row.
        items.reserveCapacity(bytes.count / 20)
        var fields: [Range<Int>] = []
        var lineNumber = 0
        var lineStart = 0
        while lineStart <= bytes.count {
            var lineEnd = lineStart
            var ascii = true
            while lineEnd < bytes.count, bytes[lineEnd] != UInt8(ascii: "\n") {
                if bytes[lineEnd] >= 0x80 { ascii = false }
                lineEnd += 1
            }
            defer { lineStart = lineEnd + 1 }
            lineNumber += 1
            var end = lineEnd
            if end > lineStart, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            var start = lineStart
            if lineNumber == 1, end - start >= 3, bytes[start] == 0xEF, bytes[start + 1] == 0xBB, bytes[start + 2] == 0xBF { start += 3 }
            let row = start..<end
            if ascii {
                guard let item = try asciiRow(row, lineNumber: lineNumber, columns: &columns, fields: &fields) else { continue }
                items.append(item)
            } else {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[row]), as: UTF8.self)
                guard let item = try unicodeRow(text, lineNumber: lineNumber, columns: &columns) else { continue }
                items.append(item)
            }
        }
        return items
    }

    private func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// A row of ASCII bytes: nil for a skipped line or the header.
    private func asciiRow(_ row: Range<Int>, lineNumber: Int, columns: inout Columns?, fields: inout [Range<Int>]) throws(SleepInputError) -> SleepItem? {
        var first = row.lowerBound
        while first < row.upperBound, isBlank(bytes[first]) { first += 1 }
        if first == row.upperBound || bytes[first] == UInt8(ascii: "#") { return nil }
        fields.removeAll(keepingCapacity: true)
        var fieldStart = row.lowerBound
        for position in row where bytes[position] == UInt8(ascii: ",") {
            fields.append(unquoted(fieldStart..<position))
            fieldStart = position + 1
        }
        fields.append(unquoted(fieldStart..<row.upperBound))
        if columns == nil {
            let names = fields.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self).lowercased() }
            if let header = try Self.header(names, lineNumber: lineNumber) {
                columns = header
                return nil
            }
            columns = (0, 1, 2)
        }
        guard let columns else { return nil }
        func field(_ position: Int, _ name: String) throws(SleepInputError) -> FieldText {
            guard position < fields.count, !fields[position].isEmpty else {
                throw SleepInputError(line: lineNumber, field: name, message: "missing (a row is stage,start,duration)")
            }
            return FieldText(bytes: UnsafeBufferPointer(rebasing: bytes[fields[position]]))
        }
        return SleepItem(
            stage: try SleepInputFields.stage(field(columns.stage, "stage"), line: lineNumber),
            start: try SleepInputFields.start(field(columns.start, "start"), line: lineNumber),
            duration: try SleepInputFields.seconds(field(columns.duration, "duration"), line: lineNumber, field: "duration"))
    }

    /// Trims blanks, then one pair of enclosing double quotes.
    private func unquoted(_ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, isBlank(bytes[lower]) { lower += 1 }
        while upper > lower, isBlank(bytes[upper - 1]) { upper -= 1 }
        if upper - lower >= 2, bytes[lower] == UInt8(ascii: "\""), bytes[upper - 1] == UInt8(ascii: "\"") {
            lower += 1
            upper -= 1
        }
        return lower..<upper
    }

    /// A row with non-ASCII text, through String (Unicode blanks, quotes, case).
    private func unicodeRow(_ text: String, lineNumber: Int, columns: inout Columns?) throws(SleepInputError) -> SleepItem? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
        let fields = text.split(separator: ",", omittingEmptySubsequences: false).map { field in
            var text = field.trimmingCharacters(in: .whitespaces)
            if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
            return text
        }
        if columns == nil {
            if let header = try Self.header(fields.map { $0.lowercased() }, lineNumber: lineNumber) {
                columns = header
                return nil
            }
            columns = (0, 1, 2)
        }
        guard let columns else { return nil }
        func field(_ position: Int, _ name: String) throws(SleepInputError) -> FieldText {
            guard position < fields.count, !fields[position].isEmpty else {
                throw SleepInputError(line: lineNumber, field: name, message: "missing (a row is stage,start,duration)")
            }
            return FieldText(text: fields[position])
        }
        return SleepItem(
            stage: try SleepInputFields.stage(field(columns.stage, "stage"), line: lineNumber),
            start: try SleepInputFields.start(field(columns.start, "start"), line: lineNumber),
            duration: try SleepInputFields.seconds(field(columns.duration, "duration"), line: lineNumber, field: "duration"))
    }

    /// The first row that is not skipped is a header when it names a column.
    private static func header(_ names: [String], lineNumber: Int) throws(SleepInputError) -> Columns? {
        guard names.contains("stage") || names.contains("start") || names.contains("duration") else { return nil }
        func column(_ name: String) throws(SleepInputError) -> Int {
            guard let found = names.firstIndex(of: name) else {
                throw SleepInputError(line: lineNumber, field: name, message: "the header line has no \"\(name)\" column")
            }
            return found
        }
        return (try column("stage"), try column("start"), try column("duration"))
    }
}
