import Foundation

/// Delivers each event to every current subscriber; a subscriber leaves by ending its stream.
public final class EventFanOut<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuations: [UUID: AsyncStream<Element>.Continuation] = [:]
    private let buffer: Int

    /// `buffer`: events kept for a subscriber that falls behind (the newest win).
    public init(buffer: Int) { self.buffer = buffer }

    public func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(buffer))
        let id = UUID()
        lock.withLock { continuations[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.lock.withLock { _ = self?.continuations.removeValue(forKey: id) } }
        return stream
    }

    /// Subscribers now. A stream leaves when it is finished, when a task reading it is
    /// cancelled, or once the stream and its iterators are gone.
    public var subscriberCount: Int { lock.withLock { continuations.count } }

    /// Ends every subscriber's stream (the link they follow ended); later subscribers start anew.
    public func finishAll() {
        for continuation in lock.withLock({ () -> [AsyncStream<Element>.Continuation] in
            defer { continuations.removeAll() }
            return Array(continuations.values)
        }) { continuation.finish() }
    }

    public func send(_ element: Element) {
        for continuation in lock.withLock({ Array(continuations.values) }) { continuation.yield(element) }
    }
}
