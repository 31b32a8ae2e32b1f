import Foundation
import Testing

@testable import TrailServer

/// Play times read from file headers for the duration estimate, on files laid out by the formats' specifications:
/// ISO BMFF (`moov`/`mvhd` versions 0 and 1, a 64-bit atom size), FLAC STREAMINFO, MPEG audio (CBR, Xing, ID3v2).
@Suite struct MediaDurationTests {
    static func be32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
    static func be64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
    static func atom(_ name: String, _ body: [UInt8]) -> [UInt8] { be32(UInt32(8 + body.count)) + Array(name.utf8) + body }

    static func write(_ bytes: [UInt8], _ ext: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("duration-\(UUID()).\(ext)")
        try Data(bytes).write(to: file)
        return file
    }

    @Test("MP4: mvhd version 0 after ftyp and a large mdat; version 1 inside a moov with a 64-bit size")
    func mp4() throws {
        // Version 0: flags, creation, modification, timescale 600, duration 600 × 75.5 s.
        let mvhd0 = Self.atom(
            "mvhd",
            [0, 0, 0, 0] + Self.be32(0) + Self.be32(0) + Self.be32(600) + Self.be32(45_300) + [UInt8](repeating: 0, count: 80)
        )
        let ftyp = Self.atom("ftyp", Array("isom".utf8) + Self.be32(512) + Array("isomiso2mp41".utf8))
        let mdat = Self.atom("mdat", [UInt8](repeating: 7, count: 100_000))
        let v0 = try Self.write(ftyp + mdat + Self.atom("moov", Self.atom("free", [1, 2, 3]) + mvhd0), "mp4")
        #expect(MediaDuration.seconds(of: v0, mimeType: "video/mp4") == 75.5)
        #expect(MediaDuration.seconds(of: v0, mimeType: "audio/mp4") == 75.5, "M4A uses the same boxes")

        // Version 1: 64-bit times; timescale 1000, duration 3,723,250 ms; the moov atom itself uses the 64-bit size form.
        let mvhd1 = Self.atom(
            "mvhd",
            [1, 0, 0, 0] + Self.be64(0) + Self.be64(0) + Self.be32(1000) + Self.be64(3_723_250) + [UInt8](repeating: 0, count: 80)
        )
        let moovBody = mvhd1
        let moov64 = Self.be32(1) + Array("moov".utf8) + Self.be64(UInt64(16 + moovBody.count)) + moovBody
        let v1 = try Self.write(ftyp + moov64, "mov")
        #expect(MediaDuration.seconds(of: v1, mimeType: "video/quicktime") == 3723.25)

        // No moov (a cut file): no duration, the estimate uses the default stay.
        let cut = try Self.write(ftyp + mdat, "mp4")
        #expect(MediaDuration.seconds(of: cut, mimeType: "video/mp4") == nil)
    }

    @Test("FLAC: sample rate and total samples from STREAMINFO")
    func flac() throws {
        // 44,100 Hz, 2 channels, 16 bits, 4,410,000 samples = 100 s. STREAMINFO bytes 10–17 pack rate(20) ch-1(3) bps-1(5) total(36).
        let rate: UInt64 = 44_100
        let channels: UInt64 = 2
        let bits: UInt64 = 16
        let total: UInt64 = 4_410_000
        let packed = rate << 44 | (channels - 1) << 41 | (bits - 1) << 36 | total
        var info: [UInt8] = [0x10, 0x00, 0x10, 0x00, 0, 0, 0, 0, 0, 0]  // block sizes, frame sizes
        info += Self.be64(packed)
        info += [UInt8](repeating: 0, count: 16)  // MD5
        let file = try Self.write(Array("fLaC".utf8) + [0x80, 0, 0, 34] + info + [UInt8](repeating: 0, count: 1000), "flac")
        #expect(MediaDuration.seconds(of: file, mimeType: "audio/flac") == 100)
    }

    @Test("MP3: constant bit rate from the first frame after an ID3v2 tag; a Xing header's frame count wins")
    func mp3() throws {
        // MPEG-1 layer III, 128 kbit/s (index 9), 44.1 kHz (index 0): 0xFF 0xFB 0x90 0x00. 2,000,000 bytes of frames = 125 s.
        let frameHeader: [UInt8] = [0xFF, 0xFB, 0x90, 0x00]
        let id3: [UInt8] = Array("ID3".utf8) + [4, 0, 0] + [0, 0, 0x01, 0x00]  // syncsafe size 128
        let cbr = try Self.write(id3 + [UInt8](repeating: 0, count: 128) + frameHeader + [UInt8](repeating: 0, count: 2_000_000 - 4), "mp3")
        #expect(MediaDuration.seconds(of: cbr, mimeType: "audio/mpeg") == 125)

        // Xing in the first frame (stereo MPEG-1: after 32 bytes of side information), flags 0x1, 3,828 frames of 1152 samples
        // at 44.1 kHz = 100 s, whatever the file's length says.
        var first = frameHeader + [UInt8](repeating: 0, count: 32) + Array("Xing".utf8) + Self.be32(1) + Self.be32(3_828)
        first += [UInt8](repeating: 0, count: 417 - first.count)
        let vbr = try Self.write(first + [UInt8](repeating: 0, count: 50_000), "mp3")
        let seconds = try #require(MediaDuration.seconds(of: vbr, mimeType: "audio/mpeg"))
        #expect(abs(seconds - 100.0) < 0.01, "\(seconds)")

        let notAudio = try Self.write(Array("not an mp3 at all".utf8), "mp3")
        #expect(MediaDuration.seconds(of: notAudio, mimeType: "audio/mpeg") == nil)
    }
}
