import GRDB

/// Every kind of audited write, as stored in `auditEvent.action` (`<object>.<what happened>`). Written once here, so a
/// new write names its event from this list and the audit page's readers can rely on it.
enum AuditAction: String, Sendable, CaseIterable, DatabaseValueConvertible {
    case alertEnd = "alert.end"
    case alertPost = "alert.post"
    case assetDelete = "asset.delete"
    case assetDescribe = "asset.describe"
    case assetKeepOriginal = "asset.keepOriginal"
    case assetMissing = "asset.missing"
    case assetReorder = "asset.reorder"
    case assetReplace = "asset.replace"
    case assetRescan = "asset.rescan"
    case assetUpload = "asset.upload"
    case assetUseOptimized = "asset.useOptimized"
    case invitationAccept = "invitation.accept"
    case invitationCreate = "invitation.create"
    case invitationResend = "invitation.resend"
    case invitationRevoke = "invitation.revoke"
    case mediaOptimizeQueue = "media.optimize.queue"
    case memberRemove = "member.remove"
    case memberSet = "member.set"
    case notificationsSet = "notifications.set"
    case packagePublish = "package.publish"
    case packageRollback = "package.rollback"
    case packageUnpublish = "package.unpublish"
    case publishApprove = "publish.approve"
    case publishApproveReady = "publish.approve.ready"
    case publishBuilt = "publish.built"
    case publishDeny = "publish.deny"
    case publishFailed = "publish.failed"
    case publishPush = "publish.push"
    case publishStart = "publish.start"
    case publishWithdraw = "publish.withdraw"
    case sessionEnd = "session.end"
    case sessionFailed = "session.failed"
    case sessionPassword = "session.password"
    case sessionSsoFailed = "session.ssoFailed"
    case sessionStart = "session.start"
    case siteCreate = "site.create"
    case siteHome = "site.home"
    case sitePasswordSignIn = "site.passwordSignIn"
    case siteUpdate = "site.update"
    case tilesDelete = "tiles.delete"
    case tilesMissing = "tiles.missing"
    case tilesSettings = "tiles.settings"
    case tilesUpload = "tiles.upload"
    case tokenCreate = "token.create"
    case tokenRevoke = "token.revoke"
    case tourCreate = "tour.create"
    case tourDelete = "tour.delete"
    case tourFrame = "tour.frame"
    case tourImport = "tour.import"
    case tourLanguages = "tour.languages"
    case tourRoute = "tour.route"
    case tourAccessibility = "tour.accessibility"
    case tourText = "tour.text"
    case tourUpdate = "tour.update"
    case userCreate = "user.create"
    case userDisable = "user.disable"
    case userEnable = "user.enable"
    case userOneTimePasswordVoided = "user.oneTimePasswordVoided"
    case userAddressProven = "user.addressProven"
    case userPassword = "user.password"
    case userResetPassword = "user.resetPassword"
    case userResetTwoStep = "user.resetTwoStep"
    case userSsoLinked = "user.ssoLinked"
    case waypointCreate = "waypoint.create"
    case waypointDelete = "waypoint.delete"
    case waypointReorder = "waypoint.reorder"
    case waypointText = "waypoint.text"
    case waypointUpdate = "waypoint.update"
    case twoStepEnrol = "twoStep.enrol"
    case twoStepEnrolFailed = "twoStep.enrolFailed"
    case twoStepEnrolStart = "twoStep.enrolStart"
    case twoStepFailed = "twoStep.failed"
    case twoStepRecoveryCode = "twoStep.recoveryCode"
    case assetCaptions = "asset.captions"
    case assetTranscript = "asset.transcript"
    case tilesScanPending = "tiles.scan.pending"
    case tilesScanClean = "tiles.scan.clean"
    case tilesScanInfected = "tiles.scan.infected"
    case tilesScanUnscannable = "tiles.scan.unscannable"
    case tilesScanError = "tiles.scan.error"
    case assetScanPending = "asset.scan.pending"
    case assetScanClean = "asset.scan.clean"
    case assetScanInfected = "asset.scan.infected"
    case assetScanUnscannable = "asset.scan.unscannable"
    case assetScanError = "asset.scan.error"
    case assetOptimizePending = "asset.optimize.pending"
    case assetOptimizeReady = "asset.optimize.ready"
    case assetOptimizeSkipped = "asset.optimize.skipped"
    case assetOptimizeFailed = "asset.optimize.failed"
}

extension AuditAction {
    /// A scan's verdict on an asset.
    static func scan(_ status: ScanStatus) -> AuditAction {
        switch status {
        case .pending: .assetScanPending
        case .clean: .assetScanClean
        case .infected: .assetScanInfected
        case .unscannable: .assetScanUnscannable
        case .error: .assetScanError
        }
    }

    /// A scan's verdict on a tour's uploaded map tiles.
    static func tilesScan(_ status: ScanStatus) -> AuditAction {
        switch status {
        case .pending: .tilesScanPending
        case .clean: .tilesScanClean
        case .infected: .tilesScanInfected
        case .unscannable: .tilesScanUnscannable
        case .error: .tilesScanError
        }
    }

    /// A caption or transcript file attached to a media file.
    static func companion(_ role: CompanionRole) -> AuditAction {
        switch role {
        case .captions: .assetCaptions
        case .transcript: .assetTranscript
        }
    }

    /// How an optimized copy ended.
    static func optimize(_ state: OptimizeState) -> AuditAction {
        switch state {
        case .pending: .assetOptimizePending
        case .ready: .assetOptimizeReady
        case .skipped: .assetOptimizeSkipped
        case .failed: .assetOptimizeFailed
        }
    }
}

extension AuditAction {
    /// What the event's `objectId` names, stored in `auditEvent.objectType` and filtered by on the audit page: the
    /// action's prefix (`alert.post` is about an alert), under the name the log has always given that object. Where the
    /// name is not the prefix, the stored name stays, because the log is append-only and the page finds an object's
    /// history by type and id: a new name would split every such history into the rows before and after it.
    var objectType: String {
        switch self {
        // The tour's order of waypoints: the id is the tour's, and the tour's history shows it.
        case .waypointReorder: "tour"
        // The released package, pushed to storage, not the request that built it.
        case .publishPush: "package"
        // A wrong second-step code is a failed sign-in, like `session.failed`.
        case .twoStepFailed: "session"
        // The server's one tile settings row, not a tour's tiles file.
        case .tilesSettings: "tileSettings"
        default: Self.objectTypeOfPrefix[prefix] ?? prefix
        }
    }

    /// The prefixes whose object the log names otherwise (see `objectType`).
    private static let objectTypeOfPrefix = [
        "token": "apiToken",
        "member": "membership",
        "publish": "publishRequest",
        // A tour's tiles file: the id is the tour's.
        "tiles": "tour",
        // A user's own second step and notification settings.
        "twoStep": "user",
        "notifications": "user",
    ]

    private var prefix: String { String(rawValue.prefix { $0 != "." }) }
}

/// An action as read back from the log: one of `AuditAction`, or the stored text of one this server does not write
/// (any more): the log keeps every row it was given, and the audit page shows such a row as it was written.
enum LoggedAuditAction: Sendable, Equatable, Codable, DatabaseValueConvertible {
    case known(AuditAction)
    case unknown(String)

    init(_ text: String) { self = AuditAction(rawValue: text).map(LoggedAuditAction.known) ?? .unknown(text) }

    var known: AuditAction? {
        if case .known(let action) = self { return action }
        return nil
    }

    /// The text as stored.
    var text: String {
        switch self {
        case .known(let action): action.rawValue
        case .unknown(let text): text
        }
    }

    var databaseValue: DatabaseValue { text.databaseValue }

    static func fromDatabaseValue(_ dbValue: DatabaseValue) -> LoggedAuditAction? { String.fromDatabaseValue(dbValue).map(LoggedAuditAction.init) }

    init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
