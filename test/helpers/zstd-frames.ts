/**
 * Hand-built zstd frames (RFC 8878) for tests and benches: the pieces of a frame, and the hostile
 * bodies the decoder must refuse or decode cheaply. Only what the tests need, written byte by byte
 * so that each case says exactly what it sends.
 */
import { spawnSync } from "node:child_process";

export const MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
export const MIB = 1024 * 1024;

/** The real zstd command-line compressor (Debian package zstd); `data` goes in on stdin. */
export function zstdCli(data: Uint8Array, args: string[] = []): Buffer {
  const r = spawnSync("zstd", ["-c", "-q", ...args], { input: data, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`zstd ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout;
}

/** Window_Descriptor byte for a window of 2^log bytes (log 10..41). */
export function windowByte(log: number): number {
  return (log - 10) << 3;
}

export interface FrameHeader {
  /** Window size as a power of two; leave out for a single-segment frame (window = content size). */
  windowLog?: number;
  /** Frame_Content_Size; leave out to declare none (not allowed with single segment). */
  contentSize?: number | bigint;
  checksum?: boolean;
  dictId?: number;
  /** Sets the reserved bit, which a decoder must refuse. */
  reserved?: boolean;
}

/** Magic number and frame header. */
export function frameHeader(h: FrameHeader): Buffer {
  const single = h.windowLog === undefined;
  const size = h.contentSize === undefined ? undefined : BigInt(h.contentSize);
  if (single && size === undefined) throw new Error("a single-segment frame needs a content size");
  // Frame_Content_Size_Flag 0 means one byte in a single-segment frame and none otherwise.
  let fcsFlag = 0;
  let fcs: number[] = [];
  if (size !== undefined) {
    if (size < 256n && single) fcs = [Number(size)];
    else if (size >= 256n && size < 65536n + 256n) [fcsFlag, fcs] = [1, le(size - 256n, 2)];
    else if (size < 1n << 32n) [fcsFlag, fcs] = [2, le(size, 4)];
    else [fcsFlag, fcs] = [3, le(size, 8)];
  }
  const dict = h.dictId === undefined ? [] : le(BigInt(h.dictId), 4);
  const fhd = (fcsFlag << 6) | (single ? 0x20 : 0) | (h.reserved ? 8 : 0) | (h.checksum ? 4 : 0) | (dict.length ? 3 : 0);
  return Buffer.from([...MAGIC, fhd, ...(single ? [] : [windowByte(h.windowLog!)]), ...dict, ...fcs]);
}

function le(v: bigint, bytes: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < bytes; i++) out.push(Number((v >> BigInt(8 * i)) & 0xffn));
  return out;
}

function blockHeader(type: number, size: number, last: boolean): Buffer {
  const v = (size << 3) | (type << 1) | (last ? 1 : 0);
  return Buffer.from([v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff]);
}

export const rawBlock = (data: Uint8Array, last = false): Buffer => Buffer.concat([blockHeader(0, data.length, last), data]);
export const rleBlock = (byte: number, size: number, last = false): Buffer => Buffer.from([...blockHeader(1, size, last), byte]);
export const compressedBlock = (content: Uint8Array, last = false): Buffer => Buffer.concat([blockHeader(2, content.length, last), content]);

export function skippableFrame(size: number): Buffer {
  return Buffer.concat([Buffer.from([0x50, 0x2a, 0x4d, 0x18, ...le(BigInt(size), 4)]), Buffer.alloc(size, 0xab)]);
}

/** A frame of raw blocks of at most `blockSize` bytes each (the last one marked last). */
export function rawFrame(data: Uint8Array, h: FrameHeader, blockSize = 128 * 1024): Buffer {
  const parts = [frameHeader(h)];
  let at = 0;
  do {
    const n = Math.min(blockSize, data.length - at);
    parts.push(rawBlock(data.subarray(at, at + n), at + n === data.length));
    at += n;
  } while (at < data.length);
  return Buffer.concat(parts);
}

/**
 * The first probe body: a valid frame with a small JSON request, then a second frame that declares a
 * 1 GiB window and holds one RLE block; 193 bytes in all. A decoder that trusts the second header
 * allocates the window.
 */
export function secondFrameHugeWindow(): Buffer {
  const json = Buffer.from(JSON.stringify({ model: "svc-latest", state: "x".repeat(100) }));
  const first = rawFrame(json, { contentSize: json.length });
  const second = Buffer.concat([frameHeader({ windowLog: 30 }), rleBlock(0x20, 1 << 17, true)]);
  const pad = skippableFrame(193 - first.length - second.length - 8);
  return Buffer.concat([first, pad, second]);
}

/** `data` (at most 16,000 bytes, space-padded to exactly that) as 16,000 one-byte raw blocks in an 8 MiB-window frame. */
export function oneByteBlocks(data: Uint8Array, blocks = 16_000): Buffer {
  if (data.length > blocks) throw new Error("data longer than the block count");
  const padded = Buffer.alloc(blocks, 0x20);
  padded.set(data);
  return rawFrame(padded, { windowLog: 23, checksum: false }, 1);
}

/** A 100 MB (by default) RLE bomb: RLE blocks of 128 KiB, no content size declared. */
export function rleBomb(total = 100_000_000): Buffer {
  const parts = [frameHeader({ windowLog: 17 })];
  for (let left = total; left > 0; left -= 128 * 1024) parts.push(rleBlock(0x7b, Math.min(left, 128 * 1024), left <= 128 * 1024));
  return Buffer.concat(parts);
}

/**
 * FSE table description (RFC 8878 4.1.1) giving one symbol (0) the whole table of 2^log states: the
 * largest table a description of two bytes can ask for.
 */
export function fseAllOnZero(log: number): number[] {
  // The first count is written in log+1 bits; 2^(log+1)-1 decodes to count 2^log + 1, which is probability 2^log.
  const value = (log - 5) | (((1 << (log + 1)) - 1) << 4);
  return [value & 0xff, (value >> 8) & 0xff];
}

/**
 * Compressed blocks that each rebuild all three sequence tables at the largest accuracy (9, 8, 9 bits)
 * for a single sequence (copy 3 bytes from a repeat offset): the most table-building work per input
 * byte. The frame starts with 8 raw bytes so that the repeat offsets (4, then 1) are in range.
 */
export function tableRebuildBlocks(rawBudget: number): Buffer {
  const block = compressedBlock(
    Buffer.from([
      0x00, // raw literals, size 0
      0x01, // one sequence
      0xa8, // literal lengths, offsets and match lengths: FSE tables described here
      ...fseAllOnZero(9),
      ...fseAllOnZero(8),
      ...fseAllOnZero(9),
      0x00, 0x00, 0x00, 0x04, // the three initial states (9 + 8 + 9 zero bits), then the end mark
    ]),
  );
  const head = Buffer.concat([frameHeader({ windowLog: 23 }), rawBlock(Buffer.from("        "))]);
  return blocksWithin(rawBudget, head, () => block);
}

/**
 * One compressed block of `count` sequences that cost no bits at all (RLE tables, each
 * copying 3 bytes from a repeat offset, alternately 4 and 1), after 8 raw bytes.
 */
export function zeroBitSequences(count: number): Buffer {
  const block = compressedBlock(
    Buffer.from([
      0x00, // raw literals, size 0
      ...sequenceCount(count),
      0x54, // all three tables RLE
      0x00, // literal length code 0: no literals
      0x00, // offset code 0: repeat offset (the second one, 4, since there are no literals)
      0x00, // match length code 0: 3 bytes
      0x01, // the bitstream: just its end mark
    ]),
    true,
  );
  return Buffer.concat([frameHeader({ windowLog: 23 }), rawBlock(Buffer.from("abcdefgh")), block]);
}

/**
 * A bomb in one compressed block: `count` sequences without literals, each a 131,074-byte match
 * (match length code 52 with its 16 extra bits all 1) from a repeat offset, after 8 raw bytes; no
 * content size declared. 2,000 sequences are 262 MB of output from 4 KB: a decoder must stop at its
 * limit within the first sequence.
 */
export function longMatchBomb(count = 2000): Buffer {
  const stream = backwardStream(Array.from({ length: count }, (): [number, number] => [0xffff, 16]));
  const block = compressedBlock(Buffer.from([0x00, ...sequenceCount(count), 0x54, 0x00, 0x00, 52, ...stream]), true);
  return Buffer.concat([frameHeader({ windowLog: 23 }), rawBlock(Buffer.from("abcdefgh")), block]);
}

/**
 * FSE table description (RFC 8878 4.1.1) of `counts` (-1 for "less than 1") at accuracy `log`, the
 * inverse of what a decoder reads: written from the RFC's decoding rules.
 */
export function fseDescription(counts: number[], log: number): number[] {
  const bits: number[] = [];
  const put = (value: number, n: number) => {
    for (let i = 0; i < n; i++) bits.push((value >> i) & 1);
  };
  put(log - 5, 4);
  let remaining = (1 << log) + 1;
  let threshold = 1 << log;
  let width = log + 1;
  let s = 0;
  let previousZero = false;
  while (remaining > 1) {
    if (previousZero) {
      let zeros = 0;
      while (counts[s] === 0) {
        zeros++;
        s++;
      }
      for (; zeros >= 3; zeros -= 3) put(3, 2);
      put(zeros, 2);
    }
    const count = counts[s++];
    const value = count + 1;
    const small = 2 * threshold - 1 - remaining;
    if (value < small) put(value, width - 1);
    else put(value < threshold ? value : value + small, width);
    remaining -= Math.abs(count);
    previousZero = count === 0;
    while (remaining < threshold) {
      width--;
      threshold >>= 1;
    }
  }
  return packBits(bits);
}

function packBits(bits: number[]): number[] {
  const out = new Array<number>((bits.length + 7) >> 3).fill(0);
  bits.forEach((b, i) => (out[i >> 3] |= b << (i & 7)));
  return out;
}

/** A backward bitstream (RFC 8878 4.1): `fields` in the order a decoder reads them, then the end mark. */
export function backwardStream(fields: [value: number, bits: number][]): number[] {
  const bits: number[] = [];
  for (const [value, n] of fields) for (let i = n - 1; i >= 0; i--) bits.push((value >> i) & 1);
  // The first field read sits just under the end mark, at the top; so reverse into little-endian order.
  return packBits([...bits.reverse(), 1]);
}

/** A small deterministic generator (mulberry32), so that every random case can be replayed from its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Compressed blocks of `sequences` sequences each, whose literal-length and match-length tables (two
 * symbols, accuracy 9) and offset table (one symbol, accuracy 8) are described anew in every block,
 * and whose states wander at random: every sequence reaches fresh table cells. With few sequences per
 * block this is the most table work per byte of output a body can ask for. Fills `rawBudget` bytes.
 */
export function fseStressBlocks(sequences: number, rawBudget: number, seed = 1): Buffer {
  const next = rng(seed);
  const half = [256, 256];
  const literals = Buffer.alloc(sequences, 0x61);
  const tables = [...fseDescription(half, 9), ...fseDescription([256], 8), ...fseDescription(half, 9)];
  const head = Buffer.concat([frameHeader({ windowLog: 23 }), rawBlock(Buffer.from("        "))]);
  return blocksWithin(rawBudget, head, () => {
    // States first (literal length 9 bits, offset 8, match length 9), then per sequence one bit
    // each for the literal-length and match-length states (the offset table has one symbol).
    const fields: [number, number][] = [[Math.floor(next() * 512), 9], [0, 8], [Math.floor(next() * 512), 9]];
    for (let k = 1; k < sequences; k++) fields.push([next() < 0.5 ? 1 : 0, 1], [next() < 0.5 ? 1 : 0, 1]);
    return compressedBlock(
      Buffer.from([
        ...literalsHeader(sequences),
        ...literals,
        ...sequenceCount(sequences),
        0xa8, // all three tables described here
        ...tables,
        ...backwardStream(fields),
      ]),
    );
  });
}

/** `head`, then as many blocks from `block()` as fit in `rawBudget` bytes with a final empty block. */
function blocksWithin(rawBudget: number, head: Buffer, block: () => Buffer): Buffer {
  const blocks: Buffer[] = [];
  for (let used = head.length + 3; ; ) {
    const next = block();
    if (used + next.length > rawBudget) break;
    blocks.push(next);
    used += next.length;
  }
  return Buffer.concat([head, ...blocks, rawBlock(Buffer.alloc(0), true)]);
}

/** Raw literals section header for `n` literals. */
function literalsHeader(n: number): number[] {
  if (n < 32) return [n << 3];
  if (n < 4096) return [((n & 15) << 4) | 0b0100, n >> 4];
  return [((n & 15) << 4) | 0b1100, (n >> 4) & 0xff, n >> 12];
}

/** Number_of_Sequences in its shortest form. */
export function sequenceCount(n: number): number[] {
  if (n < 128) return [n];
  if (n < 0x7f00) return [0x80 + (n >> 8), n & 0xff];
  return [0xff, (n - 0x7f00) & 0xff, (n - 0x7f00) >> 8];
}

/**
 * A compressed block of literals only, one-bit Huffman codes: symbol 0 has weight 11, so the implied
 * symbol 1 gets weight 11 too (a 2,048-entry decoding table) and each bit of `bits` is one literal,
 * 0x00 or 0x01. With `tree` false the block reuses the previous block's tree (treeless literals).
 */
export function oneBitLiterals(bits: number[], tree = true, last = false): Buffer {
  const stream = backwardStream(bits.map((b): [number, number] => [b, 1]));
  const description = tree ? [0x80, 0xb0] : [];
  const packed = description.length + stream.length;
  // One stream, 10-bit sizes: size format 0; type 2 with a tree, 3 without.
  const header = (tree ? 2 : 3) | (bits.length << 4) | (packed << 14);
  return compressedBlock(Buffer.from([header & 0xff, (header >> 8) & 0xff, header >> 16, ...description, ...stream, 0x00]), last);
}

/** Blocks of `literals` one-bit literals, each with its own 11-bit Huffman tree, filling `rawBudget` bytes. */
export function huffmanRebuildBlocks(literals: number, rawBudget: number, seed = 1): Buffer {
  const next = rng(seed);
  return blocksWithin(rawBudget, frameHeader({ windowLog: 23 }), () => oneBitLiterals(Array.from({ length: literals }, () => (next() < 0.5 ? 1 : 0))));
}

/** Empty frames, each with its content size (0) and checksum (of nothing), filling `rawBudget` bytes. */
export function emptyFrames(rawBudget: number): Buffer {
  const frame = Buffer.concat([rawFrame(Buffer.alloc(0), { contentSize: 0, checksum: true }), Buffer.from([0x99, 0xe9, 0xd8, 0x51])]);
  return Buffer.concat(Array.from({ length: Math.floor(rawBudget / frame.length) }, () => frame));
}

/** One frame of empty raw blocks, filling `rawBudget` bytes. */
export function emptyRawBlocks(rawBudget: number): Buffer {
  const count = Math.floor(rawBudget / 3) - 3;
  return Buffer.concat([frameHeader({ windowLog: 23 }), ...Array.from({ length: count }, () => rawBlock(Buffer.alloc(0))), rawBlock(Buffer.alloc(0), true)]);
}
