import TSModels
import TSTransport
import Testing

@Suite("the answer timings `simulate --answer-timing` takes")
struct AnswerTimingTests {
    @Test func itTakesItsWordsAndRefusesOthers() throws {
        #expect(try AnswerTiming(text: "immediate") == .immediate)
        #expect(try AnswerTiming(text: "before-response") == .beforeResponse)
        #expect(try AnswerTiming(text: "late") == .late(AnswerTiming.defaultLateness))
        #expect(try AnswerTiming(text: "late:2500") == .late(.milliseconds(2500)))
        #expect(AnswerTiming.late(.milliseconds(2500)).description == "late:2500")
        let unknown = try #require(throws: AnswerTimingError.self) { try AnswerTiming(text: "slow") }
        #expect(unknown.description.contains("immediate, before-response, late, late:MS"), "\(unknown)")
        let negative = try #require(throws: AnswerTimingError.self) { try AnswerTiming(text: "late:-5") }
        #expect(negative.description.contains("0 … 60000 milliseconds"), "\(negative)")
        #expect(throws: AnswerTimingError.self) { try AnswerTiming(text: "late:") }
    }

    /// Before the response only where the central writes requests: a characteristic without write
    /// commands would refuse a central that only writes commands (NPK, QRing) outright.
    @Test func beforeResponseTakesWriteCommandsAwayOnlyFromACentralThatCanWriteRequests() {
        let both = ["write", "write-without-response"]
        for timing in [AnswerTiming.immediate, .late(.milliseconds(10))] {
            for mode in [GATTProfile.WriteMode.withResponse, .withoutResponse, .withoutResponseWhenAllowed] {
                #expect(timing.answeringWriteFlags(centralWrites: mode) == both, "\(timing) \(mode)")
            }
        }
        #expect(AnswerTiming.beforeResponse.answeringWriteFlags(centralWrites: .withResponse) == ["write"])
        #expect(AnswerTiming.beforeResponse.answeringWriteFlags(centralWrites: .withoutResponseWhenAllowed) == ["write"])
        #expect(AnswerTiming.beforeResponse.answeringWriteFlags(centralWrites: .withoutResponse) == both)
    }
}
