import Foundation
import Testing
import TSModels
import TSReport
import TSSleep

@Suite("sleep report page")
struct SleepReportPageTests {
    static func page(_ days: [DailySleepModel], name: String? = "bedroom", rule: StatisticsRule = .withNap) -> String {
        SleepReportPage.html(SleepReportInput(
            watchId: WatchID("AA:BB:CC:DD:EE:01")!, watchName: name, timeZone: Zone.berlin, rule: rule,
            first: LocalDate(year: 2026, month: 11, day: 16), last: LocalDate(year: 2026, month: 11, day: 20), days: days,
            generated: at("2026-11-20 09:15")))
    }

    @Test("one hypnogram per night, one per nap, the day bars and three trends; every chart has a text alternative")
    func chartsPerNight() throws {
        let days = Nights.threeNightsAndANap()
        #expect(days.map(\.date.description) == ["2026-11-18", "2026-11-19", "2026-11-20"])
        #expect(days.map(\.nightSleeps.count) == [1, 1, 1] && days.map(\.validNaps.count) == [0, 1, 0])
        let charts = try SVGElement.charts(inPage: Self.page(days))
        let nights = charts.filter { $0.classes.isSuperset(of: ["hypnogram", "night"]) }
        #expect(nights.map { $0.attributes["data-date"] } == ["2026-11-20", "2026-11-19", "2026-11-18"])
        #expect(charts.filter { $0.classes.isSuperset(of: ["hypnogram", "nap"]) }.map { $0.attributes["data-date"] } == ["2026-11-19"])
        #expect(charts.filter { $0.classes.contains("stage-bars") }.count == 1)
        #expect(charts.filter { $0.classes.contains("trend") }.map { $0.classes.subtracting(["chart", "trend"]) } == [["total"], ["efficiency"], ["quality"]])
        #expect(charts.count == 3 + 1 + 1 + 3)
        for chart in charts {
            let label = try #require(chart.attributes["aria-label"])
            #expect(chart.attributes["role"] == "img")
            #expect(label.count > 40, "\(label)")
            #expect(chart.children.first?.name == "title" && chart.children.first?.text == label)
        }
        // Each night's hypnogram draws exactly that night's items.
        for (chart, day) in zip(nights, days.reversed()) {
            #expect(chart.elements("rect", class: "stage").count == day.nightSleeps.flatMap(\.detailItems).count)
        }
    }

    @Test("the day bars stack each day's stages and mark the day with a nap")
    func stageBars() throws {
        let days = Nights.threeNightsAndANap()
        let bars = try #require(try SVGElement.charts(inPage: Self.page(days)).first { $0.classes.contains("stage-bars") })
        let groups = bars.elements("g", class: "day")
        #expect(groups.map { $0.attributes["data-date"] } == ["2026-11-18", "2026-11-19", "2026-11-20"])
        #expect(groups.map { $0.elements("circle", class: "nap-mark").count } == [0, 1, 0])
        // Stacked heights are in proportion to the stage durations: the 19th, with its nap, is the tallest.
        let heights = groups.map { $0.elements("rect", class: "stage").compactMap { $0.number("height") }.reduce(0, +) }
        let seconds = days.map { day in SleepStage.allCases.map { day.metrics.stageDurations[$0] }.reduce(0, +) }
        for (height, total) in zip(heights, seconds) {
            #expect(abs(height / Double(total) - heights[0] / Double(seconds[0])) < 0.0001)
        }
        #expect(heights[1] > heights[0] && heights[1] > heights[2])
    }

    @Test("the trends give the averages of the nights")
    func trendAverages() throws {
        let days = Nights.threeNightsAndANap()
        let charts = try SVGElement.charts(inPage: Self.page(days))
        let total = try #require(charts.first { $0.classes.contains("total") })
        #expect(total.elements("circle", class: "point").count == 3)
        let averageSeconds = days.map(\.dailySummary.totalSleepDuration).reduce(0, +) / 3
        let minutes = averageSeconds / 60
        let expected = "average \(minutes / 60)h\(String(format: "%02d", minutes % 60))"
        #expect(total.elements("text", class: "average-label").first?.text == expected)
        let quality = try #require(charts.first { $0.classes.contains("quality") })
        let averageQuality = Double(days.map { Int($0.dailySummary.qualityScore) }.reduce(0, +)) / 3
        #expect(quality.elements("text", class: "average-label").first?.text == "average \(Int(averageQuality.rounded()))")
    }

    @Test("night heart rate: a trend with each night's range when the segments have it, nothing when they do not")
    func nightHeartRate() throws {
        let without = Self.page(Nights.threeNightsAndANap())
        #expect(try SVGElement.charts(inPage: without).allSatisfy { !$0.classes.contains("heart-rate") })
        #expect(!without.localizedCaseInsensitiveContains("heart rate"))

        var days = Nights.threeNightsAndANap()
        days[0].nightSleeps[0].heartRate = HeartRateSummary(minimum: 48, average: 55.5, maximum: 70, samples: 400)
        days[2].nightSleeps[0].heartRate = HeartRateSummary(minimum: 50, average: 58, maximum: 76, samples: 380)
        let page = Self.page(days)
        let trend = try #require(try SVGElement.charts(inPage: page).first { $0.classes.contains("heart-rate") })
        #expect(trend.elements("circle", class: "point").count == 2)
        let ranges = trend.elements("line", class: "range")
        #expect(ranges.count == 2)
        // Each whisker runs from the night's lowest to its highest rate: 22 and 26 bpm tall, on one scale.
        let lengths = ranges.compactMap { line in line.number("y1").flatMap { low in line.number("y2").map { low - $0 } } }
        #expect(lengths.count == 2 && abs(lengths[0] / 22 - lengths[1] / 26) < 0.01)
        #expect(trend.elements("text", class: "average-label").first?.text == "average 57 bpm")
        #expect(page.contains("heart rate 48–70 bpm, average 56"))
        #expect(page.contains("<th scope=\"col\">heart rate</th>"))
    }

    @Test("a night of several segments has the heart rate of all of them, weighted by samples")
    func heartRateOfSegments() {
        var days = Nights.threeNightsAndANap()
        var second = days[0].nightSleeps[0]
        second.heartRate = HeartRateSummary(minimum: 45, average: 60, maximum: 80, samples: 300)
        days[0].nightSleeps[0].heartRate = HeartRateSummary(minimum: 40, average: 50, maximum: 60, samples: 100)
        days[0].nightSleeps.append(second)
        #expect(days[0].nightHeartRate == HeartRateSummary(minimum: 40, average: 57.5, maximum: 80, samples: 400))
        #expect(days[1].nightHeartRate == nil)
    }

    @Test("self-contained: no script, nothing from the network, rule and time zone stated, light and dark")
    func selfContained() {
        let page = Self.page(Nights.threeNightsAndANap())
        #expect(!page.localizedCaseInsensitiveContains("<script"))
        #expect(page.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"))
        let links = page.components(separatedBy: "http").dropFirst().map { String($0.prefix(30)) }
        #expect(links.allSatisfy { $0.hasPrefix("://www.w3.org/2000/svg\"") || $0.hasPrefix("-equiv") }, "\(links)")
        #expect(page.contains("Statistics rule <strong>1</strong>, with naps"))
        #expect(page.contains("Times in <strong>Europe/Berlin</strong>"))
        #expect(page.contains("@media (prefers-color-scheme: dark)"))
        #expect(page.contains("on 2026-11-20 at 09:15 (Europe/Berlin)"))
    }

    @Test("names from the watch are escaped")
    func escaping() {
        let page = Self.page(Nights.threeNightsAndANap(), name: "<b>Bob's & \"watch\"</b>")
        #expect(page.contains("&lt;b&gt;Bob&#39;s &amp; &quot;watch&quot;&lt;/b&gt;"))
        #expect(!page.contains("<b>Bob"))
    }

    @Test("a range without sleep says so and draws nothing")
    func empty() throws {
        let page = Self.page([])
        #expect(page.contains("No sleep was recorded from 2026-11-16 to 2026-11-20"))
        #expect(try SVGElement.charts(inPage: page).isEmpty)
    }

    @Test("rule 3's daytime segment is drawn as daytime sleep")
    func longestOnlyDaytime() throws {
        let items = run(from: at("2026-11-19 13:00"), [(.light, 60), (.deep, 60), (.light, 60)])
        let days = SleepProcessor.process(items, rule: .longestOnly, timeZone: Zone.berlin)
        #expect(days.first?.daytimeSleeps.count == 1 && days.first?.nightSleeps.isEmpty == true)
        let charts = try SVGElement.charts(inPage: Self.page(days, rule: .longestOnly))
        #expect(charts.filter { $0.classes.contains("hypnogram") }.map { $0.classes.subtracting(["chart", "hypnogram"]) } == [["daytime"]])
    }
}
