import CCurl
import Foundation

/// One HTTP POST, through libcurl opened on first use (`CCurl`): the uploader's only use of the
/// network, so a gateway without an upload endpoint never maps libcurl's libraries.
enum HTTPPost {
    /// Why a POST got no HTTP answer.
    enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case noLibrary(String)
        case timedOut
        case refused
        case unresolved
        case tls(String)
        case cancelled
        case failed(String)

        var description: String {
            switch self {
            case let .noLibrary(words), let .tls(words), let .failed(words): words
            case .timedOut: "timed out"
            case .refused: "connection refused"
            case .unresolved: "the host name did not resolve"
            case .cancelled: "cancelled"
            }
        }
    }

    struct Answer: Sendable {
        var status: Int
        var body: Data
    }

    /// Whether libcurl can be opened; the loader's words when it cannot.
    static func load() throws(Failure) {
        if let problem = tsg_http_load() { throw .noLibrary(String(cString: problem)) }
    }

    /// POSTs `body` with `headers`; at most `timeout` for the whole exchange. Cancelling the task
    /// ends the transfer within about a second (libcurl's progress callback watches a flag).
    static func send(to url: URL, headers: [(String, String)], body: Data, timeout: Duration) async throws(Failure) -> Answer {
        let flag = CancelFlag()
        let lines = headers.map { "\($0.0): \($0.1)" }
        let milliseconds = max(1, Int(timeout.components.seconds) * 1000 + Int(timeout.components.attoseconds / 1_000_000_000_000_000))
        let result: Result<Answer, Failure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // libcurl's perform blocks its thread: not one of the cooperative pool's.
                let thread = Thread {
                    continuation.resume(returning: perform(url: url.absoluteString, lines: lines, body: body, milliseconds: milliseconds, cancel: flag))
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
        } onCancel: {
            flag.set()
        }
        return try result.get()
    }

    private static func perform(url: String, lines: [String], body: Data, milliseconds: Int, cancel: CancelFlag) -> Result<Answer, Failure> {
        var result = tsg_http_result()
        let pointers = lines.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        var constPointers = pointers.map { UnsafePointer($0) }
        body.withUnsafeBytes { bytes in
            constPointers.withUnsafeMutableBufferPointer { headers in
                tsg_http_post(url, headers.baseAddress, headers.count, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count,
                              milliseconds, cancel.pointer, &result)
            }
        }
        defer { tsg_http_result_free(&result) }
        let message = withUnsafeBytes(of: result.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        switch result.outcome {
        case TSG_HTTP_ANSWERED:
            let body = result.body.map { Data(bytes: $0, count: result.body_length) } ?? Data()
            return .success(Answer(status: result.status, body: body))
        case TSG_HTTP_NO_LIBRARY: return .failure(.noLibrary(message))
        case TSG_HTTP_TIMED_OUT: return .failure(.timedOut)
        case TSG_HTTP_REFUSED: return .failure(.refused)
        case TSG_HTTP_UNRESOLVED: return .failure(.unresolved)
        case TSG_HTTP_TLS: return .failure(.tls(message))
        case TSG_HTTP_CANCELLED: return .failure(.cancelled)
        default: return .failure(.failed(message))
        }
    }

    /// The flag libcurl's progress callback reads; set from the cancelling task (atomically, in C).
    private final class CancelFlag: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<CInt>
        init() {
            pointer = .allocate(capacity: 1)
            pointer.initialize(to: 0)
        }
        deinit { pointer.deallocate() }
        func set() { tsg_http_cancel(pointer) }
    }
}
