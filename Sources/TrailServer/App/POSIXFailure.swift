import Foundation

/// A failed system call, with what it was doing and the system's own words for the error.
struct POSIXFailure: Error, CustomStringConvertible {
    let operation: String
    let code: Int32
    var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
