import Foundation
import Testing

@testable import KioskStore

/// The console's renderer never dresses its own failure up as a page that worked.
@Suite struct ConsoleRendererTests {
    // Proves a page whose template is not in the build answers 500, not a 200 page; one that is answers 200.
    @Test func aMissingTemplateIsTheStoresFailure() async throws {
        let renderer = try await ConsoleRenderer.load()
        let missing = renderer.page(NoSuchPage(), title: "Nothing", section: "Overview", session: nil)
        #expect(missing.status == .internalServerError)
        let signIn = renderer.page(
            SignInPage(next: "/console", tokenFirst: false), title: "Sign in", section: "", session: nil)
        #expect(signIn.status == .ok)
    }

    /// A page whose template the build does not have.
    private struct NoSuchPage: ConsoleView {
        static let template = "no-such-page"
    }
}
