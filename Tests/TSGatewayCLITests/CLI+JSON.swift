import Foundation
import Testing
import TSTestSupport

extension CLI {
    /// The JSON `tsgateway` prints for `arguments`, which must succeed.
    func json(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> Any {
        let result = try await runDetached(arguments, environment: extra)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }
}
