/// A test's set-up could not go on (the message says which step and what it answered).
package struct SetupError: Error, CustomStringConvertible {
    /// The explanation.
    package let description: String

    /// An error explained by `description`.
    package init(_ description: String) { self.description = description }
}
