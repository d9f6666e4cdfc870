import KioskCore
import Testing

@Suite struct UnicodeControlTests {
    /// The direct comparison agrees with Unicode's own general category for every scalar there is.
    @Test func controlCharactersAreExactlyCategoryCc() {
        let disagreeing = (0...0x10FFFF).compactMap(Unicode.Scalar.init).filter {
            $0.isControl != ($0.properties.generalCategory == .control)
        }
        #expect(disagreeing.isEmpty, "\(disagreeing.prefix(10).map(\.hexCode))")
    }
}
