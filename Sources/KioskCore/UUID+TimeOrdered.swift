import Foundation

extension UUID {
    /// A time-ordered (version 7, RFC 9562) UUID: `time`'s milliseconds since 1970 in its first 48 bits, then 74 bits
    /// from the system's generator, in one `getrandom` call.
    ///
    /// The store's hot paths key their rows by these (payments, notifications). A random key puts each insert into a
    /// random leaf page of its index, so SQLite's one writer wrote one page per index per row to its log; keys that
    /// grow with time land on the few pages at the index's end, which one commit's rows share. And Foundation's
    /// `UUID()` on Linux opens, reads and closes `/dev/urandom` for every UUID, which a profile of renewals showed at 4%
    /// of their CPU. Times before 1970 count as 1970; the 48 bits last until the year 10889.
    public static func timeOrdered(at time: Date) -> UUID {
        var generator = SystemRandomNumberGenerator()
        let milliseconds = UInt64(clamping: time.millisecondsSince1970) & 0xFFFF_FFFF_FFFF
        let high = milliseconds << 16 | 0x7000 | (generator.next() & 0x0FFF)  // version 7, 12 random bits
        let low = generator.next() & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000  // RFC 9562 variant, 62 random bits
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64(index)))
            bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64(index)))
        }
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
