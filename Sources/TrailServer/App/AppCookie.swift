import Foundation
import Hummingbird

/// The names of the server's cookies, for reading them (`request.cookies[CookieName.session]`); they are set only
/// through `AppCookie`.
enum CookieName {
    static let session = "tc_session"
    static let csrf = "tc_csrf"
    static let flash = "tc_flash"
    /// A half-signed-in browser: the password was right, the second step is still to come (opens no page).
    static let pending = "tc_pending"
    /// What a single sign-on's callback must check (state, nonce, PKCE verifier, where to go), bound to this browser.
    static let oidc = "tc_oidc"
    /// Marks a session that came through the provider, so that signing out also signs out there.
    static let singleSignOn = "tc_sso"
}

/// Every cookie the server sets, and every clearing of one, made here so that their attributes cannot drift apart:
/// all are HttpOnly (no script of the panel reads a cookie: the CSRF token a script sends is in the page), SameSite=Lax
/// (a link from elsewhere still arrives signed in; a form posted from elsewhere does not carry them), and Secure when
/// the server is reached over TLS. A cookie is cleared with the path it was set with, or the browser keeps it.
enum AppCookie {
    /// The session: no Max-Age, so it ends with the browser; the server ends it sooner (idle time-out, lifetime).
    static func session(token: String, secure: Bool) -> Cookie { make(CookieName.session, token, secure: secure) }

    static func clearedSession(secure: Bool) -> Cookie { cleared(CookieName.session, secure: secure) }

    /// The anonymous double-submit token of a browser that is not signed in (a session carries its own).
    static func csrf(token: String, secure: Bool) -> Cookie { make(CookieName.csrf, token, secure: secure) }

    /// A half-signed-in browser, for as long as the second step may take.
    static func pendingSignIn(token: String, lifetime: TimeInterval, secure: Bool) -> Cookie {
        make(CookieName.pending, token, maxAge: Int(lifetime), secure: secure)
    }

    static func clearedPendingSignIn(secure: Bool) -> Cookie { cleared(CookieName.pending, secure: secure) }

    /// The session came through the agency's provider: signing out signs out there too.
    static func singleSignOn(secure: Bool) -> Cookie { make(CookieName.singleSignOn, "1", secure: secure) }

    static func clearedSingleSignOn(secure: Bool) -> Cookie { cleared(CookieName.singleSignOn, secure: secure) }

    /// What a single sign-on's callback checks; ten minutes to sign in at the provider, and only its callback sees it.
    static func singleSignOnStart(_ value: String, secure: Bool) -> Cookie {
        make(CookieName.oidc, value, maxAge: 600, path: oidcPath, secure: secure)
    }

    static func clearedSingleSignOnStart(secure: Bool) -> Cookie { cleared(CookieName.oidc, path: oidcPath, secure: secure) }

    /// A one-time notice for the page after a redirect, read within the minute.
    static func flash(_ value: String, secure: Bool) -> Cookie { make(CookieName.flash, value, maxAge: 60, secure: secure) }

    static func clearedFlash(secure: Bool) -> Cookie { cleared(CookieName.flash, secure: secure) }

    private static let oidcPath = "/auth/oidc"

    private static func cleared(_ name: String, path: String = "/", secure: Bool) -> Cookie {
        make(name, "", maxAge: 0, path: path, secure: secure)
    }

    private static func make(_ name: String, _ value: String, maxAge: Int? = nil, path: String = "/", secure: Bool) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: path, secure: secure, httpOnly: true, sameSite: .lax)
    }
}
