import Foundation
import TSModels

/// The two file formats of raw sleep items (README, "Sleep analysis input").
public enum SleepInputFormat: String, Sendable {
    case json
    case csv

    /// From the name's extension (`.json`, `.csv`), else from the first non-blank byte (`[` means JSON).
    public static func detect(name: String, bytes: some Sequence<UInt8>) -> SleepInputFormat {
        let lowered = name.lowercased()
        if lowered.hasSuffix(".json") { return .json }
        if lowered.hasSuffix(".csv") { return .csv }
        let firstVisible = bytes.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        return firstVisible == UInt8(ascii: "[") ? .json : .csv
    }
}

/// An input that cannot become sleep items: the line, the field when one is to blame, what is wrong.
public struct SleepInputError: Error, Equatable, Sendable {
    public var line: Int
    public var field: String?
    public var message: String

    public init(line: Int, field: String?, message: String) {
        self.line = line
        self.field = field
        self.message = message
    }
}

/// Raw sleep items from the bytes of a JSON or CSV file, in one pass over the bytes: no document
/// tree, no intermediate strings for the usual ASCII fields (numbers, stage names, ISO 8601
/// times in their common form), so a decade of minute-grained items reads in well under a
/// second. Every error names the line (and the field) it is about.
public enum SleepInputDecoder {
    public static func decode(_ bytes: some ContiguousBytes, format: SleepInputFormat) throws(SleepInputError) -> [SleepItem] {
        let result: Result<[SleepItem], SleepInputError> = bytes.withUnsafeBytes { raw in
            let buffer = raw.bindMemory(to: UInt8.self)
            do throws(SleepInputError) {
                switch format {
                case .json:
                    var scanner = JSONItemScanner(buffer)
                    return .success(try scanner.items())
                case .csv:
                    return .success(try CSVItemScanner(buffer).items())
                }
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

// MARK: - JSON

/// A top-level array of objects with `stage`, `start` and `duration`; other members are checked
/// for syntax and skipped. The first problem in the file (syntax or content) is the one reported.
struct JSONItemScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var line = 1
    private var lineStart = 0
    /// Deeper nesting than this is refused rather than risking the stack.
    private let maximumDepth = 200

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// A member's value as written: where it is, and what it is.
    private enum RawValue {
        /// A number's text.
        case number(Range<Int>)
        /// A string's content without escapes.
        case plainString(Range<Int>)
        /// A string with escapes, decoded.
        case decodedString(String)
        /// Anything else, which no field accepts, by its kind ("a boolean").
        case other(String)
    }

    private struct Member {
        var value: RawValue
        var line: Int
    }

    mutating func items() throws(SleepInputError) -> [SleepItem] {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        guard index < bytes.count else { throw syntax("unexpected end of input, expected a value") }
        guard bytes[index] == UInt8(ascii: "[") else {
            let documentLine = line
            let kind = try skipValue(depth: 0)
            try expectEnd()
            throw SleepInputError(line: documentLine, field: nil, message: "expected a JSON array of sleep items, found \(kind)")
        }
        index += 1
        var items: [SleepItem] = []
        // About 50 bytes per item as JSONEncoder writes them.
        items.reserveCapacity(bytes.count / 48)
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                guard index < bytes.count else { throw syntax("unexpected end of input, expected a value") }
                items.append(try item())
                skipWhitespace()
                guard index < bytes.count else { throw syntax("unexpected end of input inside an array, expected ',' or ']'") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; break }
                throw syntax("unexpected character '\(printable(bytes[index]))' in an array, expected ',' or ']'")
            }
        }
        try expectEnd()
        return items
    }

    private mutating func expectEnd() throws(SleepInputError) {
        skipWhitespace()
        guard index == bytes.count else { throw syntax("unexpected text after the end of the JSON value") }
    }

    /// One array element, which must be an object with the three fields.
    private mutating func item() throws(SleepInputError) -> SleepItem {
        let itemLine = line
        guard bytes[index] == UInt8(ascii: "{") else {
            let kind = try skipValue(depth: 1)
            throw SleepInputError(line: itemLine, field: nil, message: "expected an object with stage, start and duration, found \(kind)")
        }
        index += 1
        var stage: Member?, start: Member?, duration: Member?
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw syntax("expected a quoted member name in an object") }
                let key = try string()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                    throw syntax("expected ':' after member name \"\(text(of: key))\"")
                }
                index += 1
                switch fieldName(key) {
                case .stage: stage = try member()
                case .start: start = try member()
                case .duration: duration = try member()
                case nil: _ = try skipValue(depth: 2)
                }
                skipWhitespace()
                guard index < bytes.count else { throw syntax("unexpected end of input inside an object, expected ',' or '}'") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; break }
                throw syntax("unexpected character '\(printable(bytes[index]))' in an object, expected ',' or '}'")
            }
        }
        guard let stage else { throw SleepInputError(line: itemLine, field: "stage", message: "missing") }
        guard let start else { throw SleepInputError(line: itemLine, field: "start", message: "missing") }
        guard let duration else { throw SleepInputError(line: itemLine, field: "duration", message: "missing") }
        return SleepItem(
            stage: try SleepInputFields.stage(field(stage), line: stage.line),
            start: try SleepInputFields.start(field(start), line: start.line),
            duration: try SleepInputFields.seconds(field(duration), line: duration.line, field: "duration"))
    }

    private func field(_ member: Member) -> FieldText {
        switch member.value {
        case .number(let range), .plainString(let range): FieldText(bytes: UnsafeBufferPointer(rebasing: bytes[range]))
        case .decodedString(let text): FieldText(text: text)
        case .other(let kind): FieldText(text: "<\(kind)>")
        }
    }

    /// A member's value: strings and numbers by position, anything else skipped and kept as its kind.
    private mutating func member() throws(SleepInputError) -> Member {
        skipWhitespace()
        guard index < bytes.count else { throw syntax("unexpected end of input, expected a value") }
        let valueLine = line
        switch bytes[index] {
        case UInt8(ascii: "\""): return Member(value: try string(), line: valueLine)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return Member(value: .number(try number()), line: valueLine)
        default: return Member(value: .other(try skipValue(depth: 2)), line: valueLine)
        }
    }

    private enum FieldName { case stage, start, duration }

    private func fieldName(_ key: RawValue) -> FieldName? {
        switch key {
        case .plainString(let range):
            switch range.count {
            case 5 where matches(range, "stage"): .stage
            case 5 where matches(range, "start"): .start
            case 8 where matches(range, "duration"): .duration
            default: nil
            }
        case .decodedString(let text):
            switch text {
            case "stage": .stage
            case "start": .start
            case "duration": .duration
            default: nil
            }
        default: nil
        }
    }

    private func matches(_ range: Range<Int>, _ word: StaticString) -> Bool {
        word.withUTF8Buffer { utf8 in
            utf8.count == range.count && zip(utf8, bytes[range]).allSatisfy { $0 == $1 }
        }
    }

    private func text(of key: RawValue) -> String {
        switch key {
        case .plainString(let range), .number(let range): String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        case .decodedString(let text), .other(let text): text
        }
    }

    // MARK: Syntax

    private func syntax(_ message: String) -> SleepInputError {
        SleepInputError(line: line, field: nil, message: "not valid JSON at column \(index - lineStart + 1): \(message)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\n"):
                line += 1
                index += 1
                lineStart = index
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                index += 1
            default:
                return
            }
        }
    }

    private func printable(_ byte: UInt8) -> String {
        (0x20..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\u{\(String(byte, radix: 16))}"
    }

    /// Checks and skips any value; returns its kind for messages.
    private mutating func skipValue(depth: Int) throws(SleepInputError) -> String {
        skipWhitespace()
        guard index < bytes.count else { throw syntax("unexpected end of input, expected a value") }
        guard depth < maximumDepth else { throw syntax("nesting deeper than \(maximumDepth) levels") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            try skipObject(depth: depth)
            return "an object"
        case UInt8(ascii: "["):
            try skipArray(depth: depth)
            return "an array"
        case UInt8(ascii: "\""):
            _ = try string()
            return "a string"
        case UInt8(ascii: "t"):
            try expectWord("true")
            return "a boolean"
        case UInt8(ascii: "f"):
            try expectWord("false")
            return "a boolean"
        case UInt8(ascii: "n"):
            try expectWord("null")
            return "null"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try number()
            return "a number"
        default:
            throw syntax("unexpected character '\(printable(bytes[index]))', expected a value")
        }
    }

    private mutating func skipArray(depth: Int) throws(SleepInputError) {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            _ = try skipValue(depth: depth + 1)
            skipWhitespace()
            guard index < bytes.count else { throw syntax("unexpected end of input inside an array, expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return }
            throw syntax("unexpected character '\(printable(bytes[index]))' in an array, expected ',' or ']'")
        }
    }

    private mutating func skipObject(depth: Int) throws(SleepInputError) {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw syntax("expected a quoted member name in an object") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw syntax("expected ':' after member name \"\(text(of: key))\"") }
            index += 1
            _ = try skipValue(depth: depth + 1)
            skipWhitespace()
            guard index < bytes.count else { throw syntax("unexpected end of input inside an object, expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return }
            throw syntax("unexpected character '\(printable(bytes[index]))' in an object, expected ',' or '}'")
        }
    }

    private mutating func expectWord(_ word: StaticString) throws(SleepInputError) {
        let matched = word.withUTF8Buffer { utf8 in
            bytes.count - index >= utf8.count && zip(utf8, bytes[index..<index + utf8.count]).allSatisfy { $0 == $1 }
        }
        guard matched else { throw syntax("unexpected character '\(printable(bytes[index]))', expected a value") }
        index += word.utf8CodeUnitCount
    }

    private mutating func number() throws(SleepInputError) -> Range<Int> {
        let start = index
        func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        guard index > integerStart else { throw syntax("a number needs digits") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            guard index > fractionStart else { throw syntax("a number needs digits after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let exponentStart = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            guard index > exponentStart else { throw syntax("a number needs digits in its exponent") }
        }
        return start..<index
    }

    /// A string at `index` (its opening quote): its range when it has no escapes, else its decoded text.
    private mutating func string() throws(SleepInputError) -> RawValue {
        index += 1
        let contentStart = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return .plainString(contentStart..<index - 1)
            }
            if byte == UInt8(ascii: "\\") { return .decodedString(try escapedString(from: contentStart)) }
            if byte < 0x20 { throw syntax("control character inside a string (a string must end on the line it starts)") }
            index += 1
        }
        throw syntax("unterminated string")
    }

    private mutating func escapedString(from contentStart: Int) throws(SleepInputError) -> String {
        var scalars = String.UnicodeScalarView()
        var chunkStart = contentStart
        func flush(upTo end: Int) {
            scalars.append(contentsOf: String(decoding: UnsafeBufferPointer(rebasing: bytes[chunkStart..<end]), as: UTF8.self).unicodeScalars)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                flush(upTo: index)
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { throw syntax("control character inside a string (a string must end on the line it starts)") }
            if byte == UInt8(ascii: "\\") {
                flush(upTo: index)
                index += 1
                guard index < bytes.count else { break }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    guard bytes.count - index >= 4,
                          let code = UInt32(String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<index + 4]), as: UTF8.self), radix: 16)
                    else { throw syntax("\\u needs four hex digits") }
                    index += 4
                    scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                default:
                    throw syntax("unknown escape '\\\(printable(escaped))' in a string")
                }
                chunkStart = index
                continue
            }
            index += 1
        }
        throw syntax("unterminated string")
    }
}

// MARK: - CSV

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

// MARK: - Fields

/// A field's text: bytes inside the input, or a decoded string.
struct FieldText {
    private let bytes: UnsafeBufferPointer<UInt8>?
    private let decoded: String?

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        decoded = nil
    }

    init(text: String) {
        bytes = nil
        decoded = text
    }

    var text: String { decoded ?? String(decoding: bytes!, as: UTF8.self) }

    /// The bytes when the field is still in the input (else decode `text`).
    var utf8: UnsafeBufferPointer<UInt8>? { bytes }
}

/// The three fields' rules, shared by both formats.
enum SleepInputFields {
    static func stage(_ field: FieldText, line: Int) throws(SleepInputError) -> SleepStage {
        if let bytes = field.utf8, let stage = asciiStage(bytes) { return stage }
        let text = field.text
        guard let stage = SleepStage(name: text) else {
            throw SleepInputError(line: line, field: "stage", message: "\(quoted(text)) is not awake, light, deep, rem or 0…3")
        }
        return stage
    }

    /// `awake`, `light`, `deep`, `rem` in any ASCII case, or `0`…`3`.
    static func asciiStage(_ bytes: UnsafeBufferPointer<UInt8>) -> SleepStage? {
        if bytes.count == 1 {
            let digit = bytes[0] &- UInt8(ascii: "0")
            return digit < 4 ? SleepStage(rawValue: digit) : nil
        }
        func lower(_ index: Int) -> UInt8 { bytes[index] | 0x20 }
        func equals(_ word: StaticString) -> Bool {
            word.withUTF8Buffer { utf8 in utf8.indices.allSatisfy { lower($0) == utf8[$0] } }
        }
        switch bytes.count {
        case 5 where equals("awake"): return .awake
        case 5 where equals("light"): return .light
        case 4 where equals("deep"): return .deep
        case 3 where equals("rem"): return .rem
        default: return nil
        }
    }

    /// Whole Unix seconds, or an ISO 8601 date-time with a zone (`2026-01-14T22:00:00+01:00`, `…Z`).
    static func start(_ field: FieldText, line: Int) throws(SleepInputError) -> Int64 {
        if let bytes = field.utf8 {
            if let seconds = asciiInteger(bytes) ?? ISO8601Seconds.parse(bytes) { return seconds }
        }
        let text = field.text
        if let seconds = wholeSeconds(text) { return seconds }
        if text.contains("T"), let date = try? Date(text, strategy: .iso8601), date.timeIntervalSince1970.isFinite {
            return Int64(date.timeIntervalSince1970.rounded(.down))
        }
        throw SleepInputError(line: line, field: "start",
                              message: "\(quoted(text)) is neither whole Unix seconds nor an ISO 8601 time with a zone (2026-01-14T22:00:00+01:00)")
    }

    static func seconds(_ field: FieldText, line: Int, field name: String) throws(SleepInputError) -> Int64 {
        if let bytes = field.utf8, let seconds = asciiInteger(bytes) { return seconds }
        let text = field.text
        guard let seconds = wholeSeconds(text) else {
            throw SleepInputError(line: line, field: name, message: "\(quoted(text)) is not a whole number of seconds")
        }
        return seconds
    }

    /// An optional sign and up to 18 ASCII digits (which cannot overflow); anything else is nil
    /// and goes the general way (`wholeSeconds`).
    static func asciiInteger(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            index = 1
        }
        let digits = bytes.count - index
        guard digits > 0, digits <= 18 else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
            index += 1
        }
        return negative ? -value : value
    }

    /// Integers, and numbers like `1700000000.0` or `6e2` whose value is whole and fits Int64.
    static func wholeSeconds(_ text: String) -> Int64? {
        if let value = Int64(text) { return value }
        guard text.first.map({ $0.isNumber || $0 == "-" }) == true, let value = Double(text), value.isFinite,
              value == value.rounded(), abs(value) < 9.0e18
        else { return nil }
        return Int64(value)
    }

    static func quoted(_ text: String) -> String {
        let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
        return "\"\(shown)\""
    }
}

/// The common form of an ISO 8601 time, `YYYY-MM-DDTHH:MM:SS` with `Z` or `±HH:MM`, straight
/// from bytes. Anything else (fractions, other separators, out-of-range values) is nil and left
/// to Foundation's parser, so this never accepts what that one would refuse.
enum ISO8601Seconds {
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count == 20 || bytes.count == 25 else { return nil }
        func digits(_ at: Int, _ count: Int) -> Int? {
            var value = 0
            for index in at..<at + count {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
              let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
              year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var offset = 0
        if bytes.count == 20 {
            guard bytes[19] == UInt8(ascii: "Z") else { return nil }
        } else {
            let sign = bytes[19]
            guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"), bytes[22] == UInt8(ascii: ":"),
                  let offsetHours = digits(20, 2), let offsetMinutes = digits(23, 2), offsetHours < 24, offsetMinutes < 60
            else { return nil }
            offset = (offsetHours * 3_600 + offsetMinutes * 60) * (sign == UInt8(ascii: "-") ? -1 : 1)
        }
        let days = LocalDate(year: year, month: month, day: day).daysSince1970
        return Int64(days) * 86_400 + Int64(hour * 3_600 + minute * 60 + second - offset)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
