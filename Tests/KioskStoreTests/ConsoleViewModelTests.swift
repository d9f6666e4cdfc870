import Foundation
import KioskCore
import Mustache
import Testing

@testable import KioskStore

/// Every console page is drawn from a typed view, so a misspelt value is a compile error on the Swift side. These
/// tests hold the other side: every name a template uses (`{{name}}`, `{{{name}}}`, `{{#name}}`, `{{^name}}`, dotted,
/// inside sections) resolves against its view, the layout's values and the sections around it, as swift-mustache
/// resolves it; and every value a view has is drawn. They read no database.
@Suite struct ConsoleViewModelTests {
    /// Every page's view; each names the template that draws it.
    static var views: [any ConsoleView.Type] {
        [
            AccountPage.self, AgreementsPage.self, AppPage.self, AppsPage.self, AuditPage.self, CatalogPage.self,
            CheckPage.self, ChecksPage.self, CustomerPage.self, CustomersPage.self, ErrorPage.self, HealthPage.self,
            KeyCreatedPage.self, KeysPage.self, MoneyPage.self, NotificationsPage.self, OverviewPage.self,
            ProductPage.self, RetentionPage.self, SandboxPage.self, SignInPage.self, SubscriptionsPage.self,
            TeamPage.self,
            TeamPasswordPage.self,
        ]
    }

    /// Every view's template checked against a full sample of the view, inside a full sample of the layout.
    static func checkAll() async throws -> TemplateCheck {
        let renderer = try await ConsoleRenderer.load()
        var check = TemplateCheck(library: renderer.library)
        let layout = try ConsoleLayout(from: SampleDecoder())
        for view in views {
            check.check(view.template, root: [try view.init(from: SampleDecoder()), layout])
        }
        return check
    }

    // Proves a template names only values its page has: a misspelt tag or a renamed property fails here.
    @Test func everyNameATemplateUsesResolves() async throws {
        let check = try await Self.checkAll()
        for problem in check.problems { Issue.record(Comment(rawValue: problem)) }
        #expect(check.read.count > 100)
    }

    // Proves no view carries a value its template never draws (the layout's `can` names every permission, drawn or
    // not).
    @Test func everyValueAViewHasIsDrawn() async throws {
        let check = try await Self.checkAll()
        let unread = check.declared.subtracting(check.read).filter { !$0.hasPrefix("ConsolePermissions.") }
        #expect(unread.sorted() == [])
    }

    // Proves the check itself catches a misspelt name in a section and a misspelt dotted name.
    @Test func theCheckCatchesMisspeltNames() async throws {
        var library = try await ConsoleRenderer.load().library
        try library.register(
            "{{<layout}}{{$main}}{{#apps}}<a href=\"{{bundleId}}\">{{nmae}}</a>{{/apps}}"
                + "{{#can.manageCatalg}}{{csrf}}{{/can.manageCatalg}}{{/main}}{{/layout}}",
            named: "misspelt")
        var check = TemplateCheck(library: library)
        let root: [Any] = [try AppsPage(from: SampleDecoder()), try ConsoleLayout(from: SampleDecoder())]
        check.check("misspelt", root: root)
        #expect(
            check.problems == [
                "misspelt.mustache: {{#apps}} › {{nmae}}: no value 'nmae' in AppsPage.App, ConsoleLayout, AppsPage",
                "misspelt.mustache: {{#can.manageCatalg}}: no value 'manageCatalg' in ConsolePermissions",
            ])
    }

    /// A list whose rows have an optional value named as one of the list's own.
    struct Shadowing {
        struct Row {
            var name: String?
        }

        var name: String
        var rows: [Row]
    }

    // Proves the check refuses an optional value that, when nil, would let Mustache draw an outer one of its name.
    @Test func theCheckCatchesAnOptionalThatHidesAnother() throws {
        var library = MustacheLibrary()
        try library.register("{{name}}{{#rows}}{{name}}{{/rows}}", named: "shadowing")
        var check = TemplateCheck(library: library)
        check.check("shadowing", root: [Shadowing(name: "list", rows: [.init(name: "row")])])
        #expect(
            check.problems == [
                "shadowing.mustache: {{#rows}} › {{name}}: ConsoleViewModelTests.Shadowing.Row.name may be nil, "
                    + "and then ConsoleViewModelTests.Shadowing.name is drawn instead"
            ])
    }

    // Proves every template but the layout draws exactly one view, so a new page cannot go unchecked.
    @Test func everyTemplateHasItsView() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: try ConsoleRenderer.folder())
        let templates = files.filter { $0.hasSuffix(".mustache") }.map { String($0.dropLast(".mustache".count)) }
        #expect(Set(templates).subtracting(["layout"]) == Set(Self.views.map { $0.template }))
        #expect(Set(Self.views.map { $0.template }).count == Self.views.count)
    }

    // Proves no page has a value named as one of the layout's, which the layout's would hide.
    @Test func noViewShadowsTheLayout() throws {
        let layout = Set(Mirror(reflecting: try ConsoleLayout(from: SampleDecoder())).children.compactMap(\.label))
        for view in Self.views {
            let names = Set(Mirror(reflecting: try view.init(from: SampleDecoder())).children.compactMap(\.label))
            #expect(names.isDisjoint(with: layout), "\(view) hides the layout's \(names.intersection(layout).sorted())")
        }
    }

    // Proves `can.…` names every permission by its raw value, and holds exactly the session's.
    @Test func canNamesEveryPermission() {
        let granted: Set<ConsolePermission> = [.manageCatalog, .useSandbox]
        let children = Mirror(reflecting: ConsolePermissions(granted)).children
        #expect(children.compactMap(\.label) == ConsolePermission.allCases.map(\.rawValue))
        #expect(
            children.compactMap { child in (child.value as? Bool) == true ? child.label : nil }
                == ConsolePermission.allCases.filter(granted.contains).map(\.rawValue))
    }

    // Proves every page's full sample renders inside the layout, and that the template reads the layout's values
    // and the page's as one object, the layout's first.
    @Test func everySampleRenders() async throws {
        let renderer = try await ConsoleRenderer.load()
        var layout = try ConsoleLayout(from: SampleDecoder())
        layout.title = "Sample page"
        let layoutNames = Mirror(reflecting: layout).children.compactMap(\.label)
        for view in Self.views {
            let sample = try view.init(from: SampleDecoder())
            let html = renderer.html(sample, layout: layout)
            #expect(html?.contains("<title>Sample page · Kiosk</title>") == true, "\(view.template)")
            #expect(
                Self.names(of: sample, in: layout)
                    == layoutNames + Mirror(reflecting: sample).children.compactMap(\.label))
        }
    }

    /// The names the template of `view` reads at its top.
    static func names<View: ConsoleView>(of view: View, in layout: ConsoleLayout) -> [String] {
        Mirror(reflecting: ConsolePageContext(layout: layout, view: view)).children.compactMap(\.label)
    }
}

/// Checks a console template's names against a page's values as swift-mustache resolves them: a name's first part
/// through the stack of values, innermost section first, the rest of a dotted name within what that found. A section
/// over a list pushes its first element, over any other value but a flag that value. A partial or a parent template
/// (`{{<layout}}`) is checked with the same stack. Since Mustache reads past a nil value to an outer one of the same
/// name, an optional value that can hide another is a problem too.
struct TemplateCheck {
    let library: MustacheLibrary
    /// What is wrong, one line each: the template, the sections open around the tag, the tag, and why.
    private(set) var problems: [String] = []
    /// Every `Type.value` the templates read, and every one the values they reached have.
    private(set) var read: Set<String> = []
    private(set) var declared: Set<String> = []

    init(library: MustacheLibrary) {
        self.library = library
    }

    /// Checks `template` with `root`, the page's values, the one tried first last.
    mutating func check(_ template: String, root: [Any]) {
        for object in root { declare(object) }
        walk(template, stack: root, depth: 0)
    }

    private mutating func walk(_ template: String, stack root: [Any], depth: Int) {
        guard depth < 8, let text = library.getTemplate(named: template)?.description else {
            problems.append("\(template).mustache: no such template")
            return
        }
        let tags: [Tag]
        do {
            tags = try Tag.scan(text)
        } catch {
            problems.append("\(template).mustache: \(error)")
            return
        }
        var stack = root
        var open: [(tag: Tag, pushed: Bool)] = []
        for tag in tags {
            let sections = open.map(\.tag).filter { "#^".contains($0.sigil) }
            let place = "\(template).mustache: " + (sections.map(\.text) + [tag.text]).joined(separator: " › ")
            switch tag.sigil {
            case "", "{", "&":
                _ = resolve(tag.name, in: stack, at: place)
            case "#":
                let section = resolve(tag.name, in: stack, at: place).flatMap(Self.sectionValue)
                if let section {
                    declare(section)
                    stack.append(section)
                }
                open.append((tag, section != nil))
            case "^":
                _ = resolve(tag.name, in: stack, at: place)
                open.append((tag, false))
            case "$":
                open.append((tag, false))
            case "<":
                walk(tag.name, stack: stack, depth: depth + 1)
                open.append((tag, false))
            case ">":
                walk(tag.name, stack: stack, depth: depth + 1)
            case "/":
                guard let last = open.popLast(), last.tag.name == tag.name else {
                    problems.append("\(place): closes a section that is not open")
                    return
                }
                if last.pushed { stack.removeLast() }
            case "!":
                break
            default:
                problems.append("\(place): this check does not read such a tag")
            }
        }
        if let unclosed = open.last {
            problems.append("\(template).mustache: \(unclosed.tag.text) is never closed")
        }
    }

    /// What `name` finds, innermost value first, or nil (and a problem) when nothing has it.
    private mutating func resolve(_ name: String, in stack: [Any], at place: String) -> Any? {
        if name == "." { return stack.last }
        var parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let first = parts.removeFirst()
        let owners = stack.reversed().compactMap { object in Self.child(first, of: object).map { (object, $0) } }
        guard let (owner, found) = owners.first else {
            let searched = stack.reversed().map(Self.typeName).joined(separator: ", ")
            problems.append("\(place): no value '\(first)' in \(searched)")
            return nil
        }
        read.insert("\(Self.typeName(owner)).\(first)")
        if found.optional, let (hidden, _) = owners.dropFirst().first {
            // Mustache reads past a nil value to the next one with its name: the page would show the wrong value.
            problems.append(
                "\(place): \(Self.typeName(owner)).\(first) may be nil, and then \(Self.typeName(hidden)).\(first) "
                    + "is drawn instead")
        }
        var value = found.value
        for part in parts {
            declare(value)
            guard let next = Self.child(part, of: value) else {
                problems.append("\(place): no value '\(part)' in \(Self.typeName(value))")
                return nil
            }
            read.insert("\(Self.typeName(value)).\(part)")
            value = next.value
        }
        return value
    }

    /// Notes the values `object` has, and refuses an untyped dictionary.
    private mutating func declare(_ object: Any) {
        let mirror = Mirror(reflecting: object)
        if mirror.displayStyle == .dictionary {
            problems.append("\(Self.typeName(object)) is a dictionary: give the page a typed value")
        }
        guard mirror.displayStyle == .struct || mirror.displayStyle == .class else { return }
        for label in mirror.children.compactMap(\.label) { declared.insert("\(Self.typeName(object)).\(label)") }
    }

    /// The value `object` has under `name` (an optional's wrapped value, and that it was optional), as
    /// swift-mustache reads it through `Mirror`.
    private static func child(_ name: String, of object: Any) -> (value: Any, optional: Bool)? {
        guard let value = Mirror(reflecting: object).children.first(where: { $0.label == name })?.value else {
            return nil
        }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return (value, false) }
        return (mirror.children.first?.value ?? value, true)
    }

    /// What a section over `value` pushes: a list's element, nothing for a flag, else the value.
    private static func sectionValue(_ value: Any) -> Any? {
        if value is Bool { return nil }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .collection || mirror.displayStyle == .set { return mirror.children.first?.value }
        return value
    }

    private static func typeName(_ object: Any) -> String {
        // Without the module: "KeysPage.App".
        String(String(reflecting: type(of: object)).split(separator: ".", maxSplits: 1).last ?? "")
    }
}

/// A Mustache tag: its sigil (`#`, `^`, `/`, `{` for `{{{…}}}`, `&`, `!`, `>`, `<`, `$`, or none) and its name.
struct Tag {
    var sigil: String
    var name: String

    /// The tag as the template writes it.
    var text: String { sigil == "{" ? "{{{\(name)}}}" : "{{\(sigil)\(name)}}" }

    struct ScanError: Error, CustomStringConvertible {
        var description: String
    }

    /// The tags of a template, in order, with the default delimiters.
    static func scan(_ text: String) throws -> [Tag] {
        var tags: [Tag] = []
        var rest = text[...]
        while let start = rest.range(of: "{{") {
            rest = rest[start.upperBound...]
            let triple = rest.hasPrefix("{")
            guard let end = rest.range(of: triple ? "}}}" : "}}") else {
                throw ScanError(description: "a tag is never closed")
            }
            var content = rest[..<end.lowerBound].trimmingCharacters(in: .whitespaces)
            rest = rest[end.upperBound...]
            var sigil = ""
            if triple {
                sigil = "{"
                content = content.dropFirst().trimmingCharacters(in: .whitespaces)
            } else if let first = content.first, "#^/!><$&=".contains(first) {
                sigil = String(first)
                content = content.dropFirst().trimmingCharacters(in: .whitespaces)
            }
            if sigil == "=" || (sigil != "!" && content.contains { "( )".contains($0) }) {
                throw ScanError(description: "{{\(sigil)\(content)}}: this check reads no delimiters or transforms")
            }
            tags.append(Tag(sigil: sigil, name: content))
        }
        return tags
    }
}

/// Decodes a full sample of a type: every text "sample", every number 1, every flag true, every optional given and
/// every list one element long, so every value a page can have is there to check its template against.
struct SampleDecoder: Decoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedDecodingContainer { Unkeyed(codingPath: codingPath) }

    func singleValueContainer() -> any SingleValueDecodingContainer { Single(codingPath: codingPath) }

    static func sample<T: Decodable>(_ type: T.Type, at codingPath: [any CodingKey]) throws -> T {
        if let text = "sample" as? T { return text }
        if let flag = true as? T { return flag }
        if let integer = type as? any FixedWidthInteger.Type, let number = integer.init(1) as? T { return number }
        if let real = type as? any BinaryFloatingPoint.Type, let number = real.init(1) as? T { return number }
        return try T(from: SampleDecoder(codingPath: codingPath))
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        var codingPath: [any CodingKey]
        var allKeys: [Key] { [] }

        func contains(_ key: Key) -> Bool { true }

        func decodeNil(forKey key: Key) -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try SampleDecoder.sample(type, at: codingPath + [key])
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key)
            -> KeyedDecodingContainer<NestedKey>
        {
            KeyedDecodingContainer(Keyed<NestedKey>(codingPath: codingPath + [key]))
        }

        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedDecodingContainer {
            Unkeyed(codingPath: codingPath + [key])
        }

        func superDecoder() -> any Decoder { SampleDecoder(codingPath: codingPath) }

        func superDecoder(forKey key: Key) -> any Decoder { SampleDecoder(codingPath: codingPath + [key]) }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey]
        var count: Int? { 1 }
        var currentIndex = 0
        var isAtEnd: Bool { currentIndex >= 1 }

        mutating func decodeNil() -> Bool { false }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            currentIndex += 1
            return try SampleDecoder.sample(type, at: codingPath)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type)
            -> KeyedDecodingContainer<NestedKey>
        {
            currentIndex += 1
            return KeyedDecodingContainer(Keyed<NestedKey>(codingPath: codingPath))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedDecodingContainer {
            currentIndex += 1
            return Unkeyed(codingPath: codingPath)
        }

        mutating func superDecoder() -> any Decoder { SampleDecoder(codingPath: codingPath) }
    }

    struct Single: SingleValueDecodingContainer {
        var codingPath: [any CodingKey]

        func decodeNil() -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type) throws -> T { try SampleDecoder.sample(type, at: codingPath) }
    }
}
