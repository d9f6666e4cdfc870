import Foundation

/// Strict JSON decoding derived from a type's own `Decodable` conformance: while the type decodes, every key its
/// `init(from:)` asks for (present or not, at any depth) is noted, so a key of the input nobody asked for is a typo
/// or a field that does not exist, and can be refused with its path and the keys that object does accept. No type
/// lists its keys a second time.
package enum StrictJSONDecoding {
    /// A key of the input that decoding never asked for.
    package struct UnknownKey: Error, Equatable {
        /// The key's path, such as `products[0].prcing`.
        package let path: String
        /// The key itself.
        package let key: String
        /// The keys the object holding it accepts, sorted (as far as decoding got, when it stopped there).
        package let accepted: [String]
        /// The required key it is spelt like, when decoding stopped because that key was missing.
        package let meant: String?
    }

    /// Decodes `type` from `data` with `decoder` (its strategies apply; its `userInfo` is used), then throws
    /// ``UnknownKey`` for the first key of the input, in sorted order per object, that decoding did not ask for.
    /// A required key missing beside an unknown key spelt like it (`prcing` for `pricing`, `productID` for
    /// `productId`) is reported as that unknown key too. `parsed` is `data` as `JSONSerialization` reads it, when
    /// the caller has it already. Other decoding errors pass through.
    package static func decode<Value: Decodable>(
        _ type: Value.Type, from data: Data, parsed: Any? = nil, using decoder: JSONDecoder
    ) throws -> Value {
        let log = AskedKeys()
        decoder.userInfo[AskedKeys.userInfoKey] = log
        do {
            let value = try decoder.decode(Recorded<Value>.self, from: data).value
            let tree = try parsed ?? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
            if let unknown = log.firstUnknownKey(in: tree) { throw unknown }
            return value
        } catch DecodingError.keyNotFound(let key, let context) {
            let tree = try parsed ?? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
            if let misspelt = log.misspelling(of: key.stringValue, at: context.codingPath, in: tree) { throw misspelt }
            throw DecodingError.keyNotFound(key, context)
        }
    }
}

/// A depth-first walk over a `JSONSerialization` tree: objects in sorted key order, arrays in order.
package enum JSONTreeWalk {
    /// The first non-nil answer of `visit`, called for every value (before what it contains) with its path, such
    /// as `items[2].name`, and the key it sits under (an array's elements sit under the array's key).
    package static func first<Answer>(
        in value: Any, path: String = "", key: String? = nil,
        _ visit: (_ value: Any, _ path: String, _ key: String?) -> Answer?
    ) -> Answer? {
        if let found = visit(value, path, key) { return found }
        switch value {
        case let object as [String: Any]:
            for name in object.keys.sorted() {
                let childPath = path.isEmpty ? name : "\(path).\(name)"
                if let found = first(in: object[name] ?? NSNull(), path: childPath, key: name, visit) { return found }
            }
        case let array as [Any]:
            for (index, item) in array.enumerated() {
                if let found = first(in: item, path: "\(path)[\(index)]", key: key, visit) { return found }
            }
        default:
            break
        }
        return nil
    }
}

/// The keys each object's decoding asked for, by object path. One decode runs on one thread, so no lock is needed.
private final class AskedKeys: @unchecked Sendable {
    static let userInfoKey = CodingUserInfoKey(rawValue: "kiosk.askedKeys")!
    var keysByPath: [String: Set<String>] = [:]

    func note(_ key: any CodingKey, at codingPath: [any CodingKey]) {
        keysByPath[Self.path(codingPath), default: []].insert(key.stringValue)
    }

    /// `a.b[0].c`, where only an array position (whose key's text is not its number) is written as an index; a
    /// dictionary key such as "5" stays a key.
    private static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue, key.stringValue != String(index) {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    /// An unknown key of the object at `codingPath` in `tree` that is spelt like the missing `key`: equal but for
    /// case, `-` and `_`, or one edit away.
    func misspelling(of key: String, at codingPath: [any CodingKey], in tree: Any) -> StrictJSONDecoding.UnknownKey? {
        var object = tree
        for step in codingPath {
            if let index = step.intValue, step.stringValue != String(index), let array = object as? [Any],
                array.indices.contains(index)
            {
                object = array[index]
            } else if let dictionary = object as? [String: Any], let value = dictionary[step.stringValue] {
                object = value
            } else {
                return nil
            }
        }
        let path = Self.path(codingPath)
        let asked = keysByPath[path] ?? []
        guard let dictionary = object as? [String: Any],
            let found = dictionary.keys.sorted().first(where: { !asked.contains($0) && Self.isSpeltLike($0, key) })
        else { return nil }
        return .init(
            path: path.isEmpty ? found : "\(path).\(found)", key: found, accepted: asked.sorted(), meant: key)
    }

    /// Whether `typed` is `meant` but for case, `-` and `_`, or with one character added, dropped or changed.
    private static func isSpeltLike(_ typed: String, _ meant: String) -> Bool {
        func folded(_ text: String) -> [Character] { Array(text.lowercased().filter { $0 != "_" && $0 != "-" }) }
        let (a, b) = (folded(typed), folded(meant))
        if a == b { return true }
        guard abs(a.count - b.count) <= 1 else { return false }
        let prefix = zip(a, b).prefix { $0 == $1 }.count
        let (restA, restB) = (a.dropFirst(prefix), b.dropFirst(prefix))
        return restA.dropFirst() == restB.dropFirst() || restA == restB.dropFirst() || restA.dropFirst() == restB
    }

    func firstUnknownKey(in tree: Any) -> StrictJSONDecoding.UnknownKey? {
        JSONTreeWalk.first(in: tree) { value, path, _ in
            guard let object = value as? [String: Any] else { return nil }
            let asked = keysByPath[path] ?? []
            return object.keys.sorted().first { !asked.contains($0) }.map { key in
                .init(
                    path: path.isEmpty ? key : "\(path).\(key)", key: key, accepted: asked.sorted(), meant: nil)
            }
        }
    }
}

/// Decodes `Value` through a ``RecordingDecoder`` over the real one.
private struct Recorded<Value: Decodable>: Decodable {
    let value: Value

    init(from decoder: any Decoder) throws {
        guard let log = decoder.userInfo[AskedKeys.userInfoKey] as? AskedKeys else {
            value = try Value(from: decoder)
            return
        }
        value = try Value(from: RecordingDecoder(base: decoder, log: log))
    }
}

/// Values the JSON decoder decodes itself, by its strategies; they hold no keys, so they are not looked into.
private func decodedByStrategy(_ type: Any.Type) -> Bool {
    type == Date.self || type == Data.self || type == URL.self || type == Decimal.self
}

/// A decoder that forwards to `base` and notes every key asked of a keyed container.
private struct RecordingDecoder: Decoder {
    let base: any Decoder
    let log: AskedKeys

    var codingPath: [any CodingKey] { base.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { base.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RecordingKeyedContainer(base: try base.container(keyedBy: type), log: log))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        RecordingUnkeyedContainer(base: try base.unkeyedContainer(), log: log)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        RecordingSingleValueContainer(base: try base.singleValueContainer(), decoder: self)
    }
}

private struct RecordingKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let base: KeyedDecodingContainer<Key>
    let log: AskedKeys

    var codingPath: [any CodingKey] { base.codingPath }
    var allKeys: [Key] { base.allKeys }

    func contains(_ key: Key) -> Bool {
        log.note(key, at: codingPath)
        return base.contains(key)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        log.note(key, at: codingPath)
        return try base.decodeNil(forKey: key)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try leaf(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try leaf(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try leaf(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try leaf(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try leaf(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try leaf(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try leaf(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try leaf(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try leaf(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try leaf(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try leaf(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try leaf(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try leaf(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try leaf(type, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard !decodedByStrategy(type), base.contains(key), try !base.decodeNil(forKey: key) else {
            return try leaf(type, key)
        }
        log.note(key, at: codingPath)
        return try T(from: RecordingDecoder(base: try base.superDecoder(forKey: key), log: log))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        log.note(key, at: codingPath)
        return KeyedDecodingContainer(
            RecordingKeyedContainer<NestedKey>(base: try base.nestedContainer(keyedBy: type, forKey: key), log: log))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        log.note(key, at: codingPath)
        return RecordingUnkeyedContainer(base: try base.nestedUnkeyedContainer(forKey: key), log: log)
    }

    func superDecoder() throws -> any Decoder { RecordingDecoder(base: try base.superDecoder(), log: log) }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        log.note(key, at: codingPath)
        return RecordingDecoder(base: try base.superDecoder(forKey: key), log: log)
    }

    /// Notes `key` and lets the real container decode the value (its own errors and strategies apply).
    private func leaf<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        log.note(key, at: codingPath)
        return try base.decode(type, forKey: key)
    }
}

private struct RecordingUnkeyedContainer: UnkeyedDecodingContainer {
    var base: any UnkeyedDecodingContainer
    let log: AskedKeys

    var codingPath: [any CodingKey] { base.codingPath }
    var count: Int? { base.count }
    var isAtEnd: Bool { base.isAtEnd }
    var currentIndex: Int { base.currentIndex }

    mutating func decodeNil() throws -> Bool { try base.decodeNil() }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard !decodedByStrategy(type), !isAtEnd else { return try base.decode(type) }
        return try T(from: RecordingDecoder(base: try base.superDecoder(), log: log))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        KeyedDecodingContainer(
            RecordingKeyedContainer<NestedKey>(base: try base.nestedContainer(keyedBy: type), log: log))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        RecordingUnkeyedContainer(base: try base.nestedUnkeyedContainer(), log: log)
    }

    mutating func superDecoder() throws -> any Decoder { RecordingDecoder(base: try base.superDecoder(), log: log) }
}

private struct RecordingSingleValueContainer: SingleValueDecodingContainer {
    let base: any SingleValueDecodingContainer
    let decoder: RecordingDecoder

    var codingPath: [any CodingKey] { base.codingPath }

    func decodeNil() -> Bool { base.decodeNil() }
    func decode(_ type: Bool.Type) throws -> Bool { try base.decode(type) }
    func decode(_ type: String.Type) throws -> String { try base.decode(type) }
    func decode(_ type: Double.Type) throws -> Double { try base.decode(type) }
    func decode(_ type: Float.Type) throws -> Float { try base.decode(type) }
    func decode(_ type: Int.Type) throws -> Int { try base.decode(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try base.decode(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try base.decode(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try base.decode(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try base.decode(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try base.decode(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try base.decode(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try base.decode(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try base.decode(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try base.decode(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // A wrapper decoding its wrapped value: keep recording inside it, except for values the strategies read.
        decodedByStrategy(type) ? try base.decode(type) : try T(from: decoder)
    }
}
