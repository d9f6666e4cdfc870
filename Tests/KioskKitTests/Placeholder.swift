import Testing

@Suite struct KioskKitPlaceholderTests {
    @Test func placeholder() { #expect(Bool(true)) }
}
