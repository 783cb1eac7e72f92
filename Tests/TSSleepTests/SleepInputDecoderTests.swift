import Foundation
import Testing
import TSModels
@testable import TSSleep

@Suite struct SleepInputDecoderTests {
    private func decode(_ text: String, _ format: SleepInputFormat) throws(SleepInputError) -> [SleepItem] {
        try SleepInputDecoder.decode(Data(text.utf8), format: format)
    }

    private func failure(_ text: String, _ format: SleepInputFormat) -> SleepInputError? {
        do {
            _ = try decode(text, format)
            return nil
        } catch {
            return error
        }
    }

    private static let sample: [SleepItem] = {
        var generator = SeededGenerator(state: 17)
        return (0..<2_000).map { index in
            SleepItem(stage: SleepStage(rawValue: UInt8.random(in: 0...3, using: &generator))!,
                      start: 1_700_000_000 + Int64(index) * 60 + Int64.random(in: 0...30, using: &generator),
                      duration: Int64.random(in: 1...7_200, using: &generator))
        }
    }()

    // MARK: Both formats read what they should

    @Test func jsonEncoderOutputReadsBackExactly() throws {
        let json = String(decoding: try JSONEncoder().encode(Self.sample), as: UTF8.self)
        #expect(try decode(json, .json) == Self.sample)
        let pretty = JSONEncoder()
        pretty.outputFormatting = [.prettyPrinted, .sortedKeys]
        #expect(try decode(String(decoding: try pretty.encode(Self.sample), as: UTF8.self), .json) == Self.sample)
    }

    @Test func csvReadsBackExactly() throws {
        let csv = Self.sample.map { "\($0.stage.name),\($0.start),\($0.duration)" }.joined(separator: "\n")
        #expect(try decode(csv, .csv) == Self.sample)
        #expect(try decode("\u{FEFF}duration,extra,STAGE,start\r\n" + Self.sample.map { "\($0.duration),x,\($0.stage.rawValue),\($0.start)" }.joined(separator: "\r\n") + "\r\n", .csv)
            == Self.sample)
    }

    @Test func jsonMembersInAnyOrderOthersSkippedLastDuplicateWins() throws {
        let json = """
            [{"note": {"deep": [1, 2.5e3, "x\\"y", null, true, false, {}]}, "duration": 60, "start": "1768428000",
              "stage": "LIGHT", "st\\u0061ge": "Rem", "extra": -0.5E-2},
             {"stage": 0, "start": 1768428060.0, "duration": 6e2}]
            """
        #expect(try decode(json, .json) == [SleepItem(stage: .rem, start: 1_768_428_000, duration: 60),
                                           SleepItem(stage: .awake, start: 1_768_428_060, duration: 600)])
        #expect(try decode("\u{FEFF} [ ] \n", .json) == [])
    }

    @Test func csvQuotesBlanksCommentsAndUnicodeWhitespace() throws {
        let csv = """
            # exported by hand

              "deep" , "1768428000",\t600\u{20}
            \u{00A0}rem\u{00A0},2026-01-14T23:00:00+01:00,60
            \u{3000}# a comment after an ideographic space
            3,1768428660,"60"
            """
        #expect(try decode(csv, .csv) == [
            SleepItem(stage: .deep, start: 1_768_428_000, duration: 600),
            SleepItem(stage: .rem, start: 1_768_428_000, duration: 60),
            SleepItem(stage: .rem, start: 1_768_428_660, duration: 60),
        ])
    }

    @Test func formatComesFromTheNameElseTheFirstVisibleByte() {
        #expect(SleepInputFormat.detect(name: "night.JSON", bytes: Array("light,1,1".utf8)) == .json)
        #expect(SleepInputFormat.detect(name: "night.csv", bytes: Array("[]".utf8)) == .csv)
        #expect(SleepInputFormat.detect(name: "-", bytes: Array("\u{FEFF} \n[{}]".utf8)) == .json)
        #expect(SleepInputFormat.detect(name: "night.txt", bytes: Array("stage,start,duration".utf8)) == .csv)
    }

    // MARK: ISO 8601 starts

    /// The byte-level reader of the common form must give Foundation's answer for every time it
    /// accepts, and leave every other form to Foundation.
    @Test func isoStartsAgreeWithFoundation() throws {
        var generator = SeededGenerator(state: 99)
        for _ in 0..<3_000 {
            let seconds = Int64.random(in: -2_000_000_000...8_000_000_000, using: &generator)
            let offsetMinutes = Int.random(in: -18 * 60...18 * 60, using: &generator)
            let zone = try #require(TimeZone(secondsFromGMT: offsetMinutes * 60))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            let sign = offsetMinutes < 0 ? "-" : "+"
            let suffix = offsetMinutes == 0 && Bool.random(using: &generator) ? "Z"
                : String(format: "%@%02d:%02d", sign, abs(offsetMinutes) / 60, abs(offsetMinutes) % 60)
            let text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!) + suffix
            let fast = Array(text.utf8).withUnsafeBufferPointer { ISO8601Seconds.parse($0) }
            let foundation = try Date(text, strategy: .iso8601)
            #expect(fast == seconds, "\(text)")
            #expect(Int64(foundation.timeIntervalSince1970) == seconds, "\(text)")
        }
        for other in ["2026-01-14T22:00:00.750Z", "2026-01-14T22:00:00+0100", "2026-02-30T22:00:00Z", "2026-01-14 22:00:00Z", "2026-01-14T24:00:00Z"] {
            #expect(Array(other.utf8).withUnsafeBufferPointer { ISO8601Seconds.parse($0) } == nil, "\(other)")
            let viaDecoder = try? decode("light,\(other),60", .csv).first?.start
            let viaFoundation = (try? Date(other, strategy: .iso8601)).map { Int64($0.timeIntervalSince1970.rounded(.down)) }
            #expect(viaDecoder == viaFoundation, "\(other)")
        }
    }

    // MARK: Errors name the line and the field

    @Test func jsonFieldErrorsNameTheValuesLine() {
        let json = "[\n  {\"stage\": \"light\", \"start\": 1768428000, \"duration\": 600},\n  {\"stage\": \"light\",\n   \"start\": true, \"duration\": 60}\n]\n"
        #expect(failure(json, .json) == SleepInputError(line: 4, field: "start",
            message: "\"<a boolean>\" is neither whole Unix seconds nor an ISO 8601 time with a zone (2026-01-14T22:00:00+01:00)"))
        #expect(failure("[{\"stage\": \"nap\",\n \"start\": 1, \"duration\": 1}]", .json)
            == SleepInputError(line: 1, field: "stage", message: "\"nap\" is not awake, light, deep, rem or 0…3"))
        #expect(failure("[{\"stage\": 1, \"start\": 1,\n\n \"duration\": 1.5}]", .json)
            == SleepInputError(line: 3, field: "duration", message: "\"1.5\" is not a whole number of seconds"))
        #expect(failure("[{\"stage\": 1, \"start\": 1, \"duration\": 99999999999999999999}]", .json)?.field == "duration")
        #expect(failure("[\n{},\n{\"stage\": 1, \"start\": 1}]", .json) == SleepInputError(line: 2, field: "stage", message: "missing"))
        #expect(failure("[{\"stage\": 1, \"start\": 1},\n{}]", .json) == SleepInputError(line: 1, field: "duration", message: "missing"))
        #expect(failure("[{\"stage\": 1, \"start\": 1, \"duration\": 1},\n 7]", .json)
            == SleepInputError(line: 2, field: nil, message: "expected an object with stage, start and duration, found a number"))
        // The first problem in the file is the one reported, even when a syntax error follows.
        #expect(failure("[1,\n {\"a\" 1}]", .json)
            == SleepInputError(line: 1, field: nil, message: "expected an object with stage, start and duration, found a number"))
        #expect(failure("\n{\"stage\": 1}", .json) == SleepInputError(line: 2, field: nil, message: "expected a JSON array of sleep items, found an object"))
    }

    @Test func jsonSyntaxErrorsNameLineAndColumn() {
        let cases: [(String, Int, String)] = [
            ("[\n {\"stage\": \"light\" \"start\": 1}\n]", 2, "not valid JSON at column 20: unexpected character '\"' in an object, expected ',' or '}'"),
            ("", 1, "not valid JSON at column 1: unexpected end of input, expected a value"),
            ("[{\"stage\": \"li\nght\"}]", 1, "not valid JSON at column 15: control character inside a string (a string must end on the line it starts)"),
            ("[{\"stage\": tru}]", 1, "not valid JSON at column 12: unexpected character 't', expected a value"),
            ("[{\"stage\": \"\\q\"}]", 1, "not valid JSON at column 15: unknown escape '\\q' in a string"),
            ("[{\"a\": 1,}]", 1, "not valid JSON at column 10: expected a quoted member name in an object"),
            ("[{\"a\" 1}]", 1, "not valid JSON at column 7: expected ':' after member name \"a\""),
            ("[{\"stage\": -}]", 1, "not valid JSON at column 13: a number needs digits"),
            ("[{\"stage\": 1, \"start\": 1, \"duration\": 1} 2]", 1, "not valid JSON at column 42: unexpected character '2' in an array, expected ',' or ']'"),
            ("[]\n[]", 2, "not valid JSON at column 1: unexpected text after the end of the JSON value"),
            ("[{\"stage\": \"x", 1, "not valid JSON at column 14: unterminated string"),
            ("[{\"stage\": 1", 1, "not valid JSON at column 13: unexpected end of input inside an object, expected ',' or '}'"),
        ]
        for (text, line, message) in cases {
            #expect(failure(text, .json) == SleepInputError(line: line, field: nil, message: message), "\(text)")
        }
        let deep = "[{\"x\": " + String(repeating: "[", count: 300) + String(repeating: "]", count: 300) + "}]"
        #expect(failure(deep, .json)?.message.contains("nesting deeper than 200 levels") == true)
    }

    @Test func csvErrorsNameLineAndField() {
        #expect(failure("stage,start,duration\nlight,1768428000,600\n\nlight,1768429000,ten minutes\n", .csv)
            == SleepInputError(line: 4, field: "duration", message: "\"ten minutes\" is not a whole number of seconds"))
        #expect(failure("light,1768428000,60\nlight,1768428060\n", .csv)
            == SleepInputError(line: 2, field: "duration", message: "missing (a row is stage,start,duration)"))
        #expect(failure("light,1768428000,60\r\nnap,1768428060,60\r\n", .csv)
            == SleepInputError(line: 2, field: "stage", message: "\"nap\" is not awake, light, deep, rem or 0…3"))
        #expect(failure("# c\nstage,duration\n", .csv) == SleepInputError(line: 2, field: "start", message: "the header line has no \"start\" column"))
        #expect(failure("light,2026-13-01T00:00:00Z,60", .csv)?.field == "start")
        #expect(failure("light,\(String(repeating: "9", count: 50)),60", .csv)
            == SleepInputError(line: 1, field: "start", message: "\"\(String(repeating: "9", count: 40))…\" is neither whole Unix seconds nor an ISO 8601 time with a zone (2026-01-14T22:00:00+01:00)"))
        #expect(failure("light,1,60\nlicht\u{00A0},1,60", .csv)
            == SleepInputError(line: 2, field: "stage", message: "\"licht\" is not awake, light, deep, rem or 0…3"))
    }

    @Test func integersBeyondEighteenDigitsGoTheGeneralWay() throws {
        #expect(try decode("light,-9223372036854775808,+9223372036854775807", .csv)
            == [SleepItem(stage: .light, start: .min, duration: .max)])
        #expect(failure("light,1,9223372036854775808", .csv)?.field == "duration")
        #expect(try decode("light,+17,0060", .csv) == [SleepItem(stage: .light, start: 17, duration: 60)])
        #expect(failure("light,1,-", .csv)?.field == "duration")
    }
}
