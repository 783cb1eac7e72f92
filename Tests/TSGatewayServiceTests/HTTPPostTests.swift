import Foundation
import Testing
@testable import TSGatewayService

/// A loopback port whose connections the kernel completes and nobody ever answers.
final class SilentListener {
    let socket: Int32
    let port: UInt16

    init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.socket = socket
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && listen(socket, 8) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else {
            close(socket)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)/api/v1/sleep")! }
    deinit { close(socket) }
}


/// The uploader's POST through libcurl opened at run time: its answers and each way it fails.
@Suite struct HTTPPostTests {
    @Test func anAnswerCarriesItsStatusAndBody() async throws {
        let server = try ScriptedServer(script: ["sequence": [201]])
        defer { server.stop() }
        let answer = try await HTTPPost.send(to: server.endpoint, headers: [("Content-Type", "application/json"), ("Idempotency-Key", "k:1")],
                                             body: Data(#"{"source_id":"k:1"}"#.utf8), timeout: .seconds(30))
        #expect(answer.status == 201)
        #expect(String(decoding: answer.body, as: UTF8.self).contains("\"session_id\""), "\(String(decoding: answer.body, as: UTF8.self))")
        let headers = try #require(server.requests().first?["headers"] as? [String: String])
        #expect(headers["idempotency-key"] == "k:1" && headers["content-type"] == "application/json")
        #expect(headers["expect"] == nil, "no 100-continue round trip")
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let silent = try SilentListener()
        await #expect(throws: HTTPPost.Failure.timedOut) {
            try await HTTPPost.send(to: silent.url, headers: [], body: Data("{}".utf8), timeout: .milliseconds(700))
        }
    }

    /// Were the flag not watched, the POST would end as `.timedOut` after its two minutes.
    @Test func cancellingTheTaskEndsTheTransfer() async throws {
        let silent = try SilentListener()
        let url = silent.url
        let post = Task { try await HTTPPost.send(to: url, headers: [], body: Data("{}".utf8), timeout: .seconds(120)) }
        try await Task.sleep(for: .milliseconds(300))
        post.cancel()
        await #expect(throws: HTTPPost.Failure.cancelled) { try await post.value }
    }

    @Test func httpsToAPlainHTTPServerIsATLSFailure() async throws {
        let server = try ScriptedServer(script: [:])
        defer { server.stop() }
        var parts = try #require(URLComponents(url: server.endpoint, resolvingAgainstBaseURL: false))
        parts.scheme = "https"
        let url = try #require(parts.url)
        do {
            _ = try await HTTPPost.send(to: url, headers: [], body: Data("{}".utf8), timeout: .seconds(30))
            Issue.record("a TLS handshake with a plain HTTP server succeeded")
        } catch {
            guard case .tls = error else { Issue.record("expected a TLS failure, got \(error)"); return }
        }
    }

    @Test func onlyHTTPAndHTTPSAreSpoken() async throws {
        do {
            _ = try await HTTPPost.send(to: URL(fileURLWithPath: "/etc/passwd"), headers: [], body: Data(), timeout: .seconds(5))
            Issue.record("a file: URL was read")
        } catch {
            guard case .failed = error else { Issue.record("expected a refused protocol, got \(error)"); return }
        }
    }
}
