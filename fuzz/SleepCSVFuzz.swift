// libFuzzer entry point for `sleep analyze`'s CSV scanner (target sleep-csv of scripts/fuzz).

import TSSleep

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    checkSleepInput(data, size, format: .csv)
    return 0
}
