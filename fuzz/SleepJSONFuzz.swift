// libFuzzer entry point for `sleep analyze`'s JSON scanner (target sleep-json of scripts/fuzz).

import TSSleep

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    checkSleepInput(data, size, format: .json)
    return 0
}
