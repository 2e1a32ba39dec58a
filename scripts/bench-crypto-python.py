"""OpenSSL 4.0 through cryptography 50's Python API, for `make bench-crypto`.

The main benchmark calls OpenSSL's EVP functions directly from Swift (no Python in the timed path).
This script times the same OpenSSL through the Python loop an application would write, and reports the
Python per-call overhead two ways: the floor of a call into the binding that does almost nothing
(`public_bytes_raw`), and, per operation, the Python figure minus the direct EVP figure read from the
Swift benchmark's output (the binding's own work included, e.g. key objects built per call) (the file given as the first argument). With that output it also prints
ratio = FaceSeal / OpenSSL-through-Python. Usage: bench-crypto-python.py [SWIFT_OUTPUT] [BATCHES]
"""

import re
import statistics
import sys
import time

from cryptography.hazmat.primitives.asymmetric import mldsa, mlkem

KEYS = 16
BATCH_SECONDS = 0.04


def median_microseconds(call, inputs, batches):
    """Median over `batches` batches of ~40 ms each of µs per call of `call(x)` over `inputs`, cycled."""
    for x in inputs[:4]:
        call(x)
    results = []
    for _ in range(batches):
        calls = 0
        start = time.perf_counter_ns()
        deadline = start + int(BATCH_SECONDS * 1e9)
        now = start
        while now < deadline or calls < 8:
            for x in inputs:
                call(x)
            calls += len(inputs)
            now = time.perf_counter_ns()
        results.append((now - start) / 1000 / calls)
    return statistics.median(results)


def swift_figures(path):
    """{row: (faceseal µs, direct OpenSSL µs)} from the Swift benchmark's lines."""
    faceseal, openssl = {}, {}
    if path:
        with open(path, encoding="utf-8") as output:
            for line in output:
                if m := re.match(r"^(\S.*?)\s+faceseal=\s*([0-9.]+) µs/op", line):
                    faceseal[m.group(1)] = float(m.group(2))
                elif m := re.match(r"^(\S.*?)\s+vs openssl-4\.0\s+peer=\s*([0-9.]+) µs/op", line):
                    openssl[m.group(1)] = float(m.group(2))
    return {row: (faceseal[row], openssl[row]) for row in faceseal if row in openssl}


def main():
    swift = swift_figures(sys.argv[1] if len(sys.argv) > 1 else None)
    batches = int(sys.argv[2]) if len(sys.argv) > 2 else 9

    kem_seeds = [bytes([i]) * 64 for i in range(KEYS)]
    kem_keys = [mlkem.MLKEM768PrivateKey.from_seed_bytes(s) for s in kem_seeds]
    kem_public = [k.public_key() for k in kem_keys]
    eks = [p.public_bytes_raw() for p in kem_public]
    cts = [(k, p.encapsulate()[1]) for k, p in zip(kem_keys, kem_public)]

    dsa_seeds = [bytes([i]) * 32 for i in range(KEYS)]
    dsa_keys = [mldsa.MLDSA65PrivateKey.from_seed_bytes(s) for s in dsa_seeds]
    dsa_public = [k.public_key() for k in dsa_keys]
    # Messages and contexts of the Swift benchmark's lengths (0…~2 KiB, 0…255 bytes), 64 of them.
    messages = [(bytes([i]) * (i * 97 % 2048), bytes([i]) * (i * 29 % 256)) for i in range(64)]
    signed = [(dsa_public[i % KEYS], dsa_keys[i % KEYS].sign(m, c), m, c) for i, (m, c) in enumerate(messages)]
    signed_bytes = [(p.public_bytes_raw(), s, m, c) for p, s, m, c in signed]
    keyed = [(dsa_keys[i % KEYS], m, c) for i, (m, c) in enumerate(messages)]

    # Row names as in the Swift output. The API signs hedged only (it takes no randomness), so its
    # rejection loop runs a different number of rounds than the deterministic Swift row: no difference there.
    rows = [
        ("ML-KEM-768 keygen", lambda s: mlkem.MLKEM768PrivateKey.from_seed_bytes(s), kem_seeds, True),
        ("ML-KEM-768 encaps", lambda ek: mlkem.MLKEM768PublicKey.from_public_bytes(ek).encapsulate(), eks, True),
        ("ML-KEM-768 encaps kept", lambda p: p.encapsulate(), kem_public, True),
        ("ML-KEM-768 decaps kept", lambda kc: kc[0].decapsulate(kc[1]), cts, True),
        ("ML-DSA-65 keygen", lambda s: mldsa.MLDSA65PrivateKey.from_seed_bytes(s), dsa_seeds, True),
        ("ML-DSA-65 sign kept", lambda kmc: kmc[0].sign(kmc[1], kmc[2]), keyed, False),
        ("ML-DSA-65 verify",
         lambda p: mldsa.MLDSA65PublicKey.from_public_bytes(p[0]).verify(p[1], p[2], p[3]), signed_bytes, True),
        ("ML-DSA-65 verify kept", lambda p: p[0].verify(p[1], p[2], p[3]), signed, True),
    ]

    floor = median_microseconds(lambda p: p.public_bytes_raw(), kem_public, batches)
    print("OpenSSL 4.0 through cryptography 50's Python API (a Python loop, time.perf_counter_ns, median of "
          f"{batches} batches)")
    print(f"python per-call floor (MLKEM768PublicKey.public_bytes_raw, loop included): {floor:.2f} µs/call")
    for name, call, inputs, comparable in rows:
        python = median_microseconds(call, inputs, batches)
        line = f"{name.ljust(22)} vs openssl-4.0-python  peer={python:8.2f} µs/call"
        if name in swift:
            ours, direct = swift[name]
            difference = f"python-direct={python - direct:7.2f} µs" if comparable else "python-direct=n/a (hedged)"
            line += f"  direct={direct:8.2f} µs/op  {difference}  ratio={ours / python:.3f}"
        print(line)


if __name__ == "__main__":
    main()
