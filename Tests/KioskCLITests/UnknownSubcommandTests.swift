import KioskTestSupport
import Testing

/// A mistyped subcommand, as a user types it: the error names the word and the subcommand meant, where
/// ArgumentParser alone said "Unknown option '--app'".
@Suite struct UnknownSubcommandTests {
    @Test func aTypoNamesTheNearestSubcommand() async throws {
        let typo = try await KioskProcess.run(["test", "refnd", "--app", "com.example.coins", "2000000000000001"])
        #expect(typo.status == 64, "a usage error: \(typo.stderr)")
        Self.expect(
            typo.stderr,
            startsWith: "error: 'refnd' is not a subcommand of `kiosk test`.\n  at:  refnd\n"
                + "  fix: Did you mean `kiosk test refund`?")

        let nested = try await KioskProcess.run(["merchant", "reconcle", "--environment", "sandbox"])
        #expect(nested.status == 64, "\(nested.stderr)")
        Self.expect(nested.stderr, startsWith: "error: 'reconcle' is not a subcommand of `kiosk merchant`.")
        #expect(nested.stderr.contains("Did you mean `kiosk merchant reconcile`?"), "\(nested.stderr)")

        // Nothing near: the subcommands are listed instead of a guess.
        let far = try await KioskProcess.run(["apps", "zzzzzzzz", "--app", "x"])
        #expect(far.status == 64, "\(far.stderr)")
        #expect(
            far.stderr.contains("'zzzzzzzz' is not a subcommand of `kiosk apps`") && far.stderr.contains("Use one of: ")
                && !far.stderr.contains("Did you mean"), "\(far.stderr)")
    }

    /// Checks `text` starts with `prefix`, showing both when it does not.
    static func expect(_ text: String, startsWith prefix: String) {
        #expect(text.hasPrefix(prefix), "\(text)\n-- expected to start with --\n\(prefix)")
    }
}
