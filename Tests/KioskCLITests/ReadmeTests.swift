import Foundation
import KioskTestSupport
import Testing

/// The README, run as written: its shell and Python blocks, in order, against a fresh store and merchant
/// (`ReadmeScript` says what it substitutes). A command that fails fails the test, naming its README line.
@Suite(.runsServers) struct ReadmeTests {
    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theReadmeRunsAsWritten() async throws {
        let readme = try String(contentsOf: Self.checkout.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = ReadmeScript.runnableBlocks(in: readme)
        try #require(blocks.contains { $0.language == "python" }, "the README shows no Python example")
        let python = TestEnvironment.isCI ? try TestEnvironment.require(.python) : TestEnvironment.value(.python)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let setting = ReadmeScript.Setting(
            binaries: KioskProcess.executable.deletingLastPathComponent(), checkout: Self.checkout, python: python,
            storePort: try freeLoopbackPort(), merchantPort: try freeLoopbackPort())
        let script = directory.appendingPathComponent("readme.sh")
        try ReadmeScript.script(for: blocks, setting: setting).write(to: script, atomically: true, encoding: .utf8)

        let result = try await KioskProcess.run(
            ["-c", "cd \(ReadmeScript.quoted(directory.path)) && exec bash readme.sh"],
            executable: URL(fileURLWithPath: "/bin/bash"), timeout: 900)
        let output = result.stdout + result.stderr
        #expect(
            result.status == 0,
            "the README failed as written:\n\(result.stdout.suffix(6_000))\n-- stderr:\n\(result.stderr.suffix(4_000))"
        )
        print(Self.sectionTimes(in: result.stdout, ended: Date()))

        // What the README says those commands print.
        for promise in [
            "production USA: NOT available", "Balance: 300 coins", "Balance: 0 coins, ads removed",
            "ads are shown again", "Balance: 400 coins, ads shown.", "\"status\":0",
            "Imported", "coins: 200 (200 from 1 purchase)", "4 store transactions, 1 grant, 2 findings",
            "Balance at the merchant for alice: 300 coins", "\"status\":\"ok\"", "\"type\":\"subscriptionGroups\"",
            "consumable                 pass", "refund-before-purchase     pass", "forged-notification        pass",
            "subscription-renewals      not made", " passed, 0 failed, ",
        ] {
            #expect(output.contains(promise), "the README promises '\(promise)'")
        }
        if python != nil {
            #expect(output.contains("Verified com.example.coins.100 "), "Apple's verifier decoded the transaction")
        }
    }

    /// The README's Swift block is `Examples/ReadmeShop/Shop.swift`, which every `swift build` compiles: the README
    /// never shows KioskKit code that does not build.
    @Test func theReadmesSwiftIsTheExampleThatBuilds() throws {
        let readme = try String(contentsOf: Self.checkout.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(
            contentsOf: Self.checkout.appendingPathComponent("Examples/ReadmeShop/Shop.swift"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().compactMap {
            $0.components(separatedBy: "```\n").first
        }
        #expect(blocks.count == 1, "the README shows one Swift block")
        #expect(blocks.first == example, "the README's Swift block is Examples/ReadmeShop/Shop.swift, verbatim")
    }

    /// Each README section and how long its commands took, from the script's `README-SECTION` lines.
    static func sectionTimes(in output: String, ended: Date) -> String {
        let marks: [(String, Double)] = output.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("README-SECTION "), let space = line.lastIndex(of: " "),
                let time = Double(line[line.index(after: space)...])
            else { return nil }
            return (String(line[line.index(line.startIndex, offsetBy: 15)..<space]), time)
        }
        var lines = ["README sections, as run:"]
        for (index, mark) in marks.enumerated() {
            let end = index + 1 < marks.count ? marks[index + 1].1 : ended.timeIntervalSince1970
            lines.append(String(format: "  %6.1f s  %@", end - mark.1, mark.0))
        }
        return lines.joined(separator: "\n")
    }
}
