import Foundation
import Testing
import TSModels

@Suite struct WatchIDTests {
    @Test func anAddressInAnyCaseIsOneWatch() throws {
        let lower = try #require(WatchID("aa:bb:cc:0d:ee:ff"))
        let upper = try #require(WatchID("AA:BB:CC:0D:EE:FF"))
        #expect(lower == upper)
        #expect(lower.rawValue == "AA:BB:CC:0D:EE:FF")
        #expect(Set([lower, upper]).count == 1)
    }

    @Test func whatIsNotAnAddressIsNoWatchID() {
        for text in ["", "bedroom", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA-BB-CC-DD-EE-FF", "GG:BB:CC:DD:EE:FF", " AA:BB:CC:DD:EE:FF"] {
            #expect(WatchID(text) == nil, "\(text)")
        }
    }

    @Test func itTravelsAsItsTextAndRefusesAnythingElse() throws {
        let id = try #require(WatchID("00:00:5e:00:53:01"))
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == #"["00:00:5E:00:53:01"]"#)
        #expect(try JSONDecoder().decode([WatchID].self, from: data) == [id])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([WatchID].self, from: Data(#"["kitchen"]"#.utf8)) }
    }
}
