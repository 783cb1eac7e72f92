import CMalloc

/// The daemon's malloc heap over months of running. glibc gives threads that allocate at the
/// same time arenas of their own (up to 8 per core: 16 on a two-core Pi) and keeps what is freed
/// in them for reuse instead of returning it. With the cooperative pool, Dispatch's workers, the
/// D-Bus loop and libmosquitto's thread all allocating, a soak of `tsgateway serve` (debug build,
/// 8 simulated watches, a driver at both doors) had 16 arenas holding 13.1 MB for 7.7 MB in use,
/// and over the next 5 minutes the arenas grew by 1.1 MB while the memory in use fell by 0.1 MB:
/// resident memory rising at several MiB an hour with nothing retained (heaptrack: what was
/// allocated after warm-up and was still live grew by about 1 MiB an hour). Fewer arenas and a
/// periodic trim hand the free pages back.
public enum DaemonHeap {
    /// Arenas the daemon's threads share. Two keep contention low on the two cooperative threads
    /// of a small machine; the daemon's work is I/O-bound, not allocation-bound.
    public static let arenaLimit: Int32 = 2
    /// How often the free pages of every arena go back to the system.
    public static let trimInterval: Duration = .seconds(60)

    /// At most `arenaLimit` arenas from now on; call before the daemon starts its threads (arenas
    /// made before stay). False when the C library refused.
    @discardableResult
    public static func limitArenas() -> Bool { mallopt(M_ARENA_MAX, arenaLimit) == 1 }

    /// Hands the free pages of every arena back to the system (`malloc_trim`). True when some were.
    @discardableResult
    public static func trim() -> Bool { malloc_trim(0) == 1 }

    /// Bytes the program holds allocated, and bytes the allocator holds from the system for it
    /// (arenas and separately mapped blocks): the difference is free space kept for reuse.
    public static func usage() -> (allocated: Int, held: Int) {
        let info = mallinfo2()
        return (Int(info.uordblks + info.hblkhd), Int(info.arena + info.hblkhd))
    }

    /// Until cancelled: `trim()` every `interval`.
    static func trimPeriodically(every interval: Duration = trimInterval) async {
        while (try? await Task.sleep(for: interval)) != nil { trim() }
    }
}
