import Foundation

/// Field name → message, shown next to the field on a page and as `error.fields` in the API.
public struct ValidationErrors: Error, Sendable, Equatable {
    public var fields: [String: String]
    public init(_ fields: [String: String] = [:]) { self.fields = fields }
    public subscript(field: String) -> String? {
        get { fields[field] }
        set { fields[field] = newValue }
    }
    public var isEmpty: Bool { fields.isEmpty }
    public func throwIfAny() throws { if !isEmpty { throw self } }
    /// One line for the API's `message`.
    public var summary: String { fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: " ") }
}

/// The object does not exist, or the caller may not know it exists (both answer 404).
public struct NotFound: Error, Sendable { public init() {} }

/// The caller may see the object but not do this to it.
public struct Forbidden: Error, Sendable {
    public let message: String
    public init(_ message: String = "You do not have permission to do this.") { self.message = message }
}

/// The object is in a state that does not allow the change (e.g. a tour locked for review).
public struct Conflict: Error, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
}
