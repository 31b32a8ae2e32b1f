import Foundation
import Hummingbird
import NIOCore
import NIOPosix

/// Carries who is asking (session or bearer token) and the CSRF token the page must echo back.
package struct AppRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    package var user: AuthenticatedUser?
    /// The raw session cookie, for sign-out.
    package var sessionToken: String?
    package var csrfToken = ""
    /// True when the anonymous CSRF cookie was minted for this request and must be sent back.
    package var issueCSRFCookie = false
    /// True when the caller authenticated with `Authorization: Bearer`: no ambient credential, so no CSRF check.
    package var viaAPIToken = false
    package var remoteAddress: String?
    /// The connection's event loop when it is one of the server's (not a test's embedded channel): file responses
    /// wait for it between chunks so that they never queue chunks faster than the socket takes them.
    package var eventLoop: (any EventLoop)?

    package init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress
        self.eventLoop = ServerEventLoops.contains(source.channel.eventLoop) ? source.channel.eventLoop : nil
    }

    /// Forms and JSON bodies are small; file uploads stream and never go through `collect`.
    package var maxUploadSize: Int { 512 * 1024 }

    package var actor: AuditActor { AuditActor(userId: user?.id, ipAddress: remoteAddress) }

    package func requireUser() throws -> AuthenticatedUser {
        guard let user else { throw HTTPError(.unauthorized, message: "Sign in first.") }
        return user
    }
}

/// The event loops of the group the server runs on (Hummingbird's default, `MultiThreadedEventLoopGroup.singleton`).
enum ServerEventLoops {
    static let identifiers = Set(MultiThreadedEventLoopGroup.singleton.makeIterator().map { ObjectIdentifier($0) })

    static func contains(_ loop: any EventLoop) -> Bool { identifiers.contains(ObjectIdentifier(loop)) }
}
