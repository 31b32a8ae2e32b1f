import Foundation

/// Play time of audio and video read from the file's own headers (MP4/QuickTime/M4A `mvhd`, WAV, FLAC, MP3);
/// nil when the format does not say cheaply (the estimate then uses a default stay at the waypoint).
enum MediaDuration {
    static func seconds(of url: URL, mimeType: String) -> Double? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        func read(_ offset: UInt64, _ count: Int) -> [UInt8]? {
            guard offset + UInt64(count) <= size else { return nil }
            try? handle.seek(toOffset: offset)
            guard let data = try? handle.read(upToCount: count), data.count == count else { return nil }
            return [UInt8](data)
        }
        let duration: Double?
        switch mimeType.split(separator: ";")[0] {
        case "video/mp4", "video/quicktime", "audio/mp4": duration = mp4(read: read, size: size)
        case "audio/wav": duration = wav(read: read, size: size)
        case "audio/flac": duration = flac(read: read)
        case "audio/mpeg": duration = mp3(read: read, size: size)
        default: duration = nil
        }
        return duration.flatMap { $0.isFinite && $0 > 0 && $0 < 86_400 ? $0 : nil }
    }

    static func be(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }
    static func le(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) } }

    /// Walks the top-level atoms to `moov`, then its children to `mvhd` (timescale and duration).
    static func mp4(read: (UInt64, Int) -> [UInt8]?, size: UInt64) -> Double? {
        func atoms(from start: UInt64, to end: UInt64, find name: String) -> (UInt64, UInt64)? {
            var offset = start
            while offset + 8 <= end, let header = read(offset, 8) {
                var length = be(header[0..<4])
                var headerLength: UInt64 = 8
                if length == 1, let large = read(offset + 8, 8) {
                    length = be(large[0..<8])
                    headerLength = 16
                }
                if length == 0 { length = end - offset }
                guard length >= headerLength else { return nil }
                if String(decoding: header[4..<8], as: UTF8.self) == name { return (offset + headerLength, offset + length) }
                offset += length
            }
            return nil
        }
        guard let moov = atoms(from: 0, to: size, find: "moov"), let mvhd = atoms(from: moov.0, to: moov.1, find: "mvhd"),
            let body = read(mvhd.0, 32)
        else { return nil }
        if body[0] == 1 {
            let timescale = be(body[20..<24])
            guard timescale > 0, let duration = read(mvhd.0 + 24, 8) else { return nil }
            return Double(be(duration[0..<8])) / Double(timescale)
        }
        let timescale = be(body[12..<16])
        return timescale > 0 ? Double(be(body[16..<20])) / Double(timescale) : nil
    }

    static func wav(read: (UInt64, Int) -> [UInt8]?, size: UInt64) -> Double? {
        var offset: UInt64 = 12
        var byteRate: UInt64?
        while offset + 8 <= size, let header = read(offset, 8) {
            let id = String(decoding: header[0..<4], as: UTF8.self)
            let length = le(header[4..<8])
            if id == "fmt ", let format = read(offset + 8, 12) { byteRate = le(format[8..<12]) }
            if id == "data", let byteRate, byteRate > 0 { return Double(length) / Double(byteRate) }
            offset += 8 + length + (length & 1)
        }
        return nil
    }

    static func flac(read: (UInt64, Int) -> [UInt8]?) -> Double? {
        guard let info = read(8, 18) else { return nil }
        let sampleRate = be(info[10..<13]) >> 4
        let totalSamples = (UInt64(info[13] & 0x0F) << 32) | be(info[14..<18])
        return sampleRate > 0 ? Double(totalSamples) / Double(sampleRate) : nil
    }

    /// MPEG-1/2 layer III: a Xing/Info frame count when present, else constant bit rate from the first frame.
    static func mp3(read: (UInt64, Int) -> [UInt8]?, size: UInt64) -> Double? {
        var offset: UInt64 = 0
        if let id3 = read(0, 10), id3[0] == 0x49, id3[1] == 0x44, id3[2] == 0x33 {
            offset = 10 + (UInt64(id3[6] & 0x7F) << 21 | UInt64(id3[7] & 0x7F) << 14 | UInt64(id3[8] & 0x7F) << 7 | UInt64(id3[9] & 0x7F))
        }
        guard let frame = read(offset, 4), frame[0] == 0xFF, frame[1] & 0xE0 == 0xE0 else { return nil }
        let mpeg1 = frame[1] & 0x18 == 0x18
        let bitrates1: [UInt64] = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        let bitrates2: [UInt64] = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        let rates1: [UInt64] = [44100, 48000, 32000]
        let bitrateIndex = Int(frame[2] >> 4)
        let rateIndex = Int((frame[2] >> 2) & 0x03)
        guard bitrateIndex > 0, bitrateIndex < 15, rateIndex < 3 else { return nil }
        let bitrate = (mpeg1 ? bitrates1 : bitrates2)[bitrateIndex] * 1000
        let sampleRate = mpeg1 ? rates1[rateIndex] : rates1[rateIndex] / 2
        let samplesPerFrame: UInt64 = mpeg1 ? 1152 : 576
        if let probe = read(offset, 64) {
            for start in 4..<(probe.count - 12) {
                let tag = String(decoding: probe[start..<start + 4], as: UTF8.self)
                if tag == "Xing" || tag == "Info", probe[start + 7] & 0x01 == 1 {
                    let frames = be(probe[start + 8..<start + 12])
                    return Double(frames * samplesPerFrame) / Double(sampleRate)
                }
            }
        }
        return bitrate > 0 ? Double((size - offset) * 8) / Double(bitrate) : nil
    }
}
