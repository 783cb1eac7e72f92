import Foundation
import Testing
import TSModels

@Suite struct SleepModelTests {
    @Test func stageDecodesFromNameOrWireNumber() throws {
        let decoded = try JSONDecoder().decode([SleepStage].self, from: Data(#"["awake", "LIGHT", 2, "rem"]"#.utf8))
        #expect(decoded == [.awake, .light, .deep, .rem])
    }

    @Test func stageRejectsUnknownValues() throws {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([SleepStage].self, from: Data(#"["nap"]"#.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([SleepStage].self, from: Data("[4]".utf8)) }
    }

    @Test func stageEncodesAsName() throws {
        let json = try JSONEncoder().encode([SleepStage.deep])
        #expect(String(decoding: json, as: UTF8.self) == #"["deep"]"#)
    }
}
