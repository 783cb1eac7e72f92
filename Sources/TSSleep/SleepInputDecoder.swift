import Foundation
import TSModels

/// The two file formats of raw sleep items (docs/cli.md, "Sleep analysis input").
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
