import Crypto
import Foundation

/// Access keys for an S3-compatible store, as the AWS tools read them from the environment.
package struct S3Credentials: Sendable, Equatable {
    package var accessKeyId: String
    package var secretAccessKey: String
    /// Temporary credentials (STS) carry a session token, sent as `x-amz-security-token`.
    package var sessionToken: String?

    package init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`; else, under systemd's `LoadCredential=`,
    /// the files `aws-access-key-id`, `aws-secret-access-key` and `aws-session-token` of `$CREDENTIALS_DIRECTORY`
    /// (which, unlike the environment, no other process of the same user can read and no core dump holds).
    /// nil when either key is missing.
    package static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> S3Credentials? {
        var values = environment
        if values["AWS_ACCESS_KEY_ID"].map({ $0.isEmpty }) ?? true, let folder = environment["CREDENTIALS_DIRECTORY"], !folder.isEmpty {
            for (name, variable) in [
                ("aws-access-key-id", "AWS_ACCESS_KEY_ID"), ("aws-secret-access-key", "AWS_SECRET_ACCESS_KEY"),
                ("aws-session-token", "AWS_SESSION_TOKEN"),
            ] {
                let url = URL(fileURLWithPath: folder).appendingPathComponent(name)
                if let text = try? String(contentsOf: url, encoding: .utf8) {
                    values[variable] = text.trimmingCharacters(in: .whitespacesAndNewlines)
                }
            }
        }
        guard let id = values["AWS_ACCESS_KEY_ID"], !id.isEmpty,
            let secret = values["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
        else { return nil }
        let token = values["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        return S3Credentials(accessKeyId: id, secretAccessKey: secret, sessionToken: token)
    }
}

/// Credentials end up in log lines, error messages and `dump`s of a configuration by accident (a string interpolation,
/// a `print(settings)` while debugging): whatever way they are printed, only the access key id shows, never the secret
/// or the session token.
extension S3Credentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String {
        "S3Credentials(accessKeyId: \(accessKeyId), secretAccessKey: <redacted>\(sessionToken == nil ? "" : ", sessionToken: <redacted>"))"
    }

    package var debugDescription: String { description }

    package var customMirror: Mirror {
        Mirror(
            self,
            children: ["accessKeyId": accessKeyId, "secretAccessKey": "<redacted>", "sessionToken": sessionToken.map { _ in "<redacted>" } as Any],
            displayStyle: .struct
        )
    }
}

/// One request as SigV4 sees it: the path is given decoded (`/test$file.text`) and encoded here exactly once, the way
/// S3 expects; query items likewise.
package struct S3RequestTarget: Sendable, Equatable {
    package var method: String
    /// `host` or `host:port`, exactly as the `Host` header will carry it.
    package var host: String
    package var path: String
    package var query: [(name: String, value: String)]

    package init(method: String, host: String, path: String, query: [(name: String, value: String)] = []) {
        self.method = method
        self.host = host
        self.path = path
        self.query = query
    }

    package static func == (a: Self, b: Self) -> Bool {
        a.method == b.method && a.host == b.host && a.path == b.path && a.query.elementsEqual(b.query, by: { $0 == $1 })
    }

    /// The path as it goes on the wire and into the canonical request.
    package var encodedPath: String { SigV4Signer.uriEncode(path, keepSlash: true) }

    /// Query items sorted by name and value, each encoded: the canonical query string, which is also what is sent.
    package var canonicalQuery: String {
        let encoded: [(String, String)] = query.map {
            (SigV4Signer.uriEncode($0.name, keepSlash: false), SigV4Signer.uriEncode($0.value, keepSlash: false))
        }
        let sorted = encoded.sorted { (a: (String, String), b: (String, String)) -> Bool in a.0 == b.0 ? a.1 < b.1 : a.0 < b.0 }
        return sorted.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// `encodedPath?canonicalQuery`, for the request line.
    package var pathAndQuery: String {
        let query = canonicalQuery
        return query.isEmpty ? encodedPath : "\(encodedPath)?\(query)"
    }
}

/// AWS Signature Version 4 for S3 ("Authenticating Requests (AWS Signature Version 4)"): the `Authorization` header of
/// a request. Written once; `SigV4Tests` checks it byte for byte against the worked examples in
/// the S3 documentation.
package struct SigV4Signer: Sendable {
    package static let algorithm = "AWS4-HMAC-SHA256"
    /// SHA-256 of an empty body.
    package static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    package static let unsignedPayload = "UNSIGNED-PAYLOAD"

    package let credentials: S3Credentials
    package let region: String
    package let service: String

    package init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to add to a request with `headers` (any case; `host` is added from the target): `x-amz-date`,
    /// `x-amz-content-sha256`, `x-amz-security-token` when there is a session token, and `authorization`.
    /// Every header given is signed, so pass only those the request will carry unchanged.
    package func sign(
        _ target: S3RequestTarget,
        headers: [(name: String, value: String)] = [],
        payloadHash: String,
        date: Date = Date()
    ) -> [(name: String, value: String)] {
        let stamp = Self.timestamp(date)
        var added: [(name: String, value: String)] = [("x-amz-date", stamp), ("x-amz-content-sha256", payloadHash)]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        let all = headers + [("host", target.host)] + added
        let (canonicalHeaders, signedHeaders) = Self.canonicalHeaders(all)
        let canonicalRequest = [target.method, target.encodedPath, target.canonicalQuery, canonicalHeaders, signedHeaders, payloadHash]
            .joined(separator: "\n")
        let signature = self.signature(canonicalRequest: canonicalRequest, timestamp: stamp)
        added.append(
            (
                "authorization",
                "\(Self.algorithm) Credential=\(credentials.accessKeyId)/\(scope(stamp)),SignedHeaders=\(signedHeaders),Signature=\(signature)"
            )
        )
        return added
    }

    // MARK: The steps of the documentation

    func scope(_ timestamp: String) -> String { "\(timestamp.prefix(8))/\(region)/\(service)/aws4_request" }

    func signature(canonicalRequest: String, timestamp: String) -> String {
        let stringToSign = [Self.algorithm, timestamp, scope(timestamp), SHA256.hash(data: Data(canonicalRequest.utf8)).hexString]
            .joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [String(timestamp.prefix(8)), region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return Data(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key)).hexString
    }

    /// Lower-case names, values trimmed with inner runs of spaces made one, sorted by name; values of a repeated
    /// header joined with commas. Returns the canonical header block (each line ends in a newline) and the signed list.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> (String, String) {
        var byName: [String: [String]] = [:]
        for (name, value) in headers {
            let trimmed = value.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            byName[name.lowercased(), default: []].append(trimmed)
        }
        let names = byName.keys.sorted()
        let block = names.map { "\($0):\(byName[$0]!.joined(separator: ","))\n" }.joined()
        return (block, names.joined(separator: ";"))
    }

    /// `20130524T000000Z`.
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
    }

    /// Percent-encodes every byte but the unreserved `A-Z a-z 0-9 - _ . ~` (and `/` in a path), upper-case hex:
    /// S3's rule, which differs from `URLComponents` (that one leaves `$`, `+`, `=` and more alone).
    package static func uriEncode(_ text: String, keepSlash: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            case UInt8(ascii: "/") where keepSlash:
                out.append("/")
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
