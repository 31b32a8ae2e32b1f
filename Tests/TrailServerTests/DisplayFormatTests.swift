import Foundation
import Testing

@testable import TrailServer

/// The shared formatting helpers (Views/DisplayFormat.swift) give the texts they gave where they were before.
@Suite struct DisplayFormatTests {
    @Test func countsWithTheirNouns() {
        #expect(DisplayFormat.count(1, "tour") == "1 tour")
        #expect(DisplayFormat.count(0, "tour") == "0 tours")
        #expect(DisplayFormat.count(2, "tour") == "2 tours")
        #expect(DisplayFormat.count(1_250, "tour") == "1,250 tours")
        #expect(DisplayFormat.count(3, "copy", plural: "copies") == "3 copies")
        #expect(DisplayFormat.count(1, "copy", plural: "copies") == "1 copy")
    }

    @Test func counts() {
        #expect(DisplayFormat.grouped(20000) == "20,000")
        #expect(DisplayFormat.grouped(417) == "417")
        #expect(DisplayFormat.grouped(1_234_567) == "1,234,567")
        #expect(DisplayFormat.grouped(-1_234) == "-1,234")
    }

    /// One HTTP-date writer for the `Date` header and tus's `Upload-Expires`: the same text as the DateFormatter
    /// tus used before, fractions of a second rounded down.
    @Test func httpDates() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        #expect(DisplayFormat.httpDate(Date(timeIntervalSince1970: 1_714_560_127.9)) == "Wed, 01 May 2024 10:42:07 GMT")
        for time in [0, 1_714_560_127.9, 1_709_164_800, 1_735_689_599.5, 4_102_444_800, 951_782_400.25] {
            #expect(DisplayFormat.httpDate(Date(timeIntervalSince1970: time)) == formatter.string(from: Date(timeIntervalSince1970: time)))
        }
    }

    @Test func timestamps() {
        #expect(DisplayFormat.date(Date(timeIntervalSince1970: 1_714_560_127)) == "2024-05-01 10:42 UTC")
        // Written by hand (a DateFormatter per call was a quarter of a tour list's time): the same as Foundation's.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        for time in [0, 1_714_560_127.9, 1_709_164_800, 1_735_689_599.5, 4_102_444_800, 951_782_400.25, -1.5] {
            #expect(DisplayFormat.date(Date(timeIntervalSince1970: time)) == formatter.string(from: Date(timeIntervalSince1970: time)))
        }
        let now = Date(timeIntervalSince1970: 1_714_560_127)  // 2024-05-01 10:42 UTC
        #expect(DisplayFormat.time(Date(timeIntervalSince1970: 1_714_521_600), now: now) == "00:00 UTC", "the same day: the time")
        #expect(DisplayFormat.time(Date(timeIntervalSince1970: 1_714_521_599), now: now) == "2024-04-30 23:59 UTC", "the day before")
    }

    @Test func placesAndDistances() {
        #expect(DisplayFormat.kilometers(3270) == "3.27 km")
        #expect(DisplayFormat.area(2500) == "2,500")
        #expect(DisplayFormat.area(1_907_414.4) == "1,907,414", "a frame over a continent, grouped as people read it")
        #expect(DisplayFormat.area(999.6) == "1,000")
        #expect(DisplayFormat.area(100) == "100")
        #expect(DisplayFormat.area(12.5) == "12.50")
        #expect(
            DisplayFormat.frame(Frame(north: 44.43, south: 44.36, east: -121.97, west: -122.28))
                == "N 44.43000, S 44.36000, E -121.97000, W -122.28000"
        )
        #expect(DisplayFormat.coordinate(44.5) == "44.500000")
        #expect(DisplayFormat.coordinate(nil) == "")
    }

    @Test func durations() {
        let estimate = DurationEstimate(
            walkingMeters: 4200,
            ascentMeters: 120,
            walkingMinutes: 63,
            climbMinutes: 12,
            dwellMinutes: 10,
            distancesFromPrevious: []
        )
        #expect(
            DisplayFormat.duration(estimate)
                == "About 1 h 25 min: 4.2 km walking (63 min), 120 m of climb (12 min), 10 min at the waypoints."
        )
        let flat = DurationEstimate(
            walkingMeters: 900,
            ascentMeters: nil,
            walkingMinutes: 11,
            climbMinutes: 0,
            dwellMinutes: 4,
            distancesFromPrevious: []
        )
        #expect(DisplayFormat.duration(flat) == "About 15 min: 0.9 km walking (11 min), 4 min at the waypoints.")
    }
}
