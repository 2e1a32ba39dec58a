#!/usr/bin/env python3
"""Shares of a `perf record -g` profile of `faceseal serve` by what each sample was doing (docs/PERFORMANCE.md).

Reads `perf script` output on stdin. Each sample goes to the category of its innermost frame that names one of
the domains (SQL, crypto, HTTP, JSON, request log); a sample with none is `runtime` when a frame is Swift's runtime,
allocation or dispatch, else `other`. Allocation and reference counting inside JSON coding thus count as JSON.
Prints one line per category: share and CPU ms per ceremony when `--ms-per-ceremony` gives the authority's figure.
"""
import argparse
import re
import sys

DOMAINS = [
    ("SQL", re.compile(r"sqlite3|libsqlite|\bPQ|libpq|SQLiteConnection|SQLiteDatabase|PostgresConnection|PostgresDatabase|"
                       r"SQLAuthorityStore|SQLRow|SQLValue|SchemaMigrat")),
    ("crypto", re.compile(r"libcrypto|fs_openssl|P256|Curve25519|Ed25519|RSA|SHA256|SHA2|HMAC|AES|GCM|ECDSA|JWS|JWK|"
                          r"FaceSealCrypto|SecretBytes|LinkSignature|DeviceRequestSignature|AuthorityResponseSignature|"
                          r"FaceTokenCustody|SymmetricKey|ec_|bn_|BN_|EVP_|ossl_|sha256|sha512")),
    ("HTTP", re.compile(r"microhttpd|MHD_|fs_mhd|FaceSealHTTP|HTTPServer|HTTPRequest|HTTPResponse|HTTPHeaders|Router|"
                        r"tcp_|__sys_send|__sys_recv|sock_|inet_|ip_|__x64_sys_(sendto|recvfrom|epoll|accept|write|read)|"
                        r"epoll|skb|netif|loopback|__dev_queue")),
    ("JSON", re.compile(r"JSONEncoder|JSONDecoder|JSONSerialization|__JSON|JSONWriter|JSONScanner|_JSON|JSONValue|"
                        r"WireJSON|WireMessage|JSONBody|Codable|KeyedEncodingContainer|KeyedDecodingContainer")),
    ("request log", re.compile(r"RequestLogging|EventLog|redactingBearers|gmtime_r")),
]
RUNTIME = re.compile(r"swift_|libswiftCore|libdispatch|dispatch_|malloc|free|_int_|libc\.so|pthread|Foundation|"
                     r"swift::|futex|__schedule|do_syscall")


def samples(lines):
    frames, in_sample = [], False
    for line in lines:
        if not line.strip():
            if in_sample:
                yield frames
            frames, in_sample = [], False
        elif line[0] in " \t":
            frames.append(line.strip())
        else:
            in_sample = True
    if in_sample:
        yield frames


def category(frames):
    for frame in frames:
        for name, pattern in DOMAINS:
            if pattern.search(frame):
                return name
    return "runtime" if any(RUNTIME.search(frame) for frame in frames) else "other"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ms-per-ceremony", type=float, help="the authority's cpu_ms_per_ceremony of the same run")
    arguments = parser.parse_args()
    counts = {}
    for frames in samples(sys.stdin):
        name = category(frames)
        counts[name] = counts.get(name, 0) + 1
    total = sum(counts.values())
    if total == 0:
        sys.exit("no samples")
    print(f"samples={total}")
    for name, count in sorted(counts.items(), key=lambda item: -item[1]):
        share = count / total
        line = f"share category={name.replace(' ', '_')} percent={100 * share:.1f}"
        if arguments.ms_per_ceremony:
            line += f" cpu_ms_per_ceremony={share * arguments.ms_per_ceremony:.2f}"
        print(line)


if __name__ == "__main__":
    main()
