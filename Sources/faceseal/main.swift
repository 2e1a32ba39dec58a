// The `faceseal` command: serve, demo, device, rp, admin, bench.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let code = await FaceSealCommand.run(arguments)
exit(code)
