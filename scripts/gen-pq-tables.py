#!/usr/bin/env python3
# Prints the regrouped twiddle tables pasted into Sources/CFaceSealPQ/mlkem_avx2.c and mldsa_avx2.c:
# the FIPS 203 / FIPS 204 zetas in the lane order the short NTT layers use (see the comments there).
# PQKernelTests checks the kernels against the portable Swift, which validates the tables.
Q=3329
def brv(x,bits):
    return int(bin(x)[2:].zfill(bits)[::-1],2)
# ML-KEM zetas as in MLKEMArithmetic.swift (Montgomery form, centred)
kz=[]
for i in range(128):
    z=pow(17,brv(i,7),Q)*65536%Q
    if z>Q//2: z-=Q
    kz.append(z)
ref=[-1044, -758, -359, -1517, 1493, 1422, 287, 202, -171, 622, 1577, 182, 962, -1202, -1474, 1468]
assert kz[:16]==ref, kz[:16]
def s16(x):
    x&=0xffff
    return x-65536 if x>=32768 else x
QINV=-3327
def lanes_b(length, p):
    # coefficient indices in the 'b' operand for vectors v0=2p, v1=2p+1 (16 int16 lanes each)
    v0=list(range(32*p,32*p+16)); v1=list(range(32*p+16,32*p+32))
    if length==8:
        return v0[8:16]+v1[8:16]
    if length==4:
        return v0[4:8]+v1[4:8]+v0[12:16]+v1[12:16]
    if length==2:
        out=[]
        for d in range(8):
            if d%2==0: out+= v0[2*d+2:2*d+4]  # v0.d(d+1)
            else: out+= v1[2*(d-1)+2:2*(d-1)+4]  # v1.d(d)
        return out
def kem_table(name, length, inverse):
    blocks=128//length
    rows=[]
    for p in range(8):
        idx=[c//(2*length) for c in lanes_b(length,p)]
        zi=[(2*blocks-1-b) if inverse else blocks+b for b in idx]
        rows.append([kz[i] for i in zi])
    s="static const int16_t %s[2][8][16] __attribute__((aligned(32))) = {\n" % name
    for part in (0,1):
        s+="    {\n"
        for r in rows:
            vals=r if part==0 else [s16(z*QINV) for z in r]
            s+="        {"+", ".join(str(v) for v in vals)+"},\n"
        s+="    },\n"
    return s+"};\n"
out=""
for L in (8,4,2):
    out+=kem_table("fs_mlkem_zetas_fwd%d"%L, L, False)
for L in (2,4,8):
    out+=kem_table("fs_mlkem_zetas_inv%d"%L, L, True)
print(out)

# ML-DSA
q=8380417
dz=[0]*256
for i in range(1,256):
    z=pow(1753,brv(i,8),q)
    if z>q//2: z-=q
    dz[i]=z
def dsa_lanes_b(length, p):
    v0=list(range(8*p,8*p+4)); v1=list(range(8*p+4,8*p+8))
    if length==2: return v0[2:4]+v1[2:4]
    if length==1: return [v0[1],v1[1],v0[3],v1[3]]
def dsa_table(name,length,inverse):
    blocks=128//length
    s="static const double %s[32][4] __attribute__((aligned(32))) = {\n" % name
    for p in range(32):
        idx=[c//(2*length) for c in dsa_lanes_b(length,p)]
        zi=[(2*blocks-1-b) if inverse else blocks+b for b in idx]
        vals=[(-dz[i] if inverse else dz[i]) for i in zi]
        s+="    {"+", ".join("%d.0"%v for v in vals)+"},\n"
    return s+"};\n"
out="static const double fs_mldsa_zetas[256] = {\n"
for i in range(0,256,8):
    out+="    "+", ".join("%d.0"%v for v in dz[i:i+8])+",\n"
out+="};\n"
for L in (2,1):
    out+=dsa_table("fs_mldsa_zetas_fwd%d"%L,L,False)
    out+=dsa_table("fs_mldsa_zetas_inv%d"%L,L,True)
print(out)

# Rejection-sampling compaction tables (rej_avx2.c): for each 8-bit accept mask, the accepted lanes first.
out = "static const uint8_t fs_rej_kem_shuffle[256][16] __attribute__((aligned(16))) = {\n"
for m in range(256):
    idx = []
    for j in range(8):
        if m >> j & 1:
            idx += [2 * j, 2 * j + 1]
    idx += [0xFF] * (16 - len(idx))
    out += "    {" + ", ".join(str(v) for v in idx) + "},\n"
out += "};\n"
out += "static const uint8_t fs_rej_dsa_permute[256][8] __attribute__((aligned(8))) = {\n"
for m in range(256):
    idx = [j for j in range(8) if m >> j & 1]
    idx += [0] * (8 - len(idx))
    out += "    {" + ", ".join(str(v) for v in idx) + "},\n"
out += "};\n"
print(out)
