/// Arithmetic for the public operations, which may be handed uncleaned, absurd items: results
/// saturate at the Int64 limits instead of trapping. The processor itself only sees cleaned items,
/// whose values are far from the limits.
extension Int64 {
    @inline(__always)
    func plus(_ other: Int64) -> Int64 {
        let (value, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : value
    }

    @inline(__always)
    func minus(_ other: Int64) -> Int64 {
        let (value, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : value
    }

    @inline(__always)
    func times(_ other: Int64) -> Int64 {
        let (value, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) == (other < 0) ? .max : .min) : value
    }
}
