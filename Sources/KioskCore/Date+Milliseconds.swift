import Foundation

extension Date {
    /// Whole milliseconds since 1970: how every timestamp is stored (BIGINT on both engines) and how Apple's
    /// signed payloads write dates.
    public var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded())
    }

    /// The date `milliseconds` after 1970-01-01T00:00:00Z.
    public init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
