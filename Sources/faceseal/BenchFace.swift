import FaceSealFace
import Foundation

/// `faceseal bench face`: per-stage timings of the face pipeline on the test images, side by side
/// with dlib itself (a C++ harness that `scripts/bench-face.sh` compiles), interleaved request by
/// request so both see the same machine load. One line per stage with the medians and
/// `ratio=<ours/dlib>`; below 1 means FaceSeal is faster.
///
/// Stages are rows of a table (`BenchFace.Stage`): each names its inputs, how FaceSeal runs one, and
/// the request that makes the harness run the same on the same pixels. The capture rows time FaceSeal's
/// selfie capture (`FaceCaptureSession`: minimum face size, the face tracked from the frame before),
/// which dlib has no counterpart to; they are set beside dlib's full-range pipeline on the same frames.
/// The last line is the peak memory of a 5-frame verification, measured in a child process.
enum BenchFace {
    struct Options {
        var peer: String?
        var models: URL
        var images: URL
        var work: URL
        /// Whether `work` is a temporary folder of this run, removed at the end.
        var ownsWork = true
        var iterations = 15
        /// Run only the 5-frame verification and print its peak memory (the child process of a bench run).
        var verificationMemory = false
        /// Only these stages (`--stages embed,align`), without the summary or the memory run; `nil`: every stage.
        var stages: Set<String>?
    }

    /// One input of a stage: the pixels FaceSeal gets and the file the harness reads (same pixels).
    struct Input {
        var name: String
        var image: RGBImage
        var peerFile: String
        /// The face box FaceSeal found in the frame (full range); landmarks and align start from it on both sides.
        var box: FaceRect?
        /// The frame before, the face a few pixels away: what a tracked capture frame follows.
        var previous: RGBImage?
    }

    /// A row of the bench table.
    struct Stage {
        var name: String
        var inputs: [Input]
        /// Runs FaceSeal's stage once on the input and times it (or only the part of it that is the stage).
        var ours: (Input) throws -> Sample
        /// The harness request line for the input; `nil` for a row timed against another row's dlib samples.
        var peerRequest: ((Input) -> String)?
        /// The row whose dlib samples this row is set beside, when it has no request of its own.
        var comparedWith: String?
        /// Timed rounds (fewer for the large frames, whose dlib pipeline takes seconds).
        var rounds: Int
    }

    /// An input the benchmark cannot run on.
    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    static func run(_ options: Options) -> Int32 {
        do {
            if options.verificationMemory {
                try verificationMemory(options)
            } else {
                try bench(options)
            }
            return 0
        } catch {
            printError("faceseal bench face: \(error)")
            return 1
        }
    }

    static func parse(_ arguments: ParsedArguments) throws(ArgumentError) -> Options {
        let environment = ProcessInfo.processInfo.environment
        let cache = environment["FACESEAL_CACHE"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/faceseal")
        var options = Options(peer: arguments.string("peer"),
                              models: URL(fileURLWithPath: arguments.string("models") ?? cache.appendingPathComponent("models").path),
                              images: URL(fileURLWithPath: arguments.string("images") ?? cache.appendingPathComponent("images").path),
                              work: FileManager.default.temporaryDirectory.appendingPathComponent("faceseal-bench-\(getpid())"))
        if let work = arguments.string("work") {
            options.work = URL(fileURLWithPath: work)
            options.ownsWork = false
        }
        options.iterations = try arguments.integer("iterations", in: 1...1000) ?? options.iterations
        options.verificationMemory = arguments.flag("verification-memory")
        options.stages = arguments.string("stages").map { Set($0.split(separator: ",").map(String.init)) }
        return options
    }

    /// The models, as `faceseal device` loads them (without the 68-point model unless `landmarks68`).
    static func models(_ options: Options, landmarks68: Bool = false) throws -> FaceModels {
        try FaceModels.load(from: options.models, landmarks68: landmarks68)
    }

    // MARK: - The table

    static func bench(_ options: Options) throws {
        try FileManager.default.createDirectory(at: options.work, withIntermediateDirectories: true)
        defer { if options.ownsWork { try? FileManager.default.removeItem(at: options.work) } }
        let loadStart = DispatchTime.now().uptimeNanoseconds
        let models = try Self.models(options)
        let loadMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - loadStart) / 1e6
        print(String(format: "models loaded in %.0f ms", loadMilliseconds))
        let (detector, shapePredictor, embedder) = (models.detector, models.landmarks5, models.embedder)
        let decoder = ImageDecoder()

        let photos = try photoInputs(options)
        let chips = try chipInputs(options)
        let small = try frameInputs(options, sources: photoSources, width: 640, height: 480, detector: detector)
        let large = try frameInputs(options, sources: largeFrameSources, width: 1280, height: 720, detector: detector)
        let framesWithFace = small.filter { $0.box != nil }
        func boxRequest(_ stage: String, _ input: Input) -> String {
            let box = input.box!
            return "\(stage) \(input.peerFile) \(box.left) \(box.top) \(box.right) \(box.bottom)"
        }
        /// detect → 5 landmarks → chip → embedding over the whole frame, every face size: as dlib's harness.
        func fullRange(_ input: Input) throws -> Sample {
            try timed {
                guard let face = try detector.detect(in: input.image).first else { return }
                let shape = shapePredictor.predict(in: input.image, box: face.rect)
                _ = try embedder.embedding(of: try FaceAligner.chip(from: input.image, landmarks5: shape))
            }
        }
        /// A selfie capture frame, with the frame before it (tracked) or without (the first frame, whole-frame search).
        func capture(tracked: Bool) -> (Input) throws -> Sample {
            { input in
                var session = models.captureSession()
                if tracked, let previous = input.previous { try session.add(image: previous, timestamp: 0) }
                let sample = try timed {
                    try session.add(image: input.image, timestamp: 1.0 / 30)
                    _ = try session.embedding(ofFrame: session.faces.count - 1)
                }
                guard (session.faces.last?.search.region != nil) == tracked else {
                    throw UsageError(description: "\(input.name): the capture frame was \(tracked ? "not " : "")tracked")
                }
                return sample
            }
        }
        let largeRounds = max(1, options.iterations / 3)
        let allStages: [Stage] = [
            Stage(name: "decode", inputs: photos, ours: { input in try timed { _ = try decoder.decodeFile(atPath: input.peerFile) } },
                  peerRequest: { "decode \($0.peerFile)" }, rounds: options.iterations),
            Stage(name: "detect", inputs: small, ours: { input in try timed { _ = try detector.detect(in: input.image) } },
                  peerRequest: { "detect \($0.peerFile)" }, rounds: options.iterations),
            Stage(name: "landmarks", inputs: framesWithFace,
                  ours: { input in timed { _ = shapePredictor.predict(in: input.image, box: input.box!) } },
                  peerRequest: { boxRequest("landmarks", $0) }, rounds: options.iterations),
            Stage(name: "align", inputs: framesWithFace,
                  ours: { input in
                      let shape = shapePredictor.predict(in: input.image, box: input.box!)
                      return try timed { _ = try FaceAligner.chip(from: input.image, landmarks5: shape) }
                  },
                  peerRequest: { boxRequest("align", $0) }, rounds: options.iterations),
            Stage(name: "embed", inputs: chips, ours: { input in try timed { _ = try embedder.embedding(of: input.image) } },
                  peerRequest: { "embed \($0.peerFile)" }, rounds: options.iterations),
            Stage(name: "pipeline-enrol-640x480", inputs: framesWithFace, ours: fullRange,
                  peerRequest: { "pipeline \($0.peerFile)" }, rounds: options.iterations),
            Stage(name: "pipeline-selfie-640x480", inputs: framesWithFace, ours: capture(tracked: false),
                  comparedWith: "pipeline-enrol-640x480", rounds: options.iterations),
            Stage(name: "pipeline-tracked-640x480", inputs: framesWithFace, ours: capture(tracked: true),
                  comparedWith: "pipeline-enrol-640x480", rounds: options.iterations),
            Stage(name: "pipeline-enrol-1280x720", inputs: large, ours: fullRange,
                  peerRequest: { "pipeline \($0.peerFile)" }, rounds: largeRounds),
            Stage(name: "pipeline-selfie-1280x720", inputs: large, ours: capture(tracked: false),
                  comparedWith: "pipeline-enrol-1280x720", rounds: largeRounds),
            Stage(name: "pipeline-tracked-1280x720", inputs: large, ours: capture(tracked: true),
                  comparedWith: "pipeline-enrol-1280x720", rounds: largeRounds),
        ]
        let stages = allStages.filter { options.stages?.contains($0.name) ?? true }
        guard !stages.isEmpty else { throw UsageError(description: "no stage named in --stages") }

        let peer = try options.peer.map { try Peer(executable: $0, models: options.models) }
        defer { peer?.close() }
        print("inputs: \(photos.count) photos, \(chips.count) johns chips (150×150), \(small.count) frames of 640×480 "
              + "(\(framesWithFace.count) with a face), \(large.count) of 1280×720; \(options.iterations) rounds "
              + "(\(largeRounds) for 1280×720); peer: \(peer == nil ? "none" : "dlib \(dlibVersion())")")

        // Warm-up: first touches of the weights, the harness's input cache, page faults.
        for stage in stages {
            for input in stage.inputs {
                _ = try stage.ours(input)
                if let peer, let request = stage.peerRequest { _ = try peer.time(request(input)) }
            }
        }
        var oursSamples = [String: [Sample]]()
        var peerSamples = [String: [Sample]]()
        for round in 0..<options.iterations {
            for stage in stages where round < stage.rounds {
                for input in stage.inputs {
                    oursSamples[stage.name, default: []].append(try stage.ours(input))
                    if let peer, let request = stage.peerRequest {
                        peerSamples[stage.name, default: []].append(try peer.time(request(input)))
                    }
                }
            }
        }
        for stage in stages {
            let ours = oursSamples[stage.name] ?? []
            let oursWall = median(ours.map(\.wall))
            var line = "stage=\(stage.name.padding(toLength: 26, withPad: " ", startingAt: 0))"
                + String(format: " faceseal_us=%8.0f", oursWall)
            if let theirs = peerSamples[stage.comparedWith ?? stage.name] {
                let theirsWall = median(theirs.map(\.wall))
                line += String(format: " dlib_us=%8.0f ratio=%.3f", theirsWall, oursWall / theirsWall)
                line += String(format: " | cpu faceseal_us=%8.0f dlib_us=%8.0f cpu_ratio=%.3f",
                               median(ours.map(\.cpu)), median(theirs.map(\.cpu)),
                               median(ours.map(\.cpu)) / median(theirs.map(\.cpu)))
            } else {
                line += String(format: " | cpu faceseal_us=%8.0f", median(ours.map(\.cpu)))
            }
            line += " n=\(ours.count)"
            if let other = stage.comparedWith { line += " (dlib: its full-range pipeline, \(other))" }
            print(line)
        }
        guard options.stages == nil else { return }
        func milliseconds(_ stage: String) -> Double { median((oursSamples[stage] ?? []).map(\.wall)) / 1000 }
        func verdict(_ met: Bool) -> String { met ? "met" : "NOT met" }
        for (size, target) in [("640x480", 60.0), ("1280x720", 150.0)] {
            let first = milliseconds("pipeline-selfie-\(size)"), tracked = milliseconds("pipeline-tracked-\(size)")
            print(String(format: "pipeline (detect+landmarks+align+embed), %@ capture frame: first frame %.1f ms, tracked frame %.1f ms; "
                         + "target < %.0f ms: %@", size, first, tracked, target, verdict(max(first, tracked) < target)))
        }
        let enrol = max(milliseconds("pipeline-enrol-640x480"), 0)
        print(String(format: "pipeline, full-range enrolment photo (640×480): %.1f ms; target < 150 ms: %@", enrol, verdict(enrol < 150)))
        if peer != nil {
            let embed = median((oursSamples["embed"] ?? []).map(\.wall)) / median((peerSamples["embed"] ?? []).map(\.wall))
            let align = median((oursSamples["align"] ?? []).map(\.wall)) / median((peerSamples["align"] ?? []).map(\.wall))
            print(String(format: "embedding ratio %.3f, target ≤ 0.6: %@; alignment ratio %.3f, target ≤ 1.0: %@",
                         embed, verdict(embed <= 0.6), align, verdict(align <= 1.0)))
        }
        let peak = try measureVerificationMemory(options)
        print(String(format: "peak resident memory, 5-frame verification (4 models, 640×480 frames): %.0f MB; target < 250 MB: %@",
                     peak, verdict(peak < 250)))
    }

    /// Runs `timed` work and returns its wall and process CPU time.
    static func timed(_ body: () throws -> Void) rethrows -> Sample {
        let start = DispatchTime.now().uptimeNanoseconds
        let cpuStart = processCPUNanoseconds()
        try body()
        return Sample(wall: Double(DispatchTime.now().uptimeNanoseconds - start) / 1000,
                      cpu: Double(processCPUNanoseconds() - cpuStart) / 1000)
    }

    // MARK: - Memory

    /// Runs this executable with `--verification-memory` and returns the peak it reports, in MB.
    static func measureVerificationMemory(_ options: Options) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["bench", "face", "--verification-memory", "--models", options.models.path, "--images", options.images.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let field = text.split(separator: " ").first(where: { $0.hasPrefix("peak_rss_kb=") }),
              let kilobytes = Double(field.dropFirst("peak_rss_kb=".count).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw UsageError(description: "the verification-memory run failed: \(text)")
        }
        return kilobytes / 1024
    }

    /// What `faceseal device` does for an approval, in memory: the four models loaded, then a selfie capture of five
    /// 640×480 frames (68-point landmarks for liveness) matched against the templates of another photo's frame.
    /// Prints `peak_rss_kb=<VmHWM>` (the process's own high-water mark; `ru_maxrss` would include the parent's
    /// from before `exec`).
    static func verificationMemory(_ options: Options) throws {
        let models = try Self.models(options, landmarks68: true)
        /// 640×480 frames of a portrait, the face moving 4 px a frame.
        func frames(_ file: String, count: Int) throws -> [RGBImage] {
            let photo = try ImageDecoder().decodeFile(atPath: options.images.appendingPathComponent(file).path)
            guard let face = try models.detector.detect(in: photo, minimumFaceSize: 200).first else {
                throw UsageError(description: "no face in \(file)")
            }
            return (0..<count).map { frame in
                BenchImages.frame(photo, width: 640, height: 480,
                                  center: (Double(face.left + face.right) / 2 + Double(4 * frame), Double(face.top + face.bottom) / 2))
            }
        }
        var enrolment = FaceCaptureSession(detector: models.detector, landmarks5: models.landmarks5, embedder: models.embedder)
        try enrolment.add(image: try frames("fr/obama2.jpg", count: 1)[0], timestamp: 0)
        let templates = try enrolment.embeddings()
        var capture = models.captureSession()
        for (index, frame) in try frames("fr/obama.jpg", count: 5).enumerated() {
            try capture.add(image: frame, timestamp: Double(index) / 30)
        }
        let result = try capture.match(templates: templates)
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = line.split(separator: " ").compactMap({ Int($0) }).first else {
            throw UsageError(description: "no VmHWM in /proc/self/status")
        }
        print("peak_rss_kb=\(kilobytes) frames=\(capture.faces.count) match=\(result.isMatch)")
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
                let image = try ImageDecoder().decodeFile(atPath: url.path)
                let peerFile = options.work.appendingPathComponent("chip-\(person)-\(file).ppm").path
                try BenchImages.writePPM(image, to: peerFile)
                inputs.append(Input(name: "\(person)/\(file)", image: image, peerFile: peerFile))
            }
        }
        guard !inputs.isEmpty else { throw UsageError(description: "no johns chips under \(root.path)") }
        return inputs
    }

    /// Portraits: their decoding is timed (the original files), and they are the 640×480 frames' sources.
    static let photoSources = ["fr/obama.jpg", "fr/biden.jpg", "grace_hopper_512x512.jpg", "faces/Tom_Cruise_avp_2014_4.jpg"]
    /// The 1280×720 frames' sources: portraits whose face fits a 16:9 crop.
    static let largeFrameSources = ["fr/obama.jpg", "fr/biden.jpg", "grace_hopper_512x512.jpg", "fr/obama3.jpg"]

    static func photoInputs(_ options: Options) throws -> [Input] {
        var inputs: [Input] = []
        for source in photoSources {
            let path = options.images.appendingPathComponent(source).path
            guard FileManager.default.fileExists(atPath: path) else { continue }
            inputs.append(Input(name: source, image: try ImageDecoder().decodeFile(atPath: path), peerFile: path))
        }
        guard !inputs.isEmpty else { throw UsageError(description: "no portraits under \(options.images.path)") }
        return inputs
    }

    /// Camera-sized frames: the largest crop of each portrait with the frame's aspect ratio, centred on its
    /// (first) face as far as the photo allows, resized to `width × height`; with the frame before it, in
    /// which the face is 6 px left and 3 px up.
    static func frameInputs(_ options: Options, sources: [String], width: Int, height: Int, detector: FaceDetector) throws -> [Input] {
        try sources.compactMap { source in
            let path = options.images.appendingPathComponent(source).path
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            let photo = try ImageDecoder().decodeFile(atPath: path)
            let face = try detector.detect(in: photo).first
            let center = face.map { (x: Double($0.left + $0.right) / 2, y: Double($0.top + $0.bottom) / 2) }
                ?? (x: Double(photo.width) / 2, y: Double(photo.height) / 2)
            let frame = BenchImages.frame(photo, width: width, height: height, center: center)
            let scale = min(Double(photo.width) / Double(width), Double(photo.height) / Double(height))
            let previous = BenchImages.frame(photo, width: width, height: height, center: (center.x + 6 * scale, center.y + 3 * scale))
            let peerFile = options.work.appendingPathComponent("frame-\(width)x\(height)-\((source as NSString).lastPathComponent).ppm").path
            try BenchImages.writePPM(frame, to: peerFile)
            return Input(name: source, image: frame, peerFile: peerFile, box: try detector.detect(in: frame).first?.rect, previous: previous)
        }
    }

    /// One timing: wall clock and CPU time of the whole process (every thread), in microseconds.
    /// `ratio=` compares wall clocks. The CPU columns show work under a loaded machine; dlib's include
    /// its OpenBLAS threads spinning between calls, so its CPU time can exceed the wall time of a
    /// single-threaded stage.
    struct Sample {
        var wall: Double
        var cpu: Double
    }

    static func processCPUNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
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

        /// Sends one request and returns the harness's own wall and CPU measurements in microseconds.
        func time(_ request: String) throws -> Sample {
            input.fileHandleForWriting.write(Data((request + "\n").utf8))
            let reply = try readLine()
            let fields = reply.split(separator: " ")
            guard fields.count >= 2, let wall = Double(fields[0]), let cpu = Double(fields[1]) else {
                throw Failure(description: "dlib harness answered '\(reply)' to '\(request)'")
            }
            return Sample(wall: wall, cpu: cpu)
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

    static func writePPM(_ image: RGBImage, to path: String) throws {
        var data = Data("P6\n\(image.width) \(image.height)\n255\n".utf8)
        data.append(contentsOf: image.pixels)
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// The largest crop with the frame's aspect ratio, centred on `center` as far as the image allows,
    /// resized bilinearly to `width × height`.
    static func frame(_ image: RGBImage, width: Int, height: Int, center: (x: Double, y: Double)) -> RGBImage {
        var cropWidth = image.width
        var cropHeight = image.width * height / width
        if cropHeight > image.height {
            cropHeight = image.height
            cropWidth = image.height * width / height
        }
        let x0 = min(max(center.x - Double(cropWidth) / 2, 0), Double(image.width - cropWidth))
        let y0 = min(max(center.y - Double(cropHeight) / 2, 0), Double(image.height - cropHeight))
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
