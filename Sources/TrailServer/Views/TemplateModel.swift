import Foundation
import Mustache

/// A page model as the templates see it, its fields read once. swift-mustache finds a name in a struct through
/// `Mirror`: on every look-up it lists the struct's fields again, and a name the innermost object lacks is looked for
/// in each object further out, each listed again. A tour page with 30 waypoints made some 10,000 such lists per request
/// and spent two thirds of its time there (measured with `perf` on a release build). Read once into dictionaries, a
/// look-up is a hash probe.
///
/// The rendering is the same by construction: a field that is nil is left out, so the look-up goes on outward as it
/// does for a nil field under `Mirror`; arrays of models become arrays of these; every other value (strings, numbers,
/// dates, enums, arrays of plain values) is handed over as it is. Debug builds render both ways and compare
/// (``ViewRenderer/html(_:template:)``), so every page the tests render checks it.
struct TemplateModel: MustacheParent {
    let fields: [String: Any]

    func child(named name: String) -> Any? { fields[name] }

    /// `value` with every struct inside it read into a ``TemplateModel``.
    static func make(_ value: Any) -> Any {
        // Most fields are plain strings, numbers and flags: known by their type's identity, without the protocol
        // look-ups below (each a search of the runtime's conformance tables, about a third of a long list's time).
        if isPlain(type(of: value)) { return value }
        if value is any MustacheParent { return value }
        if let named = value as? any TemplateFields {
            let pairs = named.templateFields
            var fields: [String: Any] = [:]
            fields.reserveCapacity(pairs.count)
            for (label, field) in pairs {
                if let field { fields[label] = make(field) }
            }
            return TemplateModel(fields: fields)
        }
        // Arrays before the next check: an array is CustomStringConvertible too.
        if let array = value as? [Any] {
            let elements = array.map(make)
            // Plain values stay in their own array type, which is what Mustache's sequence transforms are written for.
            return elements.contains { $0 is TemplateModel } ? elements : value
        }
        // Strings, numbers, dates, URLs: rendered by their description, as they are.
        if value is any CustomStringConvertible { return value }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .struct else { return value }
        var fields: [String: Any] = [:]
        fields.reserveCapacity(Int(mirror.children.count))
        for child in mirror.children {
            guard let label = child.label, let field = unwrapped(child.value) else { continue }
            fields[label] = make(field)
        }
        return TemplateModel(fields: fields)
    }

    /// Metatype comparisons: pointer compares, cheaper than hashing into a set on every field.
    private static func isPlain(_ type: Any.Type) -> Bool {
        type == String.self || type == Int.self || type == Bool.self || type == Int64.self || type == Double.self
    }

    /// The value inside an optional, nil for an empty one (one level, as swift-mustache's own look-up unwraps).
    private static func unwrapped(_ value: Any) -> Any? {
        if isPlain(type(of: value)) { return value }
        guard let optional = value as? any OptionalValue else { return value }
        return optional.wrapped
    }
}

private protocol OptionalValue {
    var wrapped: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var wrapped: Any? { self.map { $0 } }
}

/// A model that names its fields itself, for a row a page shows by the dozen: `Mirror` finds a field through the
/// runtime's field records on every read, which was a third of a 50-row list's rendering. Debug builds render each
/// page through `Mirror` too and compare (``ViewRenderer/html(_:template:)``), so a field left out of the list fails
/// the tests that render the page.
protocol TemplateFields {
    var templateFields: KeyValuePairs<String, Any?> { get }
}
