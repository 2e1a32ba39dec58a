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
        /// Whether `work` is a temporary folder of this run, removed at the end.
        var ownsWork = true
        var iterations = 15
        var frameWidth = 640
        var frameHeight = 480
    }

    /// One input of a stage: the pixels FaceSeal gets and the file the harness reads (same pixels).
    struct Input {
        var name: String
        var image: RGBImage
        var peerFile: String
        /// The face box FaceSeal found in the frame; landmarks and align start from it on both sides.
        var box: FaceRect?
    }

    /// A row of the bench table.
    struct Stage {
        var name: String
        var inputs: [Input]
        /// Runs FaceSeal's stage once on the input; returns the nanoseconds of the timed part when
        /// only part of the work is the stage (align excludes its landmarks), `nil` to time it all.
        var ours: (Input) throws -> UInt64?
        /// A stage timed whole.
        init(name: String, inputs: [Input], ours: @escaping (Input) throws -> Void, peerRequest: ((Input) -> String)?) {
            self.init(name: name, inputs: inputs, ours: { try ours($0); return nil }, peerRequest: peerRequest)
        }
        /// A stage that times part of its work itself.
        init(name: String, inputs: [Input], ours: @escaping (Input) throws -> UInt64?, peerRequest: ((Input) -> String)?) {
            self.name = name
            self.inputs = inputs
            self.ours = ours
            self.peerRequest = peerRequest
        }
        /// The harness request line for the input; `nil` for a row dlib has no counterpart to.
        var peerRequest: ((Input) -> String)?
    }

    /// An input the benchmark cannot run on.
    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    static func run(_ options: Options) -> Int32 {
        do {
            try bench(options)
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
        return options
    }

    // MARK: - The table

    static func bench(_ options: Options) throws {
        try FileManager.default.createDirectory(at: options.work, withIntermediateDirectories: true)
        defer { if options.ownsWork { try? FileManager.default.removeItem(at: options.work) } }
        let loadStart = DispatchTime.now().uptimeNanoseconds
        let embedder = try FaceEmbedder(modelURL: options.models.appendingPathComponent("dlib_face_recognition_resnet_model_v1.dat"))
        let detector = try FaceDetector(modelURL: options.models.appendingPathComponent("mmod_human_face_detector.dat"))
        let loadMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - loadStart) / 1e6
        print(String(format: "models loaded in %.0f ms", loadMilliseconds))

        let shapePredictor = try ShapePredictor(
            contentsOfFile: options.models.appendingPathComponent("shape_predictor_5_face_landmarks.dat").path)
        let decoder = ImageDecoder()

        let photos = try photoInputs(options)
        let chips = try chipInputs(options)
        let frames = try frameInputs(options, photos: photos, detector: detector).map { frame -> Input in
            var frame = frame
            frame.box = try? detector.detect(in: frame.image).first?.rect
            return frame
        }
        let framesWithFace = frames.filter { $0.box != nil }
        func boxRequest(_ stage: String, _ input: Input) -> String {
            let box = input.box!
            return "\(stage) \(input.peerFile) \(box.left) \(box.top) \(box.right) \(box.bottom)"
        }
        // One row per stage; `pipeline` is detect → 5 landmarks → chip → embedding of one frame.
        let stages: [Stage] = [
            Stage(name: "decode", inputs: photos,
                  ours: { _ = try decoder.decodeFile(atPath: $0.peerFile) },
                  peerRequest: { "decode \($0.peerFile)" }),
            Stage(name: "detect", inputs: frames,
                  ours: { _ = try detector.detect(in: $0.image) },
                  peerRequest: { "detect \($0.peerFile)" }),
            Stage(name: "landmarks", inputs: framesWithFace,
                  ours: { _ = shapePredictor.predict(in: $0.image, box: $0.box!) },
                  peerRequest: { boxRequest("landmarks", $0) }),
            Stage(name: "align", inputs: framesWithFace,
                  ours: { input in
                      let shape = shapePredictor.predict(in: input.image, box: input.box!)
                      let start = DispatchTime.now().uptimeNanoseconds
                      _ = try FaceAligner.chip(from: input.image, landmarks5: shape)
                      return DispatchTime.now().uptimeNanoseconds - start
                  },
                  peerRequest: { boxRequest("align", $0) }),
            Stage(name: "embed", inputs: chips,
                  ours: { _ = try embedder.embedding(of: $0.image) },
                  peerRequest: { "embed \($0.peerFile)" }),
            Stage(name: "pipeline", inputs: framesWithFace,
                  ours: { input in
                      guard let face = try detector.detect(in: input.image).first else { return }
                      let shape = shapePredictor.predict(in: input.image, box: face.rect)
                      _ = try embedder.embedding(of: try FaceAligner.chip(from: input.image, landmarks5: shape))
                  },
                  peerRequest: { "pipeline \($0.peerFile)" }),
            // The same with the detector told faces are at least 120 px (two fine levels skipped);
            // dlib has no such option, so this row has no peer.
            Stage(name: "pipeline-min120", inputs: framesWithFace,
                  ours: { input in
                      guard let face = try detector.detect(in: input.image, minimumFaceSize: 120).first else { return }
                      let shape = shapePredictor.predict(in: input.image, box: face.rect)
                      _ = try embedder.embedding(of: try FaceAligner.chip(from: input.image, landmarks5: shape))
                  },
                  peerRequest: nil),
        ]

        let peer = try options.peer.map { try Peer(executable: $0, models: options.models) }
        defer { peer?.close() }
        print("inputs: \(photos.count) photos, \(chips.count) johns chips (150×150), \(frames.count) frames "
              + "(\(options.frameWidth)×\(options.frameHeight), \(framesWithFace.count) with a face); "
              + "\(options.iterations) rounds; peer: \(peer == nil ? "none" : "dlib \(dlibVersion())")")

        // Warm-up: first touches of the weights, the harness's input cache, page faults.
        for stage in stages {
            for input in stage.inputs {
                _ = try stage.ours(input)
                if let peer, let request = stage.peerRequest { _ = try peer.time(request(input)) }
            }
        }
        var oursSamples = [String: [Sample]]()
        var peerSamples = [String: [Sample]]()
        for _ in 0..<options.iterations {
            for stage in stages {
                for input in stage.inputs {
                    let start = DispatchTime.now().uptimeNanoseconds
                    let cpuStart = processCPUNanoseconds()
                    let inner = try stage.ours(input)
                    let elapsed = inner ?? (DispatchTime.now().uptimeNanoseconds - start)
                    // A stage that times part of its work reports that part's wall time as its CPU time too.
                    let cpu = inner ?? (processCPUNanoseconds() - cpuStart)
                    oursSamples[stage.name, default: []].append(Sample(wall: Double(elapsed) / 1000, cpu: Double(cpu) / 1000))
                    if let peer, let request = stage.peerRequest {
                        peerSamples[stage.name, default: []].append(try peer.time(request(input)))
                    }
                }
            }
        }
        for stage in stages {
            let ours = oursSamples[stage.name] ?? []
            let oursWall = median(ours.map(\.wall))
            var line = "stage=\(stage.name.padding(toLength: 16, withPad: " ", startingAt: 0))"
                + String(format: " faceseal_us=%8.0f", oursWall)
            if let theirs = peerSamples[stage.name] {
                let theirsWall = median(theirs.map(\.wall))
                line += String(format: " dlib_us=%8.0f ratio=%.3f", theirsWall, oursWall / theirsWall)
                line += String(format: " | cpu faceseal_us=%8.0f dlib_us=%8.0f cpu_ratio=%.3f",
                               median(ours.map(\.cpu)), median(theirs.map(\.cpu)),
                               median(ours.map(\.cpu)) / median(theirs.map(\.cpu)))
            } else {
                line += String(format: " | cpu faceseal_us=%8.0f", median(ours.map(\.cpu)))
            }
            line += " n=\(ours.count)"
            if stage.peerRequest == nil { line += " (no dlib counterpart)" }
            print(line)
        }
        let pipeline = median((oursSamples["pipeline"] ?? []).map(\.wall)) / 1000
        print(String(format: "pipeline (detect+landmarks+align+embed, %d×%d frame): median %.1f ms, target < 150 ms: %@",
                     options.frameWidth, options.frameHeight, pipeline, pipeline < 150 ? "met" : "NOT met"))
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

    /// Portraits whose decoding is timed (the original files), the frames' sources.
    static func photoInputs(_ options: Options) throws -> [Input] {
        let sources = ["fr/obama.jpg", "fr/biden.jpg", "grace_hopper_512x512.jpg", "faces/Tom_Cruise_avp_2014_4.jpg"]
        var inputs: [Input] = []
        for source in sources {
            let path = options.images.appendingPathComponent(source).path
            guard FileManager.default.fileExists(atPath: path) else { continue }
            inputs.append(Input(name: source, image: try ImageDecoder().decodeFile(atPath: path), peerFile: path))
        }
        guard !inputs.isEmpty else { throw UsageError(description: "no portraits under \(options.images.path)") }
        return inputs
    }

    /// Camera-sized frames: the largest 4:3 crop of each portrait centred on its (first) face as far as
    /// the photo allows, resized to 640×480.
    static func frameInputs(_ options: Options, photos: [Input], detector: FaceDetector) throws -> [Input] {
        try photos.map { photo in
            let face = try detector.detect(in: photo.image).first
            let center = face.map { (x: Double($0.left + $0.right) / 2, y: Double($0.top + $0.bottom) / 2) }
                ?? (x: Double(photo.image.width) / 2, y: Double(photo.image.height) / 2)
            let frame = BenchImages.frame(photo.image, width: options.frameWidth, height: options.frameHeight, center: center)
            let peerFile = options.work.appendingPathComponent("frame-\((photo.name as NSString).lastPathComponent).ppm").path
            try BenchImages.writePPM(frame, to: peerFile)
            return Input(name: photo.name, image: frame, peerFile: peerFile)
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
