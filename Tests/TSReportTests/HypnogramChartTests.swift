import Foundation
import Testing
import TSModels
import TSReport
import TSSleep

@Suite("hypnogram SVG")
struct HypnogramChartTests {
    static func night(from start: String, _ steps: [(SleepStage, Int64)], zone: TimeZone = Zone.berlin) throws -> DailySleepModel {
        let days = SleepProcessor.process(run(from: at(start, zone), steps), rule: .withNap, timeZone: zone)
        let day = try #require(days.first { !$0.nightSleeps.isEmpty })
        #expect(day.nightSleeps.count == 1)
        return day
    }

    @Test("each block's width is proportional to its item's duration, and the blocks sit end to end")
    func widthsProportionalToDurations() throws {
        let steps: [(SleepStage, Int64)] = [(.light, 10), (.deep, 25), (.light, 90), (.rem, 40), (.awake, 5), (.light, 60), (.deep, 3)]
        let day = try Self.night(from: "2026-11-19 23:00", steps)
        let chart = try SVGElement.parse(HypnogramChart.svg(day.nightSleeps, kind: .night, date: day.date, zone: Zone.berlin, width: 720))
        let blocks = chart.elements("rect", class: "stage")
        #expect(blocks.map { $0.classes.subtracting(["stage"]) } == steps.map { [$0.0.name] })
        let widths = blocks.compactMap { $0.number("width") }
        let perMinute = widths[0] / 10
        for (width, step) in zip(widths, steps) {
            #expect(abs(width - Double(step.1) * perMinute) < 0.02, "\(step): \(width) px")
        }
        // Together they fill the plot (720 wide, 50 on the left, 12 on the right).
        #expect(abs(widths.reduce(0, +) - 658) < 0.05)
        let starts = blocks.compactMap { $0.number("x") }
        for index in 1..<starts.count {
            #expect(abs(starts[index] - (starts[index - 1] + widths[index - 1])) < 0.02)
        }
        // Each block is in its stage's lane: awake on top, then REM, light, deep.
        let laneOf = Dictionary(blocks.map { ($0.classes.subtracting(["stage"]).first!, $0.number("y")!) }, uniquingKeysWith: { first, _ in first })
        #expect(laneOf["awake"]! < laneOf["rem"]! && laneOf["rem"]! < laneOf["light"]! && laneOf["light"]! < laneOf["deep"]!)
    }

    static func ticks(_ chart: SVGElement) -> [(label: String, x: Double)] {
        chart.elements("text", class: "tick").map { ($0.text, $0.number("x") ?? -1) }
    }

    @Test("across the end of summer time in Berlin the axis shows 02:00 twice, one hour apart")
    func fallBackNight() throws {
        // 22:00 CEST on 24 October 2026 for ten hours: 07:00 CET on the 25th.
        let hour: [(SleepStage, Int64)] = [(.light, 60), (.deep, 60)]
        let day = try Self.night(from: "2026-10-24 22:00", Array(repeating: hour, count: 5).flatMap { $0 })
        #expect(day.date.description == "2026-10-25")
        let chart = try SVGElement.parse(HypnogramChart.svg(day.nightSleeps, kind: .night, date: day.date, zone: Zone.berlin))
        let ticks = Self.ticks(chart)
        #expect(ticks.map(\.label) == ["22:00", "23:00", "00:00", "01:00", "02:00", "02:00", "03:00", "04:00", "05:00", "06:00", "07:00"])
        // Elapsed time, not wall-clock time, sets the spacing: eleven marks, ten equal hours.
        for index in 1..<ticks.count {
            #expect(abs(ticks[index].x - ticks[index - 1].x - 65.8) < 0.02, "\(ticks[index])")
        }
        #expect(chart.attributes["aria-label"]?.contains("22:00 to 07:00 (Europe/Berlin)") == true)
        #expect(chart.attributes["aria-label"]?.contains("the clocks changed during it (UTC+02:00 to UTC+01:00)") == true)
    }

    @Test("across the start of summer time the axis skips 02:00")
    func springForwardNight() throws {
        // 22:00 CET on 28 March 2026 for nine hours: 08:00 CEST on the 29th.
        let day = try Self.night(from: "2026-03-28 22:00", [(.light, 120), (.deep, 90), (.rem, 60), (.light, 150), (.rem, 120)])
        let chart = try SVGElement.parse(HypnogramChart.svg(day.nightSleeps, kind: .night, date: day.date, zone: Zone.berlin))
        #expect(Self.ticks(chart).map(\.label) == ["22:00", "23:00", "00:00", "01:00", "03:00", "04:00", "05:00", "06:00", "07:00", "08:00"])
    }

    @Test("the labels are in the zone the report is for")
    func labelsFollowTheZone() throws {
        let day = try Self.night(from: "2026-10-24 22:00", [(.light, 120), (.deep, 120)])
        let chart = try SVGElement.parse(HypnogramChart.svg(day.nightSleeps, kind: .night, date: day.date, zone: Zone.newYork))
        #expect(Self.ticks(chart).map(\.label) == ["16:00", "17:00", "18:00", "19:00", "20:00"])
    }

    @Test("a standalone file is a well-formed SVG document with its own light and dark style")
    func standaloneDocument() throws {
        let day = try Self.night(from: "2026-11-19 23:00", Nights.ordinaryNight)
        let document = try #require(HypnogramChart.document(day, zone: Zone.berlin))
        #expect(document.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\""))
        let root = try SVGElement.parse(document)
        #expect(root.children.map(\.name).prefix(2) == ["title", "style"])
        #expect(root.children[1].text.contains("@media (prefers-color-scheme: dark)"))
        #expect(root.elements("text", class: "heading").first?.text == "Night to Fri 20 Nov 2026 · 23:00–05:25 · Europe/Berlin")
        #expect(root.elements("rect", class: "stage").count == Nights.ordinaryNight.count)

        var napOnly = day
        napOnly.nightSleeps = []
        #expect(HypnogramChart.document(napOnly, zone: Zone.berlin) == nil)
    }
}
