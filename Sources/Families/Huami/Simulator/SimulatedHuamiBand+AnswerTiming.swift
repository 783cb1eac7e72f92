import Foundation
import TSHuami

/// Answers held while a write is handled, for `AnswerTiming.late`.
enum HeldAnswer: Sendable {
    case notification(SimulatedHuamiBand.Characteristic, [UInt8])
    /// A link loss a fault caused while the write was handled: it comes after the answers before it.
    case linkLoss
}

extension SimulatedHuamiBand {
    /// Runs the handler of one write; with `late` timing its answers are held and go out once it
    /// has returned, after the delay and after every earlier write's answers.
    func answering(_ handle: () async -> Void) async {
        guard case let .late(delay) = configuration.answerTiming else {
            await handle()
            return
        }
        holding.append([])
        await handle()
        let held = holding.removeLast()
        guard !held.isEmpty else { return }
        let earlier = lateAnswers
        lateAnswers = Task { [weak self] in
            await earlier?.value
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            for answer in held {
                guard let self else { return }
                switch answer {
                case let .notification(characteristic, bytes): await self.deliver(characteristic, bytes)
                case .linkLoss: await self.deliverLinkLoss()
                }
            }
        }
    }
}
