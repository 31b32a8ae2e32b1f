import Foundation

/// Single sign-on through the agency's OpenID Connect provider (`--oidc-…`). The client secret is read from a file
/// only (never a flag or a variable: those show in `ps` and shell history); `doctor` checks the file's mode.
package struct OIDCSettings: Sendable, Equatable {
    /// The provider's issuer URL, exactly as its discovery document and ID tokens name it.
    var issuer: String
    var clientId: String
    /// nil: a public client, which proves itself with PKCE alone (Login.gov's "PKCE" way; `--oidc-public-client`).
    var clientSecretFile: String?
    /// `acr_values` for the authorization request, which some providers require (Login.gov: the identity assurance
    /// level, `http://idmanagement.gov/ns/assurance/ial/1`).
    package var acrValues: String? = nil
    /// `prompt` for the authorization request (Login.gov documents `select_account`); nil: none sent.
    package var prompt: String? = nil
    /// The sign-in page's button.
    package var label = "Sign in with your agency account"
    /// `acr` values that show the provider asked for a second factor (`--oidc-acr`), besides the `amr` values of
    /// `IDTokenClaims.secondFactorMethods`.
    package var secondFactorACR: Set<String> = []
    /// Whether an account that enrolled its own second step, and every admin, must still give it after single sign-on
    /// when the ID token shows no second factor. Off (`--oidc-skip-second-step`) trusts the provider's sign-in alone.
    package var askSecondStep = true
    /// Create an account (no site, no admin rights) at the first sign-in of a verified email nobody has yet.
    package var createUsers = false
    /// The least time between two fetches of the provider's keys for a key id it does not hold or a signature that
    /// fails: a provider that rotated its keys is followed at once, forged tokens cannot make the server hammer it.
    var keyRefreshInterval: TimeInterval = 60
    /// The longest the provider's keys are used without fetching them again (its `Cache-Control: max-age`, when
    /// shorter, wins): a key it withdrew stops working within this time.
    var keyMaximumAge: TimeInterval = 3600

    package init(issuer: String, clientId: String, clientSecretFile: String?) {
        self.issuer = issuer
        self.clientId = clientId
        self.clientSecretFile = clientSecretFile
    }

    /// What is wrong with an issuer URL: it must be https, except on loopback (a provider on the same machine); no
    /// query or fragment (OpenID Connect Discovery §4).
    package static func issuerProblem(_ issuer: String) -> String? {
        guard let components = URLComponents(string: issuer), let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty
        else { return "is not a URL" }
        guard components.query == nil, components.fragment == nil else { return "must have no query or fragment" }
        switch scheme {
        case "https": return nil
        case "http": return isLoopback(host) ? nil : "must be https:// (http:// only for a provider on loopback)"
        default: return "must be https://"
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        let host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The client secret: the file's first line; nil for a public client.
    func clientSecret() throws -> String? {
        guard let clientSecretFile else { return nil }
        let text = try String(contentsOfFile: clientSecretFile, encoding: .utf8)
        let secret = text.split(whereSeparator: \.isNewline).first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
        guard !secret.isEmpty else { throw OIDCTokenError("\(clientSecretFile) is empty.") }
        return secret
    }
}
