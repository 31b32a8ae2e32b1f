import Foundation
import Hummingbird

/// The body of a panel page's form (`application/x-www-form-urlencoded`), decoded by the contexts' `requestDecoder`
/// with Hummingbird's `URLEncodedFormDecoder`: a handler declares the fields it reads as a small `PanelForm` beside it
/// and calls `request.decode(as:context:)`, as it does for a JSON body. Only these types are read from a form, so a
/// JSON route still refuses a form body (415) as it always has.
///
/// The decoder refuses a name that repeats, so a group of checkboxes is named `name[]` on the page and is an array
/// here (absent when none is ticked: an empty array). Fields a person types stay `String` (`@Field`) and are parsed by
/// the step that validates them, so a decimal comma or a stray space gets the field's own message rather than a 400.
protocol PanelForm: Decodable, Sendable {}

/// A text field of a panel form. A field the body leaves out reads as empty, as an empty field does: a browser leaves
/// out a disabled input and an unticked box, and a form type then needs no init of its own.
@propertyWrapper
struct Field: Decodable, Sendable, Equatable {
    var wrappedValue: String
    init(wrappedValue: String = "") { self.wrappedValue = wrappedValue }
    init(from decoder: any Decoder) throws { wrappedValue = try decoder.singleValueContainer().decode(String.self) }
}

extension KeyedDecodingContainer {
    /// Chosen over the generic `decode` by a form type's synthesized init, so a missing `@Field` reads as "".
    func decode(_ type: Field.Type, forKey key: Key) throws -> Field {
        do {
            return Field(wrappedValue: try decodeIfPresent(String.self, forKey: key) ?? "")
        } catch DecodingError.typeMismatch(let type, let context) {
            // The form decoder leaves the key out of a leaf's path; the message names the field.
            throw DecodingError.typeMismatch(type, .init(codingPath: context.codingPath + [key], debugDescription: context.debugDescription))
        }
    }
}

/// Numbers as a person types them into a form field.
enum TypedNumber {
    /// Spaces trimmed, a decimal comma accepted; nil for an empty field, text that is not a number, or infinity.
    static func double(_ text: String) -> Double? {
        let raw = text.trimmed.replacingOccurrences(of: ",", with: ".")
        guard !raw.isEmpty else { return nil }
        return Double(raw).flatMap { $0.isFinite ? $0 : nil }
    }

    /// Spaces trimmed; nil for an empty field or text that is not a whole number.
    static func int(_ text: String) -> Int? { Int(text.trimmed) }
}

extension WireRequestDecoder {
    /// A `PanelForm` from a urlencoded body (a body without a content type is read as one, as browsers never send
    /// one so): too large 413, a body that does not parse (a bad percent escape, a name sent twice) or does not fit
    /// the type 400, each with a message that says which.
    static func decodeForm<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        let buffer = try await request.smallBody(
            of: "application/x-www-form-urlencoded",
            upTo: context.maxUploadSize,
            otherwise: "Send the form as application/x-www-form-urlencoded.",
            tooLarge: "The form is larger than \(context.maxUploadSize / 1024) KiB."
        )
        do {
            return try URLEncodedFormDecoder().decode(T.self, from: String(buffer: buffer))
        } catch let error as URLEncodedFormError {
            throw HTTPError(.badRequest, message: "The form could not be read: \(describe(error))")
        } catch let error as DecodingError {
            throw HTTPError(.badRequest, message: "The form does not fit this page: \(describeForm(error))")
        }
    }

    private static func describe(_ error: URLEncodedFormError) -> String {
        switch error.code {
        case .duplicateKeys: "the field “\(error.value)” is sent twice."
        case .failedToPercentDecode: "“\(error.value)” is not percent-encoded correctly."
        default: "\(error.description)."
        }
    }

    private static func describeForm(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String { context.codingPath.map(\.stringValue).joined(separator: ".") }
        return switch error {
        case .keyNotFound(let key, _): "the field “\(key.stringValue)” is missing."
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            context.codingPath.isEmpty
                ? "a field has the wrong shape (a list is sent as “name[]”, a single value without)."
                : "the field “\(path(context))” has the wrong shape (a list is sent as “name[]”, a single value without)."
        @unknown default: "the fields have the wrong shape."
        }
    }
}
