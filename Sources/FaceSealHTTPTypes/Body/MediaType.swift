/// The essence of a `Content-Type` value (`type/subtype`, lowercased), parameters dropped.
///
/// Used to check what a body claims to be before parsing it; `charset` is ignored because
/// FaceSeal bodies are UTF-8 (JSON by RFC 8259, forms by the WHATWG URL standard).
package enum MediaType {
    /// `application/json; charset=utf-8` → `application/json`; nil when there is no usable value.
    package static func essence(of contentType: String?) -> String? {
        guard let contentType else { return nil }
        let head = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let essence = head.trimmingWhitespace().lowercased()
        guard essence.contains("/") else { return nil }
        return essence
    }

    /// True for `application/json` and any `…/…+json` structured-syntax type (e.g. `application/jwk-set+json`).
    package static func isJSON(_ contentType: String?) -> Bool {
        guard let essence = essence(of: contentType) else { return false }
        return essence == "application/json" || essence.hasSuffix("+json")
    }

    /// True for `application/x-www-form-urlencoded`.
    package static func isFormURLEncoded(_ contentType: String?) -> Bool {
        essence(of: contentType) == "application/x-www-form-urlencoded"
    }
}

extension StringProtocol {
    /// Trims spaces and horizontal tabs (HTTP's optional whitespace), nothing else.
    package func trimmingWhitespace() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
