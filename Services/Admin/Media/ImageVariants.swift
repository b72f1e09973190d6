import Dispatch
import Foundation
import Shared

/// An image's pixel size and its WebP variants (DESIGN.md, "Media library"), made at upload by libvips's own
/// command-line tools (`vipsheader`, `vipsthumbnail`, Debian's libvips-tools): libvips decodes JPEG, PNG and WebP
/// in a separate process, so a hostile file cannot take the admin down with it.
struct ImageVariants {
    struct Variant: Equatable {
        let width: Int
        let height: Int
        let bytes: [UInt8]
        let sha256: String
    }

    struct Made: Equatable {
        let width: Int
        let height: Int
        let variants: [Variant]
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let widths = [320, 640, 1280]
    /// Where the tools are looked for (`PATH` is not trusted to have them).
    static let toolDirectories = ["/usr/bin", "/usr/local/bin"]
    /// How long one tool may take before it is stopped (a hostile image must not hold an upload forever).
    static let toolTimeout: DispatchTimeInterval = .seconds(30)
    /// What the tools see of the environment: nothing of the admin's (its database password), and libvips told
    /// to refuse its loaders for untrusted formats.
    static let toolEnvironment = ["PATH": "/usr/bin:/bin", "VIPS_BLOCK_UNTRUSTED": "1", "LC_ALL": "C"]

    /// Whether the tools are installed; without them images get no variants (and a warning at start).
    static var isAvailable: Bool { tool("vipsthumbnail") != nil && tool("vipsheader") != nil }

    private static func tool(_ name: String) -> String? {
        toolDirectories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The image's size and its variants at `widths` narrower than it. Runs the tools off the cooperative pool.
    func make(_ bytes: [UInt8], format: MediaFormat) async throws -> Made {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try makeBlocking(bytes, format: format) })
            }
        }
    }

    private func makeBlocking(_ bytes: [UInt8], format: MediaFormat) throws -> Made {
        guard let thumbnail = Self.tool("vipsthumbnail"), let header = Self.tool("vipsheader") else {
            throw Failure(description: "libvips's tools (vipsthumbnail, vipsheader) are not installed")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("itour-media-\(UUID.random().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("original.\(format.extensions[0])")
        try Data(bytes).write(to: input)
        let (width, height) = try size(of: input.path, header: header, in: directory)
        var variants: [Variant] = []
        for target in Self.widths where target < width {
            let output = directory.appendingPathComponent("w\(target).webp")
            // `--size Nx`: N wide, the height to scale; `strip`: no camera metadata (where a photo was taken) in what phones get.
            try run(thumbnail, [input.path, "--size", "\(target)x", "-o", "\(output.path)[Q=80,strip]"], in: directory)
            let variant = Array(try Data(contentsOf: output))
            let (variantWidth, variantHeight) = try size(of: output.path, header: header, in: directory)
            variants.append(Variant(width: variantWidth, height: variantHeight, bytes: variant,
                                    sha256: MediaHash.of(variant)))
        }
        return Made(width: width, height: height, variants: variants)
    }

    private func size(of path: String, header: String, in directory: URL) throws -> (Int, Int) {
        let width = try run(header, ["-f", "width", path], in: directory), height = try run(header, ["-f", "height", path], in: directory)
        guard let w = Int(width.trimmingCharacters(in: .whitespacesAndNewlines)), let h = Int(height.trimmingCharacters(in: .whitespacesAndNewlines)),
              w > 0, h > 0 else {
            throw Failure(description: "vipsheader did not give a size (\(width), \(height))")
        }
        return (w, h)
    }

    /// Runs a tool; its standard output, or a failure with what it wrote to standard error (kept in a file in
    /// `directory`: a pipe that fills while standard output is read would block the tool).
    @discardableResult
    private func run(_ executable: String, _ arguments: [String], in directory: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = Self.toolEnvironment
        let output = Pipe()
        let errorFile = directory.appendingPathComponent("stderr-\(UUID.random().uuidString)")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let errors = try FileHandle(forWritingTo: errorFile)
        defer { try? errors.close() }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let deadline = DispatchWorkItem { [process] in if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.toolTimeout, execute: deadline)
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        deadline.cancel()
        if process.terminationReason == .uncaughtSignal {
            throw Failure(description: "\((executable as NSString).lastPathComponent) did not finish within \(Self.toolTimeout)")
        }
        guard process.terminationStatus == 0 else {
            let message = (try? Data(contentsOf: errorFile)).map { String(decoding: $0.prefix(300), as: UTF8.self) } ?? ""
            throw Failure(description: "\((executable as NSString).lastPathComponent) failed: \(message)")
        }
        return String(decoding: out, as: UTF8.self)
    }
}
