// The server side of FaceSeal's HTTP: the libmicrohttpd server and the router. It re-exports the message types and
// the client, which the authority uses too (ping and delivery callbacks), so `import FaceSealHTTP` gives the whole
// HTTP layer; the SDK and the relying-party library import `FaceSealHTTPClient` and link no server.
@_exported import FaceSealHTTPClient
@_exported import FaceSealHTTPTypes

/// The `FaceSealHTTP` module. See docs/ARCHITECTURE.md for what it owns.
public enum FaceSealHTTPModule {}
