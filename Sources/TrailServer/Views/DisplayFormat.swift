import Foundation

// The panel's and the API's formatting of dates, places, sizes and durations, in one file.

enum DisplayFormat {
    static func date(_ time: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: time))
    }

    /// "10:42 UTC", or the date too when it is not today.
    static func time(_ date: Date, now: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = Calendar.current.isDate(date, inSameDayAs: now) ? "HH:mm 'UTC'" : "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: date)
    }

    static func coordinate(_ value: Double?) -> String {
        value.map { String(format: "%.6f", $0) } ?? ""
    }

    /// How long ago, coarsely: "12 min", "3 h", "2 days" (the review queue).
    static func age(_ time: Double, now: Date = Date()) -> String {
        let seconds = Int(now.timeIntervalSince1970 - time)
        if seconds < 3600 { return "\(max(1, seconds / 60)) min" }
        if seconds < 86_400 { return "\(seconds / 3600) h" }
        return "\(seconds / 86_400) days"
    }

    /// A limit in words: "20 MB" for a whole number of MB, exact bytes otherwise.
    static func megabytes(_ bytes: Int) -> String {
        bytes % (1024 * 1024) == 0 ? "\(bytes / 1024 / 1024) MB" : "\(bytes) bytes"
    }

    /// The value of a form field in MB ("512", or "0.50" when it is not a whole number of MB).
    static func megabytesField(_ bytes: Int64) -> String {
        bytes % 1_048_576 == 0 ? "\(bytes / 1_048_576)" : String(format: "%.2f", Double(bytes) / 1_048_576)
    }
}

enum ByteFormat {
    /// What an upload over a site's quota is told (multipart, tiles, tus).
    static func quotaMessage(site: Site, quota: Int64) -> String {
        "\(site.name) has used its storage quota (\(string(quota))). Delete unused files or ask an admin for more space."
    }


    static func string(_ bytes: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes), unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(bytes) bytes" : String(format: "%.1f %@", value, units[unit])
    }
}
