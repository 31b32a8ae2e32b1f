import Foundation
import TestSupport
import Testing

@testable import TrailServer

/// The demo's sample media, read back by readers that are not ours: ffprobe for the tone, libvips for the picture,
/// and the server's own file-type check that every upload passes.
@Suite(.scratch) struct DemoSampleTests {
    @Test func theToneIsAWAVThatFFprobeReads() async throws {
        let folder = TestScratch.folder("demo-sample")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("tone.wav")
        try SampleMedia.tone(hertz: 440, seconds: 4).write(to: file)
        let probe = try await ChildProcess.run(
            "ffprobe",
            ["-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels:format=duration", "-of", "json", file.path],
            timeout: .seconds(60)
        )
        #expect(probe.status == 0, "\(probe.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let stream = try #require((json["streams"] as? [[String: Any]])?.first)
        #expect(stream["codec_name"] as? String == "pcm_s16le")
        #expect(stream["sample_rate"] as? String == "22050" && stream["channels"] as? Int == 1)
        let duration = try #require(Double(((json["format"] as? [String: Any])?["duration"] as? String) ?? ""))
        #expect(abs(duration - 4) < 0.01)
        let data = try Data(contentsOf: file)
        #expect(
            FileTypeDetector.detect(
                header: Array(data.prefix(FileTypeDetector.headerLength)),
                fileSize: Int64(data.count),
                isValidUTF8Text: { false }
            )?.mimeType == "audio/wav"
        )
    }

    @Test func thePictureIsAPNGThatLibvipsReads() async throws {
        let folder = TestScratch.folder("demo-sample")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("picture.png")
        try SampleMedia.picture().write(to: file)
        let header = try await ChildProcess.run("vipsheader", ["-a", file.path], timeout: .seconds(60))
        #expect(header.status == 0, "\(header.stderr)")
        #expect(
            header.stdout.contains("width: 640") && header.stdout.contains("height: 400") && header.stdout.contains("bands: 3"),
            "\(header.stdout)"
        )
        // Every pixel decodes (a damaged IDAT fails here): the average is a sky-and-lake colour, not black.
        let average = try await ChildProcess.run("vips", ["avg", file.path], timeout: .seconds(60))
        let value = try #require(Double(average.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(average.stderr)")
        #expect(value > 60 && value < 230)
        let data = try Data(contentsOf: file)
        #expect(
            FileTypeDetector.detect(
                header: Array(data.prefix(FileTypeDetector.headerLength)),
                fileSize: Int64(data.count),
                isValidUTF8Text: { false }
            )?.mimeType == "image/png"
        )
    }
}
