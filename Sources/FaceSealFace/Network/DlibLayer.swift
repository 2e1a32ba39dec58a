/// One computational layer of a dlib DNN file, in forward order, with its parameters as stored
/// (dlib_format.md §2.3). Batch-norm records are already folded into `affine`, as dlib does on load.
enum DlibLayer: Sendable {
    case convolution(DlibConvolution)
    case affine(DlibAffine)
    case relu
    case maxPool(DlibPool)
    case averagePool(DlibPool)
    case addPrevious
    case fullyConnected(DlibFullyConnected)
    /// An `add_tag_layer` or `add_skip_layer` wrapper: the file stores no tag id, so the wiring comes
    /// from the published network definition (see `LayerPlan`).
    case tagOrSkip
}

/// A `con_` record: cross-correlation with zero padding.
struct DlibConvolution: Sendable {
    var filters: Int
    var channels: Int
    var kernelRows: Int
    var kernelCols: Int
    var strideY: Int
    var strideX: Int
    var padY: Int
    var padX: Int
    /// `filters × channels × kernelRows × kernelCols`, row-major.
    var weights: [Float]
    /// `filters` values (zeros when the record has no bias).
    var bias: [Float]
}

/// An `affine_` record (or a folded `bn_con2`/`bn_fc2`): `x·gamma + beta`.
struct DlibAffine: Sendable {
    var gamma: [Float]
    var beta: [Float]
    /// `true` for mode 1 (one coefficient per element), `false` for mode 0 (per channel).
    var perElement: Bool
}

/// A `max_pool_2` / `avg_pool_2` record. `kernelRows == 0` means a global pool.
struct DlibPool: Sendable {
    var kernelRows: Int
    var kernelCols: Int
    var strideY: Int
    var strideX: Int
    var padY: Int
    var padX: Int
}

/// An `fc_` record: `y_j = Σ_i x_i·W[i·outputs + j] (+ bias_j)`.
struct DlibFullyConnected: Sendable {
    var inputs: Int
    var outputs: Int
    /// `inputs × outputs`, row-major.
    var weights: [Float]
    var bias: [Float]?
}

/// The loss record of a DNN file.
enum DlibLoss: Sendable {
    /// `loss_metric_2`: the embedding network; `distanceThreshold` is dlib's same-person distance.
    case metric(margin: Float, distanceThreshold: Float)
    /// `loss_mmod_`: the detector.
    case mmod(DlibMMODOptions)
}

/// The `mmod_options` fields the detector needs.
struct DlibMMODOptions: Sendable {
    struct Window: Sendable {
        var width: Int
        var height: Int
        var label: String
    }
    var windows: [Window]
    var nmsIoUThreshold: Double
    var nmsPercentCoveredThreshold: Double
}

/// The input layer of a DNN file.
enum DlibInputLayer: Sendable {
    /// `input_rgb_image_sized`: a fixed-size chip.
    case rgbImageSized(mean: (red: Float, green: Float, blue: Float), rows: Int, cols: Int)
    /// `input_rgb_image_pyramid`: a tiled pyramid of the whole image.
    case rgbImagePyramid(mean: (red: Float, green: Float, blue: Float), padding: Int, outerPadding: Int)
}
