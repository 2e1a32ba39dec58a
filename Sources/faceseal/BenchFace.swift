import FaceSealFace
import Foundation

/// `faceseal bench face`: per-stage timings of the face pipeline on the test images, side by side
/// with dlib itself (a C++ harness that `scripts/bench-face.sh` compiles), interleaved request by
/// request so both see the same machine load. One line per stage with the medians and
/// `ratio=<ours/dlib>`; below 1 means FaceSeal is faster.
///
/// Stages are rows of a table (`BenchFace.Stage`): each names its inputs, how FaceSeal runs one, and
/// the request that makes the harness run the same on the same pixels.
enum BenchFace {
    struct Options {
        var peer: String?
        var models: URL
        var images: URL
        var work: URL
        var iterations = 15
        var frameWidth = 640
        var frameHeight = 480
    }

    /// One input of a stage: the pixels FaceSeal gets and the file the harness reads (same pixels).
    struct Input {
        var name: String
        var image: RGBImage
        var peerFile: String
    }

    /// A row of the bench table.
    struct Stage {
        var name: String
        var inputs: [Input]
        /// Runs FaceSeal's stage once on the input.
        var ours: (Input) throws -> Void
        /// The harness request line for the input.
        var peerRequest: (Input) -> String
    }

    static let usage = """
    usage: faceseal bench face [--peer HARNESS] [--models DIR] [--images DIR] [--work DIR] [--iterations N]
      --peer        dlib harness built by scripts/bench-face.sh (without it only FaceSeal is timed)
      --models      folder with the dlib .dat files (default $FACESEAL_CACHE/models)
      --images      folder with the test images (default $FACESEAL_CACHE/images)
      --work        scratch folder for the frames handed to the harness (default a temporary one)
      --iterations  timed rounds per input (default 15)
    """

    static func run(_ arguments: [String]) async -> Int32 {
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            printError("faceseal bench face: \(error)\n\(usage)")
            return 64
        }
        do {
            try bench(options)
            return 0
        } catch {
            printError("faceseal bench face: \(error)")
            return 1
        }
    }

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ arguments: [String]) throws -> Options {
        let environment = ProcessInfo.processInfo.environment
        let cache = environment["FACESEAL_CACHE"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/faceseal")
        var options = Options(peer: nil, models: cache.appendingPathComponent("models"),
                              images: cache.appendingPathComponent("images"),
                              work: FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-bench-\(getpid())"))
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
            switch flag {
            case "--peer": options.peer = value
            case "--models": options.models = URL(fileURLWithPath: value)
            case "--images": options.images = URL(fileURLWithPath: value)
            case "--work": options.work = URL(fileURLWithPath: value)
            case "--iterations":
                guard let n = Int(value), (1...1000).contains(n) else { throw UsageError(description: "bad --iterations \(value)") }
                options.iterations = n
            default: throw UsageError(description: "unknown option \(flag)")
            }
        }
        return options
    }

    // MARK: - The table

    static func bench(_ options: Options) throws {
        try FileManager.default.createDirectory(at: options.work, withIntermediateDirectories: true)
        let loadStart = DispatchTime.now().uptimeNanoseconds
        let embedder = try FaceEmbedder(modelURL: options.models.appendingPathComponent("dlib_face_recognition_resnet_model_v1.dat"))
        let detector = try FaceDetector(modelURL: options.models.appendingPathComponent("mmod_human_face_detector.dat"))
        let loadMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - loadStart) / 1e6
        print(String(format: "models loaded in %.0f ms", loadMilliseconds))

        let chips = try chipInputs(options)
        let frames = try frameInputs(options)
        let stages: [Stage] = [
            Stage(name: "detect", inputs: frames,
                  ours: { _ = try detector.detect(in: $0.image) },
                  peerRequest: { "detect \($0.peerFile)" }),
            Stage(name: "embed", inputs: chips,
                  ours: { _ = try embedder.embedding(of: $0.image) },
                  peerRequest: { "embed \($0.peerFile)" }),
        ]

        let peer = try options.peer.map { try Peer(executable: $0, models: options.models) }
        defer { peer?.close() }
        print("inputs: \(chips.count) johns chips (150×150), \(frames.count) frames (\(options.frameWidth)×\(options.frameHeight)); "
              + "\(options.iterations) rounds; peer: \(peer == nil ? "none" : "dlib \(dlibVersion())")")

        // Warm-up: first touches of the weights, the harness's input cache, page faults.
        for stage in stages {
            for input in stage.inputs {
                try stage.ours(input)
                _ = try peer?.time(stage.peerRequest(input))
            }
        }
        var oursSamples = [String: [Double]]()
        var peerSamples = [String: [Double]]()
        for _ in 0..<options.iterations {
            for stage in stages {
                for input in stage.inputs {
                    let start = DispatchTime.now().uptimeNanoseconds
                    try stage.ours(input)
                    oursSamples[stage.name, default: []].append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
                    if let peer {
                        peerSamples[stage.name, default: []].append(try peer.time(stage.peerRequest(input)))
                    }
                }
            }
        }
        print("stage        faceseal_us      dlib_us    ratio")
        var pipelineOurs = 0.0
        var pipelinePeer = 0.0
        for stage in stages {
            let ours = median(oursSamples[stage.name] ?? [])
            pipelineOurs += ours
            var line = "stage=\(stage.name.padding(toLength: 10, withPad: " ", startingAt: 0))"
                + String(format: " faceseal_us=%.0f", ours)
            if let samples = peerSamples[stage.name] {
                let theirs = median(samples)
                pipelinePeer += theirs
                line += String(format: " dlib_us=%.0f ratio=%.3f", theirs, ours / theirs)
            }
            print(line)
        }
        var total = "total (sum of stage medians): " + String(format: "faceseal %.1f ms", pipelineOurs / 1000)
        if peer != nil { total += String(format: ", dlib %.1f ms, ratio=%.3f", pipelinePeer / 1000, pipelineOurs / pipelinePeer) }
        print(total)
    }

    // MARK: - Inputs

    /// The johns chips: already aligned 150×150 faces, the embedder's input as is.
    static func chipInputs(_ options: Options) throws -> [Input] {
        let root = options.images.appendingPathComponent("johns")
        let people = try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
        var inputs: [Input] = []
        for person in people {
            let folder = root.appendingPathComponent(person)
            // Two chips per person keep a round short while covering every identity.
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().prefix(2) {
                let url = folder.appendingPathComponent(file)
                let image = try BenchImages.load(url, work: options.work)
                let peerFile = options.work.appendingPathComponent("chip-\(person)-\(file).ppm").path
                try BenchImages.writePPM(image, to: peerFile)
                inputs.append(Input(name: "\(person)/\(file)", image: image, peerFile: peerFile))
            }
        }
        guard !inputs.isEmpty else { throw UsageError(description: "no johns chips under \(root.path)") }
        return inputs
    }

    /// Camera-sized frames: the largest centred 4:3 crop of each portrait, resized to 640×480.
    static func frameInputs(_ options: Options) throws -> [Input] {
        let sources = ["fr/obama.jpg", "fr/biden.jpg", "grace_hopper_512x512.jpg", "faces/Tom_Cruise_avp_2014_4.jpg"]
        var inputs: [Input] = []
        for source in sources {
            let url = options.images.appendingPathComponent(source)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            let frame = try BenchImages.frame(try BenchImages.load(url, work: options.work),
                                          width: options.frameWidth, height: options.frameHeight)
            let peerFile = options.work.appendingPathComponent("frame-\(url.lastPathComponent).ppm").path
            try BenchImages.writePPM(frame, to: peerFile)
            inputs.append(Input(name: source, image: frame, peerFile: peerFile))
        }
        guard !inputs.isEmpty else { throw UsageError(description: "no portraits under \(options.images.path)") }
        return inputs
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    static func dlibVersion() -> String {
        guard let text = try? String(contentsOfFile: "/usr/include/dlib/revision.h", encoding: .utf8) else { return "(Debian libdlib-dev)" }
        let numbers = text.split(separator: "\n").compactMap { line -> String? in
            line.contains("DLIB_MAJOR_VERSION") || line.contains("DLIB_MINOR_VERSION") || line.contains("DLIB_PATCH_VERSION")
                ? line.split(separator: " ").last.map(String.init) : nil
        }
        return numbers.joined(separator: ".") + " + OpenBLAS"
    }
}

extension BenchFace {
    /// The dlib harness as a child process: one request line in, one `<µs> <summary>` line out.
    final class Peer {
        struct Failure: Error, CustomStringConvertible {
            var description: String
        }

        private let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private var buffer: [UInt8] = []

        init(executable: String, models: URL) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = [models.path]
            process.standardInput = input
            process.standardOutput = output
            try process.run()
        }

        /// Sends one request and returns the harness's own measurement in microseconds.
        func time(_ request: String) throws -> Double {
            input.fileHandleForWriting.write(Data((request + "\n").utf8))
            let reply = try readLine()
            guard let first = reply.split(separator: " ").first, let microseconds = Double(first) else {
                throw Failure(description: "dlib harness answered '\(reply)' to '\(request)'")
            }
            return microseconds
        }

        private func readLine() throws -> String {
            while true {
                if let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    return line
                }
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw Failure(description: "dlib harness exited") }
                buffer.append(contentsOf: chunk)
            }
        }

        func close() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }
}

/// Image files for the bench: loading the test images and writing the PPMs the harness reads.
enum BenchImages {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Loads a test image. JPEGs are converted by `djpeg` into the work folder first (the bench script
    /// installs libjpeg-turbo-progs), then read as binary PPM.
    static func load(_ url: URL, work: URL) throws -> RGBImage {
        let ppm = work.appendingPathComponent("src-" + url.path.replacingOccurrences(of: "/", with: "_") + ".ppm")
        if !FileManager.default.fileExists(atPath: ppm.path) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/djpeg")
            process.arguments = ["-pnm", "-outfile", ppm.path, url.path]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw Failure(description: "djpeg failed on \(url.path)") }
        }
        return try readPPM(ppm.path)
    }

    static func readPPM(_ path: String) throws -> RGBImage {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var fields: [Int] = []
        var index = 2
        guard bytes.count > 2, bytes[0] == 0x50, bytes[1] == 0x36 else { throw Failure(description: "\(path) is not a binary PPM") }
        while fields.count < 3 {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A { index += 1 }
            var value = 0
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                value = value * 10 + Int(bytes[index] - 0x30)
                index += 1
                guard value < 1 << 20 else { throw Failure(description: "\(path): header value too large") }
            }
            fields.append(value)
        }
        index += 1
        let (width, height) = (fields[0], fields[1])
        guard fields[2] == 255, width > 0, height > 0, bytes.count - index >= width * height * 3 else {
            throw Failure(description: "\(path): unsupported PPM")
        }
        return RGBImage(width: width, height: height, pixels: Array(bytes[index..<(index + width * height * 3)]))
    }

    static func writePPM(_ image: RGBImage, to path: String) throws {
        var data = Data("P6\n\(image.width) \(image.height)\n255\n".utf8)
        data.append(contentsOf: image.pixels)
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// The largest centred crop with the frame's aspect ratio, resized bilinearly to `width × height`.
    static func frame(_ image: RGBImage, width: Int, height: Int) throws -> RGBImage {
        var cropWidth = image.width
        var cropHeight = image.width * height / width
        if cropHeight > image.height {
            cropHeight = image.height
            cropWidth = image.height * width / height
        }
        let x0 = Double(image.width - cropWidth) / 2
        let y0 = Double(image.height - cropHeight) / 2
        let scaleX = Double(cropWidth) / Double(width)
        let scaleY = Double(cropHeight) / Double(height)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            let sy = min(max(y0 + (Double(y) + 0.5) * scaleY - 0.5, 0), Double(image.height - 1))
            let top = Int(sy), bottom = min(top + 1, image.height - 1), fy = sy - Double(top)
            for x in 0..<width {
                let sx = min(max(x0 + (Double(x) + 0.5) * scaleX - 0.5, 0), Double(image.width - 1))
                let left = Int(sx), right = min(left + 1, image.width - 1), fx = sx - Double(left)
                for c in 0..<3 {
                    func at(_ px: Int, _ py: Int) -> Double { Double(image.pixels[(py * image.width + px) * 3 + c]) }
                    let value = (1 - fy) * ((1 - fx) * at(left, top) + fx * at(right, top))
                        + fy * ((1 - fx) * at(left, bottom) + fx * at(right, bottom))
                    pixels[(y * width + x) * 3 + c] = UInt8(min(255, value.rounded()))
                }
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }
}
