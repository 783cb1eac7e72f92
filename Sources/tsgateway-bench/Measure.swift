import Foundation

/// Wall-clock seconds of the fastest of `repetitions` runs of `body` (the minimum is the figure
/// least disturbed by the rest of the machine).
func fastestSeconds(repetitions: Int = 5, _ body: () throws -> Void) rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<max(1, repetitions) {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        best = min(best, elapsed)
    }
    return best
}

/// Keeps a value alive so the optimiser cannot drop the work that produced it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

func formatRate(_ perSecond: Double, unit: String) -> String {
    switch perSecond {
    case 1e9...: String(format: "%.2f G%@/s", perSecond / 1e9, unit)
    case 1e6...: String(format: "%.2f M%@/s", perSecond / 1e6, unit)
    case 1e3...: String(format: "%.2f k%@/s", perSecond / 1e3, unit)
    default: String(format: "%.2f %@/s", perSecond, unit)
    }
}
