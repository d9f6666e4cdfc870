import Foundation
import Hummingbird

/// Where one page of a long console list is in the whole list ("Testers 101–200 of 10,000"), with links to the
/// neighbouring pages; nil when one page holds the whole list.
struct ConsolePager: Decodable {
    var summary: String
    var previousHref: String?
    var nextHref: String?

    /// `noun` names the items ("Products"); `href` makes the link to a page number.
    init?(_ noun: String, page: Int, size: Int, shown: Int, total: Int, href: (Int) -> String) {
        guard total > size || page > 1 else { return nil }
        let first = (page - 1) * size + 1
        summary =
            shown == 0
            ? "No \(noun.lowercased()) on page \(page): there are \(total)."
            : "\(noun) \(first)–\(first + shown - 1) of \(total)."
        previousHref = page > 1 ? href(min(page - 1, max(1, (total + size - 1) / size))) : nil
        nextHref = page * size < total ? href(page + 1) : nil
    }

    /// The page number a request asks for with `?page=`: 1 when absent or not a number, kept within 1–1,000,000.
    static func page(of request: Request) -> Int {
        request.uri.queryParameters.get("page").flatMap { Int($0) }.map { min(max($0, 1), 1_000_000) } ?? 1
    }
}
