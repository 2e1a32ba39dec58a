// The `faceseal` command: serve, demo, device, rp, admin, bench.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let code = await FaceSealCommand.run(arguments)
// `_exit` after flushing, not `exit`: exit's handlers (OpenSSL's OPENSSL_cleanup among them) would free library state
// while other threads (the HTTP client's libcurl thread, dispatch workers) may still be inside OpenSSL, which
// crashed a `faceseal admin` process once. Everything this process owns is closed by now; stdio is flushed here.
fflush(nil)
_exit(code)
