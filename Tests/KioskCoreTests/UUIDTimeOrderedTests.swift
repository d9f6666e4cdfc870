import Foundation
import KioskCore
import Testing

@Suite("UUID.timeOrdered")
struct UUIDTimeOrderedTests {
    /// The ids of payments and notifications: version 7 with the RFC 9562 variant, in the canonical text form that
    /// `UUID(uuidString:)` reads back, distinct, and led by the time in milliseconds.
    @Test func isAVersion7UUIDLedByItsTimeAndDoesNotRepeat() {
        let time = Date(millisecondsSince1970: 1_767_225_600_123)
        var seen: Set<UUID> = []
        for _ in 0..<10_000 {
            let uuid = UUID.timeOrdered(at: time)
            let text = uuid.uuidString
            #expect(text.count == 36)
            #expect(text.hasPrefix("019B76DA-A87B-7"), "time and version digits of \(text)")
            #expect("89AB".contains(Array(text)[19]), "variant digit of \(text)")
            #expect(UUID(uuidString: text) == uuid)
            seen.insert(uuid)
        }
        #expect(seen.count == 10_000)
    }

    /// Later ids sort after earlier ones as text, upper or lower case, which is how the store's indexes order them.
    @Test func laterIdsSortAfterEarlierOnesAsText() {
        let times = stride(from: Int64(0), through: 253_402_300_799_999, by: 9_876_543_210_987).map {
            Date(millisecondsSince1970: $0)
        }
        let texts = times.map { UUID.timeOrdered(at: $0).uuidString }
        #expect(texts == texts.sorted())
        #expect(texts.map { $0.lowercased() } == texts.map { $0.lowercased() }.sorted())
        #expect(UUID.timeOrdered(at: Date(timeIntervalSince1970: -86_400)).uuidString.hasPrefix("00000000-0000-7"))
    }
}
