import Foundation

// The panel's and the API's formatting of dates, places, sizes, durations and counts, in one file.

enum DisplayFormat {
    // MARK: Dates

    /// "2026-11-28 10:42 UTC".
    static func date(_ date: Date) -> String {
        let t = utc(date)
        return "\(t.year)-\(twoDigits(t.month))-\(twoDigits(t.day)) \(twoDigits(t.hour)):\(twoDigits(t.minute)) UTC"
    }

    /// "10:42 UTC", or the date too when it is not today (in UTC, as shown).
    static func time(_ date: Date, now: Date = Date()) -> String {
        let (t, today) = (utc(date), utc(now))
        guard t.year == today.year, t.month == today.month, t.day == today.day else { return self.date(date) }
        return "\(twoDigits(t.hour)):\(twoDigits(t.minute)) UTC"
    }

    /// The calendar fields of `date` in UTC, by the C library: a `DateFormatter` costs a formatter's set-up per call, which
    /// was a quarter of a page of 50 tours' time.
    private static func utc(_ date: Date) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var fields = tm()
        gmtime_r(&seconds, &fields)
        return (Int(fields.tm_year) + 1900, Int(fields.tm_mon) + 1, Int(fields.tm_mday), Int(fields.tm_hour), Int(fields.tm_min))
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// How long ago, coarsely: "12 min", "3 h", "2 days" (the review queue).
    static func age(_ date: Date, now: Date = Date()) -> String {
        let seconds = Int(now.timeIntervalSince(date))
        if seconds < 3600 { return "\(max(1, seconds / 60)) min" }
        if seconds < 86_400 { return "\(seconds / 3600) h" }
        return "\(seconds / 86_400) days"
    }

    /// An HTTP date (`Date`, `Upload-Expires`): "Wed, 01 May 2024 10:42:07 GMT", the second rounded down.
    static func httpDate(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    // MARK: Places and distances

    static func coordinate(_ value: Double?) -> String {
        value.map { String(format: "%.6f", $0) } ?? ""
    }

    /// A frame in words: "N 44.43000, S 44.36000, E -121.97000, W -122.28000".
    static func frame(_ frame: Frame) -> String {
        String(format: "N %.5f, S %.5f, E %.5f, W %.5f", frame.north, frame.south, frame.east, frame.west)
    }

    /// An area in km², without the unit: whole and grouped from 100 up ("1,907,414"), else two decimals.
    static func area(_ value: Double) -> String {
        value >= 100 ? grouped(Int(value.rounded())) : String(format: "%.2f", value)
    }

    /// A distance given in metres, as "3.27 km".
    static func kilometers(_ meters: Double) -> String {
        String(format: "%.2f km", meters / 1000)
    }

    // MARK: Durations

    /// The tour page's time estimate: "About 1 h 25 min: 4.2 km walking (63 min), 120 m of climb (12 min),
    /// 10 min at the waypoints."
    static func duration(_ estimate: DurationEstimate) -> String {
        let total = estimate.totalMinutes
        let time = total >= 60 ? "\(total / 60) h \(total % 60) min" : "\(total) min"
        var parts = [String(format: "%.1f km walking (%.0f min)", estimate.walkingMeters / 1000, estimate.walkingMinutes)]
        if let ascent = estimate.ascentMeters { parts.append(String(format: "%.0f m of climb (%.0f min)", ascent, estimate.climbMinutes)) }
        parts.append(String(format: "%.0f min at the waypoints", estimate.dwellMinutes))
        return "About \(time): " + parts.joined(separator: ", ") + "."
    }

    /// A file's play time: "42 s", "3 min 05 s", "2 h 10 min".
    static func playTime(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return String(format: "%d min %02d s", whole / 60, whole % 60) }
        return "\(whole / 3600) h \(whole % 3600 / 60) min"
    }

    /// How long a download takes on a slow phone link (1 Mbit/s, a weak 3G or a crowded 4G cell at a trailhead).
    static func slowLinkTime(_ bytes: Int64) -> String {
        let seconds = Double(bytes) * 8 / Double(MediaTargets.slowLinkBitsPerSecond)
        return seconds < 60 ? "under a minute" : seconds < 3600 ? "about \(Int((seconds / 60).rounded(.up))) min" : "about " + playTime(seconds)
    }

    // MARK: Counts and sizes

    /// `20000` → `20,000`, the same on every machine.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return (value < 0 ? "-" : "") + result
    }

    /// A count with its noun, singular or plural as English needs it: "1 tour", "0 tours", "20,000 tours".
    static func count(_ value: Int, _ singular: String, plural: String? = nil) -> String {
        "\(grouped(value)) " + (value == 1 ? singular : plural ?? singular + "s")
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

package enum ByteFormat {
    /// What an upload over a site's quota is told (multipart, tiles, tus).
    static func quotaMessage(site: Site, quota: Int64) -> String {
        "\(site.name) has used its storage quota (\(string(quota))). Delete unused files or ask an admin for more space."
    }

    /// What a ranger does with a file over the upload limit (the browser's own refusal says the same).
    static let makeItSmaller = "Make it smaller (a lower resolution or bitrate, or split it into parts), then upload it again."

    /// "812 bytes", "1.5 MiB": binary units, one decimal.
    package static func string(_ bytes: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) bytes" : String(format: "%.1f %@", value, units[unit])
    }
}
