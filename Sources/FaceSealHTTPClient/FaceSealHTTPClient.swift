// The HTTP client (libcurl). It re-exports the message types its API is made of.
@_exported import FaceSealHTTPTypes
