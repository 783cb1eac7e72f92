import Foundation
import TSModels

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
