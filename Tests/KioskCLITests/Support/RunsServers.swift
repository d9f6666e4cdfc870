import KioskTestSupport
import Testing

/// Runs each test it is given to inside a ``TestLoadSlots`` slot: for tests that run `kiosk` servers as processes
/// (crashes, replicas, the kill campaign, the README), which no test-store helper holds one for.
struct RunsServers: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    /// One slot a test case, not one around the whole suite.
    func scopeProvider(for test: Test, testCase: Test.Case?) -> RunsServers? {
        testCase == nil ? nil : self
    }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTestLoadSlot { try await function() }
    }
}

extension Trait where Self == RunsServers {
    /// The test (or every test of the suite) runs `kiosk` servers as processes: it holds a ``TestLoadSlots`` slot.
    static var runsServers: Self { RunsServers() }
}
