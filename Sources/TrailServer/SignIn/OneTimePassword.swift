import Foundation

enum OneTimePassword {
    /// 16 characters from an alphabet without look-alikes (no 0/O, 1/l/I): easy to read aloud over a radio.
    static func make() -> String {
        let alphabet = Array("abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<16).map { _ in alphabet.randomElement(using: &generator)! })
    }
}

/// The CLI's view of the one-time password generator.
package enum CLIPassword {
    package static func make() -> String { OneTimePassword.make() }
}
