#!/usr/bin/env python3
"""Checks that the package's targets link only what their role needs (docs/ARCHITECTURE.md, "Targets").

Reads `swift package dump-package` on standard input and fails when a library target reaches, through its
dependencies, a C module it must not need: the relying-party library and the SDK link no HTTP server and no
database; the message types link no C library at all; only the authority links SQLite and libpq; the management
client (`faceseal admin`) is the messages and an HTTP client only, and the CLI's admin commands import nothing else.
"""
import json
import os
import re
import sys

forbidden = {
    "FaceSealRelyingParty": {"CMicroHTTPD", "CMicroHTTPDShims", "CSQLite", "CSQLiteShims", "CLibPQ", "CJPEG", "CPNG",
                             "CImageShims", "COpenBLAS", "CFaceSealConv", "CQREncode", "FaceSealHTTP", "FaceSealAuthority", "FaceSealFace"},
    "FaceSealSDK": {"CMicroHTTPD", "CMicroHTTPDShims", "CSQLite", "CSQLiteShims", "CLibPQ", "CQREncode", "FaceSealHTTP",
                    "FaceSealAuthority"},
    "FaceSealHTTPTypes": None,  # no dependency at all
    "FaceSealHTTPClient": {"CMicroHTTPD", "CMicroHTTPDShims", "CSQLite", "CLibPQ"},
    "FaceSealWire": {"CMicroHTTPD", "CSQLite", "CLibPQ", "CCurl", "FaceSealHTTP", "FaceSealHTTPClient"},
    "FaceSealCrypto": {"CMicroHTTPD", "CSQLite", "CLibPQ", "CCurl", "CJPEG", "CPNG"},
    "FaceSealAdmin": {"FaceSealAuthority", "FaceSealHTTP", "FaceSealSDK", "FaceSealFace", "CMicroHTTPD", "CMicroHTTPDShims",
                      "CSQLite", "CSQLiteShims", "CLibPQ", "CQREncode"},
}

package = json.load(sys.stdin)
edges = {}
for target in package["targets"]:
    names = set()
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                names.add(dependency[kind][0])
    edges[target["name"]] = names


def closure(name):
    seen, stack = set(), list(edges.get(name, ()))
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(edges.get(current, ()))
    return seen


failures = []
for target, banned in forbidden.items():
    if target not in edges:
        failures.append(f"{target}: not in the package")
        continue
    reached = closure(target)
    bad = reached if banned is None else reached & banned
    if bad:
        failures.append(f"{target} reaches {', '.join(sorted(bad))}")
    print(f"package graph: {target} -> {', '.join(sorted(reached)) or 'nothing'}")
# The executable links everything (it also serves); its admin commands must reach the authority through FaceSealAdmin.
cli = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "faceseal")
for name in sorted(os.listdir(cli)):
    if name.startswith("Admin") and name.endswith(".swift"):
        with open(os.path.join(cli, name), encoding="utf-8") as source:
            imported = set(re.findall(r"^(?:\w+ )*import (\w+)", source.read(), re.M))
        if imported & {"FaceSealAuthority", "FaceSealHTTP"}:
            failures.append(f"Sources/faceseal/{name} imports {', '.join(sorted(imported & {'FaceSealAuthority', 'FaceSealHTTP'}))}")
        print(f"package graph: Sources/faceseal/{name} imports {', '.join(sorted(imported))}")
for failure in failures:
    print(f"package graph: FAIL {failure}", file=sys.stderr)
sys.exit(1 if failures else 0)
