import Hummingbird

// A panel form's fields, read once from the body: every form handler's input, not a part of signing in.

/// Parses `application/x-www-form-urlencoded` text; the last value of a repeated name wins, `all` keeps every one.
struct FormFields: Sendable {
    private(set) var pairs: [(String, String)] = []

    init(_ text: String) {
        for item in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            pairs.append((decode(parts[0]), parts.count > 1 ? decode(parts[1]) : ""))
        }
    }

    subscript(name: String) -> String? { pairs.last { $0.0 == name }?.1 }
    func all(_ name: String) -> [String] { pairs.filter { $0.0 == name }.map(\.1) }
    func string(_ name: String) -> String { self[name] ?? "" }

    /// A number typed by a person: spaces trimmed, a decimal comma accepted.
    func double(_ name: String) -> Double? {
        guard let raw = self[name]?.trimmed.replacingOccurrences(of: ",", with: "."), !raw.isEmpty else { return nil }
        return Double(raw).flatMap { $0.isFinite ? $0 : nil }
    }

    func int(_ name: String) -> Int? { self[name].flatMap { Int($0.trimmed) } }
}

extension Request {
    /// The urlencoded form of a POST (already collected by the CSRF check, or collected now).
    mutating func form(context: some RequestContext) async throws -> FormFields {
        let buffer = try await collectBody(upTo: context.maxUploadSize)
        return FormFields(String(buffer: buffer))
    }
}
