import Foundation
import Logging

/// Timestamped steps of a command at info level (`-v`): `phase: NAME at SECONDS`, wall-clock
/// Unix seconds with milliseconds, so a harness can set them beside its own clock and take the
/// differences (scripts/e2e/suite prints a sync's breakdown from them).
public enum PhaseLog {
    public static func log(_ phase: String, at date: Date = Date(), to logger: Logger) {
        logger.info("phase: \(phase) at \(String(format: "%.3f", date.timeIntervalSince1970))")
    }
}
