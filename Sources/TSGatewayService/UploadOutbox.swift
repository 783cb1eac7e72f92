import Foundation
import Logging
import TSModels
import TSGatewayAPI
import TSStore

/// Uploads the store's outbox to the configured endpoint: oldest first, one request at a time.
///
/// Each event is POSTed as JSON with `Idempotency-Key: <source id>` (and `Authorization:
/// Bearer TOKEN` when a token is set). The answer decides:
/// - 2xx: synced (the `id`, `data.id` or `data.session_id` of a JSON answer is kept);
/// - 409: synced — the server already has this source id;
/// - 400: failed, with the server's reason; not retried until `tsgateway outbox retry`;
/// - anything else (other statuses, timeouts, refused connections, unknown hosts): stays
///   pending and is retried after `retryMinimum · 2^(attempts-1)` (at most `retryMaximum`),
///   times a random factor 0.8…1.2 so that many gateways do not retry in step.
///
/// Delivery is at least once: a gateway that stops between a successful POST and marking the
/// event synced sends the same body again after its restart, with the same source id, and the
/// server's deduplication answers 409, which counts as synced. The server therefore holds each
/// night once. An event is never dropped: only a 2xx or a 409 takes it out of the pending set,
/// and a 400 keeps it (failed) for inspection and retry.
///
/// Bodies hold health data and the token is a secret: neither is ever logged, only source ids
/// and statuses.
public actor UploadOutbox {
    private let store: GatewayStore
    private let settings: GatewayConfiguration.UploadSettings
    private let logger: Logger
    private let publish: (@Sendable (String) -> Void)?
    /// Whether the disk holding the database takes writes; a result it refused is said there once.
    private let storage: StorageHealth?
    private var waiter: CheckedContinuation<Void, Never>?
    private var wakePending = false
    private var pauseGeneration: UInt64 = 0

    /// `publish` is called with the source id of each event once the server has it (2xx or 409).
    public init(store: GatewayStore, settings: GatewayConfiguration.UploadSettings, logger: Logger, publish: (@Sendable (String) -> Void)? = nil,
                storage: StorageHealth? = nil) {
        self.store = store
        self.storage = storage
        self.settings = settings
        self.logger = logger
        self.publish = publish
    }

    /// Uploads what is due, then waits for the next due event, `settings.interval` or `wake()`,
    /// whichever comes first; until the task is cancelled.
    public func run() async {
        logger.info("upload outbox: uploading to \(endpointDescription)")
        while !Task.isCancelled {
            await uploadDue()
            if Task.isCancelled { break }
            var delay = settings.interval.timeInterval
            do {
                if let next = try await store.nextOutboxAttempt() {
                    delay = min(delay, max(0, next.timeIntervalSinceNow))
                }
            } catch {
                logger.warning("upload outbox: cannot read the outbox: \(error)")
            }
            await pause(seconds: delay)
        }
    }

    /// New events were enqueued: look at the outbox now instead of at the next interval.
    public func wake() {
        if let waiter {
            self.waiter = nil
            waiter.resume()
        } else {
            wakePending = true
        }
    }

    /// Uploads every event that is due now, oldest first, one at a time. Returns how many
    /// requests were made (or attempted).
    @discardableResult
    public func uploadDue() async -> Int {
        var attempts = 0
        while !Task.isCancelled {
            let due: [OutboxEvent]
            do {
                // A retry set further ahead than the longest backoff was set before the clock stepped back.
                let now = Date()
                due = try await store.dueOutboxEvents(now: now, steppedBackAfter: now + settings.retryMaximum.timeInterval * 1.2 + 60, limit: 20)
            } catch {
                logger.warning("upload outbox: cannot read the outbox: \(error)")
                return attempts
            }
            if due.isEmpty { return attempts }
            for event in due {
                if Task.isCancelled { return attempts }
                let outcome = await send(event)
                attempts += 1
                do {
                    try await record(outcome, of: event)
                } catch {
                    // The row stays as it was: pending, so it is sent again (and deduplicated by the server).
                    if storage?.noticed(error) != true { logger.warning("upload outbox: \(event.sourceId): cannot record the result: \(error)") }
                    return attempts
                }
            }
        }
        return attempts
    }

    /// What one attempt came to.
    enum Outcome: Sendable {
        case synced(status: Int, backendId: String?, note: String?)
        case failed(status: Int, reason: String)
        case retry(status: Int?, error: String)
    }

    func send(_ event: OutboxEvent) async -> Outcome {
        var headers = [("Content-Type", "application/json"), ("Accept", "application/json"), ("Idempotency-Key", event.sourceId)]
        if let token = settings.token { headers.append(("Authorization", "Bearer \(token)")) }
        let http: HTTPPost.Answer
        do {
            http = try await HTTPPost.send(to: settings.endpoint, headers: headers, body: Data(event.payload.utf8), timeout: settings.timeout)
        } catch {
            return .retry(status: nil, error: describe(error))
        }
        let data = http.body
        switch http.status {
        case 200..<300:
            return .synced(status: http.status, backendId: Self.backendId(in: data), note: nil)
        case 409:
            return .synced(status: 409, backendId: Self.backendId(in: data), note: "already on the server (409 Conflict on its source id)")
        case 400:
            return .failed(status: 400, reason: Self.reason(in: data) ?? "400 Bad Request (no reason given)")
        default:
            let reason = Self.reason(in: data).map { ": \($0)" } ?? ""
            return .retry(status: http.status, error: "HTTP \(http.status) \(Self.statusPhrase(http.status))\(reason)")
        }
    }

    /// The server's answer is stored even when the daemon stops meanwhile: a night the server
    /// took is not sent again.
    private func record(_ outcome: Outcome, of event: OutboxEvent) async throws {
        let store = self.store
        switch outcome {
        case let .synced(status, backendId, note):
            try await shieldedFromCancellation { try await store.markOutboxSynced(id: event.id, httpStatus: status, backendId: backendId, note: note) }
            logger.info("upload outbox: \(event.sourceId) synced (HTTP \(status))")
            publish?(event.sourceId)
        case let .failed(status, reason):
            try await shieldedFromCancellation { try await store.markOutboxFailed(id: event.id, httpStatus: status, reason: reason) }
            logger.warning("upload outbox: \(event.sourceId) refused (HTTP \(status)); not retried until `tsgateway outbox retry`")
        case let .retry(status, error):
            let attempts = event.attempts + 1
            let delay = Self.backoff(attempts: attempts, minimum: settings.retryMinimum, maximum: settings.retryMaximum)
            let next = Date().addingTimeInterval(delay)
            try await shieldedFromCancellation { try await store.markOutboxRetry(id: event.id, httpStatus: status, error: error, nextAttemptAt: next) }
            logger.notice("upload outbox: \(event.sourceId) attempt \(attempts) failed (\(status.map { "HTTP \($0)" } ?? "no answer")); next in \(String(format: "%.1f", delay))s")
        }
    }

    /// `minimum · 2^(attempts-1)`, at most `maximum`, times 0.8…1.2 — in seconds.
    static func backoff(attempts: Int, minimum: Duration, maximum: Duration, jitter: Double = Double.random(in: 0.8...1.2)) -> TimeInterval {
        let exponent = Double(min(max(attempts - 1, 0), 62))
        let base = min(maximum.timeInterval, minimum.timeInterval * pow(2, exponent))
        return base * jitter
    }

    /// `id`, `data.id` or `data.session_id` of a JSON answer, as text.
    static func backendId(in data: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        func text(_ value: Any?) -> String? {
            switch value {
            case let string as String: string
            case let number as NSNumber: number.stringValue
            default: nil
            }
        }
        let nested = object["data"] as? [String: Any]
        return text(object["id"]) ?? text(nested?["id"]) ?? text(nested?["session_id"])
    }

    /// The server's reason: `message`, `error` (text or `{message}`), `detail`, or the body's
    /// text; at most 500 characters.
    static func reason(in data: Data) -> String? {
        var reason: String?
        if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            let error = object["error"]
            reason = object["message"] as? String
                ?? (error as? String)
                ?? ((error as? [String: Any])?["message"] as? String)
                ?? object["detail"] as? String
        }
        if reason == nil {
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            reason = text.isEmpty ? nil : text
        }
        return reason.map { $0.count > 500 ? String($0.prefix(499)) + "…" : $0 }
    }

    /// Host and port only: a URL may carry credentials.
    private var endpointDescription: String {
        let url = settings.endpoint
        return "\(url.scheme ?? "http")://\(url.host ?? "?")\(url.port.map { ":\($0)" } ?? "")\(url.path)"
    }

    private func describe(_ error: HTTPPost.Failure) -> String {
        let target = "\(settings.endpoint.host ?? "?")\(settings.endpoint.port.map { ":\($0)" } ?? "")"
        switch error {
        case .timedOut: return "no answer from \(target) within \(String(format: "%g", settings.timeout.timeInterval))s (timed out)"
        case .refused: return "cannot connect to \(target) (connection refused)"
        case .unresolved: return "cannot resolve the host \(settings.endpoint.host ?? "?") (DNS)"
        case let .tls(words): return "TLS failed with \(target): \(words)"
        case .cancelled: return "cancelled"
        case let .noLibrary(words): return "uploads need libcurl (sudo apt install libcurl4): \(words)"
        case let .failed(words): return "request to \(target) failed: \(words)"
        }
    }

    /// The reason phrase of an HTTP status the uploader retries on (RFC 9110's words).
    static func statusPhrase(_ status: Int) -> String {
        switch status {
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: status >= 500 ? "server error" : "client error"
        }
    }

    /// Sleeps `seconds`, or less if `wake()` is called or the task is cancelled.
    private func pause(seconds: TimeInterval) async {
        if wakePending {
            wakePending = false
            return
        }
        guard seconds > 0, !Task.isCancelled else { return }
        pauseGeneration &+= 1
        let generation = pauseGeneration
        let timer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up))))
            await self?.endPause(generation)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume()
                } else {
                    waiter = continuation
                }
            }
        } onCancel: {
            Task { await self.endPause(generation) }
        }
        timer.cancel()
    }

    private func endPause(_ generation: UInt64) {
        guard generation == pauseGeneration, let waiter else { return }
        self.waiter = nil
        waiter.resume()
    }
}
