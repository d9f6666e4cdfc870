import Foundation
import KioskCore
import Testing

@Suite("UUID.random")
struct UUIDRandomTests {
    @Test
    func isAVersion4UUIDAndDoesNotRepeat() {
        // Proves the UUIDs the store's hot paths make are what `UUID()` makes: version 4, RFC 4122 variant, in the
        // canonical text form, and distinct.
        var seen: Set<UUID> = []
        for _ in 0..<10_000 {
            let uuid = UUID.random()
            let text = uuid.uuidString
            #expect(text.count == 36)
            #expect(Array(text)[14] == "4", "version digit of \(text)")
            #expect("89AB".contains(Array(text)[19]), "variant digit of \(text)")
            #expect(UUID(uuidString: text) == uuid)
            seen.insert(uuid)
        }
        #expect(seen.count == 10_000)
    }
}
