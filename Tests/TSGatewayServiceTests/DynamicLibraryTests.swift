import CDynamicLibrary
import Foundation
import Testing

/// The one loader CCurl and CMosquitto open their libraries with: its words for a missing file
/// or entry point are what the uploader's and MQTT's "needs libcurl / libmosquitto" messages carry.
@Suite("the dlopen loader of the C shims") struct DynamicLibraryTests {
    /// A `tsg_library` as a shim declares one, its strings and tables alive for the test process.
    struct Library {
        let state: UnsafeMutablePointer<tsg_library>
        let addresses: UnsafeMutablePointer<UnsafeMutableRawPointer?>

        init(name: String, files: [String], symbols: [String],
             setUp: (@convention(c) (UnsafeMutablePointer<CChar>?, Int) -> Int32)? = nil) {
            let fileNames = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: files.count + 1)
            for (index, file) in files.enumerated() { fileNames[index] = UnsafePointer(strdup(file)) }
            fileNames[files.count] = nil
            addresses = .allocate(capacity: symbols.count)
            addresses.initialize(repeating: nil, count: symbols.count)
            let table = UnsafeMutablePointer<tsg_symbol>.allocate(capacity: symbols.count)
            for (index, symbol) in symbols.enumerated() { table[index] = tsg_symbol(symbol: strdup(symbol), address: addresses + index) }
            state = .allocate(capacity: 1)
            state.initialize(to: tsg_library())
            state.pointee.name = UnsafePointer(strdup(name))
            state.pointee.files = UnsafePointer(fileNames)
            state.pointee.symbols = UnsafePointer(table)
            state.pointee.symbol_count = symbols.count
            state.pointee.set_up = setUp
            pthread_mutex_init(&state.pointee.lock, nil)
        }

        /// nil when ready, else the loader's words.
        func open() -> String? { tsg_library_open(state).map { String(cString: $0) } }
    }

    @Test func aMissingFileIsNamedByTheLastOneTriedAndTheAnswerStays() {
        let library = Library(name: "libabsent", files: ["libtsgateway-absent.so.9", "libtsgateway-absent-too.so.1"], symbols: ["strlen"])
        #expect(library.open() == "libtsgateway-absent-too.so.1: cannot open shared object file: No such file or directory")
        #expect(library.open() == "libtsgateway-absent-too.so.1: cannot open shared object file: No such file or directory")
        #expect(library.addresses[0] == nil)
    }

    @Test func aMissingEntryPointIsNamedWithItsLibrary() {
        let library = Library(name: "libc", files: ["libc.so.6"], symbols: ["strlen", "tsg_no_such_function"])
        #expect(library.open() == "libc has no tsg_no_such_function")
    }

    @Test func everyEntryPointFoundIsReadyAndCallable() throws {
        let library = Library(name: "libc", files: ["libtsgateway-absent.so.9", "libc.so.6"], symbols: ["strlen"])
        #expect(library.open() == nil)
        let strlen = unsafeBitCast(try #require(library.addresses[0]), to: (@convention(c) (UnsafePointer<CChar>) -> Int).self)
        #expect(strlen("tsgateway") == 9)
    }

    @Test func aLibrarysOwnSetUpThatFailsIsItsWords() {
        let library = Library(name: "libc", files: ["libc.so.6"], symbols: ["strlen"]) { error, length in
            if let error { strncpy(error, "set-up refused", length - 1) }
            return -1
        }
        #expect(library.open() == "set-up refused")
    }
}
