import ExtrasBase64
import Foundation
import GRDB
import HummingbirdOTP

/// Who must use two-step sign-in (`--require-two-step`): users in these roles who are not enrolled must enrol at their
/// next sign-in before they reach the panel. Anyone may enrol on their own.
package enum TwoStepRequirement: String, Sendable, CaseIterable {
    case none, admins, managers, all
}

/// Where a half-signed-in browser stands (`pendingSignIn.stage`).
enum PendingStage: String, Sendable, Codable, CaseIterable, DatabaseValueConvertible {
    /// The password was right; a code (or a recovery code) is still to come.
    case code
    /// The password was right; the account must enrol before it reaches the panel.
    case enrol
}

/// RFC 6238 codes (six digits, 30-second steps, HMAC-SHA-1, as every authenticator app expects). The arithmetic is
/// hummingbird-auth's `TOTP`; this only chooses the secret, the window and the time steps.
enum TwoStepCodes {
    static let digits = 6
    static let period = 30
    /// Steps accepted either side of the server's own: a phone's clock may be half a minute off, and a code typed in
    /// the last seconds of its step arrives in the next one.
    static let window: Int64 = 1
    /// The issuer shown in authenticator apps.
    static let issuer = "Trail Companion"

    /// A new secret: 20 printable ASCII characters (about 131 random bits, over the 128 RFC 4226 asks for). ASCII
    /// because hummingbird-auth's `TOTP` takes the key as a string and uses its UTF-8 bytes.
    static func makeSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in Character(Unicode.Scalar(UInt8.random(in: 0x21...0x7E, using: &generator))) })
    }

    /// The secret as authenticator apps take it typed in: base32, no padding.
    static func base32(_ secret: String) -> String {
        String(base32Encoding: secret.utf8, options: .omitPaddingCharacter)
    }

    /// `ABCD EFGH …`: easier to read out and type.
    static func grouped(_ text: String) -> String {
        var out = ""
        for (index, character) in text.enumerated() {
            if index > 0 && index % 4 == 0 { out.append(" ") }
            out.append(character)
        }
        return out
    }

    /// The `otpauth://totp/…` address the QR code carries.
    static func authenticatorURL(secret: String, email: String) -> String {
        TOTP(secret: secret, length: digits, timeStep: period).createAuthenticatorURL(label: "\(issuer):\(email)", issuer: issuer)
    }

    static func step(at date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / Double(period)).rounded(.down)) }

    /// The code of one time step, as six digits.
    static func code(secret: String, step: Int64) -> String {
        let value = TOTP(secret: secret, length: digits, timeStep: period).compute(date: Date(timeIntervalSince1970: Double(step * Int64(period))))
        let text = String(value)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// The steps within the window whose code is `code`, newest first.
    static func matchingSteps(secret: String, code: String, at date: Date) -> [Int64] {
        let now = step(at: date)
        return stride(from: now + window, through: now - window, by: -1).filter {
            SecretToken.constantTimeEquals(Self.code(secret: secret, step: $0), code)
        }
    }

    /// Six digits, once spaces are dropped (apps show `123 456`); nil for anything else.
    static func normalizedCode(_ input: String) -> String? {
        let code = input.filter { !$0.isWhitespace }
        return code.count == digits && code.allSatisfy({ $0.isASCII && $0.isNumber }) ? code : nil
    }
}

/// One-time recovery codes: for a lost phone. Ten per enrolment, shown once, stored as SHA-256.
enum RecoveryCodes {
    static let count = 10
    /// RFC 4648's base32 alphabet in lower case: 16 characters carry 80 random bits.
    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")

    /// `abcd-efgh-ijkl-mnop`.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let characters = (0..<16).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
        return stride(from: 0, to: 16, by: 4).map { String(characters[$0..<$0 + 4]) }.joined(separator: "-")
    }

    /// What is hashed: lower case, without the dashes and spaces people type or leave out; nil if it cannot be one.
    static func normalized(_ input: String) -> String? {
        let code = input.lowercased().filter { $0 != "-" && !$0.isWhitespace }
        return code.count == 16 && code.allSatisfy({ alphabet.contains($0) }) ? code : nil
    }

    static func hash(_ input: String) -> String? { normalized(input).map(SecretToken.hash) }
}
