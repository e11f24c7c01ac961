/**
 * A zstd decoder (RFC 8878) for request bodies, bounded by construction.
 *
 * Everything decodes into one output buffer of `limit` bytes, allocated once per call. That buffer is
 * also the window: a back-reference may only reach bytes its own frame has already written, so there
 * is no separate window, no per-block copy, and nothing is allocated from a size the input declares.
 * The entropy tables are small fixed arrays shared by every call (decoding is synchronous, so no two
 * calls ever use them at once). Each step costs at most a constant times the input or output bytes it
 * consumes or produces, and every length and offset is checked before it is used.
 */

/** The output would exceed the caller's limit. */
export class ZstdTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`zstd: output exceeds ${limit} bytes`);
    this.name = "ZstdTooLarge";
  }
}

/** The input is not a zstd stream this decoder accepts (corrupt, truncated, or uses an unsupported feature). */
export class ZstdMalformed extends Error {
  constructor(reason: string) {
    super(`zstd: ${reason}`);
    this.name = "ZstdMalformed";
  }
}

function bad(reason: string): never {
  throw new ZstdMalformed(reason);
}

/** RFC 8878 asks every decoder to support 8 MiB windows; larger ones are refused before decoding. */
const MAX_WINDOW = 8 * 1024 * 1024;
const MAX_BLOCK = 128 * 1024;
const FRAME_MAGIC = 0xfd2fb528;
const SKIPPABLE_MAGIC = 0x184d2a50;
/** An offset is (1 << code) + extra - 3 and can never exceed an 8 MiB window, so larger codes are corrupt. */
const MAX_OFFSET_CODE = 23;
/** Huffman codes are at most 11 bits long (RFC 8878 4.2.1). */
const MAX_HUFFMAN_BITS = 11;
/** Below this many bytes a plain loop beats the call into subarray/set/copyWithin. */
const SHORT_COPY = 32;

function u32(s: Uint8Array, i: number): number {
  return (s[i] | (s[i + 1] << 8) | (s[i + 2] << 16) | (s[i + 3] << 24)) >>> 0;
}

// ---------------------------------------------------------------------------------------------------
// xxHash64, the frame checksum. JavaScript has no cheap 64-bit integers (BigInt allocates), so a
// 64-bit value is a (high, low) pair of 32-bit halves in the registers below: typed-array slots
// keep every intermediate a plain 32-bit integer, and stores wrap modulo 2^32 by themselves.

/** Lanes v1..v4 at 0..7, the hash at 8, a temporary at 10; each value's high half first. */
const X = new Uint32Array(12);
const H = 8;
const T = 10;
const P1H = 0x9e3779b1, P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d, P2L = 0x27d4eb4f;
const P3H = 0x165667b1, P3L = 0x9e3779f9;
const P4H = 0x85ebca77, P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f, P5L = 0x165667c5;

/** High half of the 64-bit product of two unsigned 32-bit values, from 16-bit pieces (each product exact). */
function mulHigh(a: number, b: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = ((a0 * b0) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  return a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16);
}

function set(k: number, h: number, l: number): void {
  X[k] = h;
  X[k + 1] = l;
}

function mul(k: number, ph: number, pl: number): void {
  const h = X[k];
  const l = X[k + 1];
  X[k + 1] = Math.imul(l, pl);
  X[k] = mulHigh(l, pl) + Math.imul(h, pl) + Math.imul(l, ph);
}

function add(k: number, h: number, l: number): void {
  const low = X[k + 1] + l;
  X[k + 1] = low;
  X[k] = X[k] + h + (low > 0xffffffff ? 1 : 0);
}

/** Rotation left by r, 0 < r < 32 (the only amounts xxHash64 uses). */
function rotl(k: number, r: number): void {
  const h = X[k];
  const l = X[k + 1];
  X[k] = (h << r) | (l >>> (32 - r));
  X[k + 1] = (l << r) | (h >>> (32 - r));
}

function xor(k: number, from: number): void {
  X[k] ^= X[from];
  X[k + 1] ^= X[from + 1];
}

/** acc = rotl(acc + input * P2, 31) * P1 */
function xxRound(k: number, ih: number, il: number): void {
  add(k, mulHigh(il, P2L) + Math.imul(ih, P2L) + Math.imul(il, P2H), Math.imul(il, P2L) >>> 0);
  rotl(k, 31);
  mul(k, P1H, P1L);
}

/** h = (h ^ round(0, lane)) * P1 + P4 */
function xxMerge(lane: number): void {
  set(T, 0, 0);
  xxRound(T, X[lane], X[lane + 1]);
  xor(H, T);
  mul(H, P1H, P1L);
  add(H, P4H, P4L);
}

/** Leaves xxHash64 (seed 0) of s[start, end) in X[H], X[H + 1]. */
function xxh64Into(s: Uint8Array, start: number, end: number): void {
  let i = start;
  if (end - start >= 32) {
    set(0, P1H, P1L);
    add(0, P2H, P2L);
    set(2, P2H, P2L);
    set(4, 0, 0);
    set(6, ~P1H, ~P1L); // -P1: the complement plus one
    add(6, 0, 1);
    for (; i + 32 <= end; i += 32) {
      xxRound(0, u32(s, i + 4), u32(s, i));
      xxRound(2, u32(s, i + 12), u32(s, i + 8));
      xxRound(4, u32(s, i + 20), u32(s, i + 16));
      xxRound(6, u32(s, i + 28), u32(s, i + 24));
    }
    set(H, 0, 0);
    for (const [lane, r] of [[0, 1], [2, 7], [4, 12], [6, 18]]) {
      set(T, X[lane], X[lane + 1]);
      rotl(T, r);
      add(H, X[T], X[T + 1]);
    }
    for (let lane = 0; lane < 8; lane += 2) xxMerge(lane);
  } else {
    set(H, P5H, P5L);
  }
  const len = end - start;
  add(H, Math.floor(len / 0x100000000), len >>> 0);
  for (; i + 8 <= end; i += 8) {
    set(T, 0, 0);
    xxRound(T, u32(s, i + 4), u32(s, i));
    xor(H, T);
    rotl(H, 27);
    mul(H, P1H, P1L);
    add(H, P4H, P4L);
  }
  if (i + 4 <= end) {
    set(T, 0, u32(s, i));
    mul(T, P1H, P1L);
    xor(H, T);
    rotl(H, 23);
    mul(H, P2H, P2L);
    add(H, P3H, P3L);
    i += 4;
  }
  for (; i < end; i++) {
    set(T, 0, s[i]);
    mul(T, P5H, P5L);
    xor(H, T);
    rotl(H, 11);
    mul(H, P1H, P1L);
  }
  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32.
  X[H + 1] ^= X[H] >>> 1;
  mul(H, P2H, P2L);
  set(H, X[H] ^ (X[H] >>> 29), X[H + 1] ^ ((X[H + 1] >>> 29) | (X[H] << 3)));
  mul(H, P3H, P3L);
  X[H + 1] ^= X[H];
}

export function xxh64(s: Uint8Array): bigint {
  xxh64Into(s, 0, s.length);
  return (BigInt(X[H]) << 32n) | BigInt(X[H + 1]);
}

// ---------------------------------------------------------------------------------------------------
// Bit streams. FSE table descriptions are read forwards from their first byte; Huffman streams and
// the sequences bitstream are read backwards from their last byte, whose highest set bit marks the
// end of the padding. Reading past the start yields zero bits, as the RFC prescribes for the last
// state updates; callers then check that exactly every bit was used.

class BackwardBits {
  private src: Uint8Array = new Uint8Array(0);
  private start = 0;
  /** Bits not yet read; negative once the reader went past the start. */
  left = 0;

  init(src: Uint8Array, start: number, end: number): void {
    if (end <= start) bad("empty bitstream");
    const last = src[end - 1];
    if (last === 0) bad("bitstream without end mark");
    this.src = src;
    this.start = start;
    this.left = (end - 1 - start) * 8 + (31 - Math.clz32(last));
  }

  /** The next n (<= 24) bits, most significant first. */
  read(n: number): number {
    if (n === 0) return 0;
    const pos = this.left - n;
    this.left = pos;
    if (pos >= 0) return bitsAt(this.src, this.start, pos, n);
    if (pos + n <= 0) return 0;
    return bitsAt(this.src, this.start, 0, pos + n) << -pos;
  }
}

/** n (<= 24) bits of the little-endian bit string starting at byte `start`, from bit `pos` up. */
function bitsAt(s: Uint8Array, start: number, pos: number, n: number): number {
  const i = start + (pos >>> 3);
  const word = i + 3 < s.length ? u32(s, i) : (s[i] | ((s[i + 1] ?? 0) << 8) | ((s[i + 2] ?? 0) << 16)) >>> 0;
  return (word >>> (pos & 7)) & ((1 << n) - 1);
}

/** 25 or more bits of src[p, end) from bit `bit` on, zeros past end. */
function forwardBits(s: Uint8Array, p: number, end: number, bit: number): number {
  const i = p + (bit >>> 3);
  if (i + 3 < end) return u32(s, i) >>> (bit & 7);
  let word = 0;
  for (let k = 3; k >= 0; k--) word = (word << 8) | (i + k < end ? s[i + k] : 0);
  return (word >>> 0) >>> (bit & 7);
}

// ---------------------------------------------------------------------------------------------------
// FSE tables (RFC 8878 4.1). A decoding table entry packs baseline << 12 | bits << 8 | symbol.

const norm = new Int16Array(256);
const spread = new Uint8Array(512);
const nextState = new Uint16Array(256);

interface Distribution {
  /** First byte after the description. */
  end: number;
  log: number;
  symbols: number;
}

/** Reads a table description into `norm`. */
function readDistribution(s: Uint8Array, p: number, end: number, maxSymbol: number, maxLog: number): Distribution {
  if (p >= end) bad("missing FSE table description");
  const log = (s[p] & 15) + 5;
  if (log > maxLog) bad("FSE accuracy log too large");
  let bit = 4;
  let remaining = (1 << log) + 1;
  let threshold = 1 << log;
  let width = log + 1;
  let symbol = 0;
  let previousZero = false;
  while (remaining > 1 && symbol <= maxSymbol) {
    if (previousZero) {
      let upTo = symbol;
      for (;;) {
        const repeat = forwardBits(s, p, end, bit) & 3;
        bit += 2;
        upTo += repeat;
        if (upTo > maxSymbol) bad("FSE zero run past the last symbol");
        if (repeat !== 3) break;
      }
      while (symbol < upTo) norm[symbol++] = 0;
    }
    const v = forwardBits(s, p, end, bit);
    // Values below `small` fit in width-1 bits; the rest need width bits and are folded back.
    const small = 2 * threshold - 1 - remaining;
    let count: number;
    if ((v & (threshold - 1)) < small) {
      count = v & (threshold - 1);
      bit += width - 1;
    } else {
      count = v & (2 * threshold - 1);
      if (count >= threshold) count -= small;
      bit += width;
    }
    count--;
    remaining -= count < 0 ? -count : count;
    norm[symbol++] = count;
    previousZero = count === 0;
    while (remaining < threshold) {
      width--;
      threshold >>= 1;
    }
    if (p + ((bit + 7) >>> 3) > end) bad("truncated FSE table description");
  }
  if (remaining !== 1) bad("FSE probabilities do not add up");
  return { end: p + ((bit + 7) >>> 3), log, symbols: symbol };
}

/**
 * Per accuracy log: the spread step, its inverse modulo the table size, for every next-state value ns
 * (1 .. 2*size-1) the packed baseline and bit count of a cell that gets it, and a wavelet matrix of
 * the spread walk (cell (j * step) mod size at step j) that counts, for a range of steps, how many
 * land below a given cell in O(log) array reads.
 */
interface LogInfo {
  step: number;
  inverse: number;
  meta: Int32Array;
  /** Per level (top bit first), zeros among the first i walk values at that level, for i in 0..size. */
  zerosBefore: Uint16Array;
  zeros: Uint16Array;
}

const LOGS: LogInfo[] = [];
for (let log = 0; log <= 9; log++) {
  const size = 1 << log;
  const step = (size >>> 1) + (size >>> 3) + 3;
  let inverse = 0;
  while (log >= 5 && (Math.imul(step, inverse) & (size - 1)) !== 1) inverse++;
  const meta = new Int32Array(2 * size);
  for (let ns = 1; ns < 2 * size; ns++) {
    const bits = log - (31 - Math.clz32(ns));
    meta[ns] = (((ns << bits) - size) << 12) | (bits << 8);
  }
  const zerosBefore = new Uint16Array(log * (size + 1));
  const zeros = new Uint16Array(log);
  let values = Array.from({ length: size }, (_, j) => Math.imul(j, step) & (size - 1));
  for (let level = 0; level < log; level++) {
    const bit = log - 1 - level;
    const row = level * (size + 1);
    for (let i = 0; i < size; i++) zerosBefore[row + i + 1] = zerosBefore[row + i] + (((values[i] >>> bit) & 1) ^ 1);
    zeros[level] = zerosBefore[row + size];
    values = [...values.filter((v) => !((v >>> bit) & 1)), ...values.filter((v) => (v >>> bit) & 1)];
  }
  LOGS.push({ step, inverse, meta, zerosBefore, zeros });
}

/** How many walk steps j in [from, to) land on a cell below u. */
function stepsBelow(info: LogInfo, log: number, from: number, to: number, u: number): number {
  const { zerosBefore, zeros } = info;
  const width = (1 << log) + 1;
  let count = 0;
  for (let level = 0; level < log; level++) {
    const row = level * width;
    const zf = zerosBefore[row + from];
    const zt = zerosBefore[row + to];
    if ((u >>> (log - 1 - level)) & 1) {
      count += zt - zf;
      from = zeros[level] + from - zf;
      to = zeros[level] + to - zt;
    } else {
      from = zf;
      to = zt;
    }
  }
  return count;
}

/** Builds the whole decoding table for the distribution in `norm`. */
function buildTable(table: Int32Array, log: number, symbols: number): void {
  const size = 1 << log;
  let high = size - 1;
  for (let s = 0; s < symbols; s++) {
    if (norm[s] === -1) {
      spread[high--] = s;
      nextState[s] = 1;
    } else {
      nextState[s] = norm[s];
    }
  }
  const { step, meta } = LOGS[log];
  const mask = size - 1;
  let pos = 0;
  for (let s = 0; s < symbols; s++) {
    for (let k = norm[s]; k > 0; k--) {
      spread[pos] = s;
      do pos = (pos + step) & mask;
      while (pos > high);
    }
  }
  // Cells of one symbol take its next-state values in increasing cell order.
  for (let u = 0; u < size; u++) {
    const s = spread[u];
    table[u] = meta[nextState[s]++] | s;
  }
}

/**
 * Cells of one table computed one at a time, for blocks with few sequences: building all 512 cells
 * of three tables for a block that decodes one sequence is the costliest thing a small input can ask
 * for. The spread walk visits cell (j * step) mod size at step j and skips the cells at the top that
 * hold the "less than 1" symbols, so a cell's symbol follows from j (the inverse step gives it) and
 * the number of skipped steps before it, and its rank among its symbol's cells is the number of that
 * symbol's walk steps that land below it, which the wavelet matrix counts without walking. Cost:
 * O(symbols) to prepare, O(log size) per cell, each cell computed at most once per table.
 */
class LazyTable {
  readonly cells = new Int32Array(512);
  private readonly stamps = new Uint32Array(512);
  private generation = 0;
  private log = 0;
  private info: LogInfo = LOGS[5];
  private high = 0;
  private positives = 0;
  private skipped = 0;
  private readonly symbol = new Uint8Array(64);
  private readonly count = new Uint16Array(64);
  /** First accepted walk index (k) and walk step (j) of each symbol with a positive count, plus an end marker. */
  private readonly firstK = new Uint16Array(65);
  private readonly firstJ = new Uint16Array(65);
  private readonly skippedJ = new Uint16Array(64);
  private readonly lowSymbol = new Uint8Array(64);

  /** Takes the distribution in `norm`. */
  prepare(log: number, symbols: number): void {
    const size = 1 << log;
    const { inverse } = LOGS[log];
    this.log = log;
    this.info = LOGS[log];
    if (++this.generation > 0xffffffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
    let low = 0;
    let positives = 0;
    let k = 0;
    for (let s = 0; s < symbols; s++) {
      const c = norm[s];
      if (c === -1) {
        this.lowSymbol[low] = s;
        this.skippedJ[low] = Math.imul(size - 1 - low, inverse) & (size - 1);
        low++;
      } else if (c > 0) {
        this.symbol[positives] = s;
        this.count[positives] = c;
        this.firstK[positives++] = k;
        k += c;
      }
    }
    this.high = size - 1 - low;
    this.positives = positives;
    this.skipped = low;
    // Insertion sort: there are at most a few dozen, usually none.
    const sj = this.skippedJ;
    for (let i = 1; i < low; i++) {
      const v = sj[i];
      let at = i;
      for (; at > 0 && sj[at - 1] > v; at--) sj[at] = sj[at - 1];
      sj[at] = v;
    }
    // The k-th accepted cell is reached at walk step k plus the skipped steps before it.
    let passed = 0;
    for (let t = 0; t < positives; t++) {
      let j = this.firstK[t] + passed;
      while (passed < low && this.skippedJ[passed] <= j) j = this.firstK[t] + ++passed;
      this.firstJ[t] = j;
    }
    this.firstK[positives] = k;
    this.firstJ[positives] = size;
  }

  cell(u: number): number {
    if (this.stamps[u] === this.generation) return this.cells[u];
    const log = this.log;
    const size = 1 << log;
    const info = this.info;
    let entry: number;
    if (u > this.high) {
      entry = info.meta[1] | this.lowSymbol[size - 1 - u];
    } else {
      const j = Math.imul(u, info.inverse) & (size - 1);
      const k = this.skipped === 0 ? j : j - countBelow(this.skippedJ, this.skipped, j);
      const t = countBelow(this.firstK, this.positives, k + 1) - 1;
      const rank = stepsBelow(info, log, this.firstJ[t], this.firstJ[t + 1], u);
      entry = info.meta[this.count[t] + rank] | this.symbol[t];
    }
    this.cells[u] = entry;
    this.stamps[u] = this.generation;
    return entry;
  }
}

/** How many of the first n values of the ascending array a are below v. */
function countBelow(a: Uint16Array, n: number, v: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function predefined(counts: number[], log: number): Int32Array {
  norm.set(counts);
  const table = new Int32Array(1 << log);
  buildTable(table, log, counts.length);
  return table;
}

/**
 * A block builds a whole table only when it decodes enough sequences to pay for it (every sequence
 * writes at least 3 bytes, so that cost is bounded by the output); with fewer, cells are computed as
 * the states reach them. A cell computed alone costs about as much as this many built in a table.
 */
const LAZY_CELL_COST = 4;

/** One of the three sequence tables: the current table survives into later blocks for Repeat_Mode. */
class SequenceTable {
  table: Int32Array;
  log: number;
  ready = false;
  lazy = false;
  readonly cells = new LazyTable();
  private readonly own: Int32Array;
  private readonly rle = new Int32Array(1);

  constructor(
    private readonly name: string,
    private readonly maxSymbol: number,
    private readonly maxLog: number,
    private readonly predefined: Int32Array,
    private readonly predefinedLog: number,
  ) {
    this.own = new Int32Array(1 << maxLog);
    this.table = predefined;
    this.log = predefinedLog;
  }

  /** Sets the table for a block of `sequences` from its compression mode; returns the position after its description. */
  select(mode: number, s: Uint8Array, p: number, end: number, sequences: number): number {
    if (mode === 3) {
      if (!this.ready) bad(`${this.name} table repeated before one was set`);
      return p;
    }
    this.lazy = false;
    if (mode === 0) {
      this.table = this.predefined;
      this.log = this.predefinedLog;
    } else if (mode === 1) {
      if (p >= end) bad(`missing ${this.name} RLE symbol`);
      if (s[p] > this.maxSymbol) bad(`${this.name} RLE symbol out of range`);
      this.rle[0] = s[p++];
      this.table = this.rle;
      this.log = 0;
    } else {
      const d = readDistribution(s, p, end, this.maxSymbol, this.maxLog);
      this.log = d.log;
      p = d.end;
      if ((sequences + 1) * LAZY_CELL_COST < 1 << d.log) {
        this.cells.prepare(d.log, d.symbols);
        this.lazy = true;
      } else {
        buildTable(this.own, d.log, d.symbols);
        this.table = this.own;
      }
    }
    this.ready = true;
    return p;
  }

  entry(state: number): number {
    return this.lazy ? this.cells.cell(state) : this.table[state];
  }
}

// RFC 8878 3.1.1.3.2.2: default distributions, and the baselines and extra bits of each code.
const LL_DEFAULT = [4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1];
const ML_DEFAULT = [
  1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  1, 1, -1, -1, -1, -1, -1, -1, -1,
];
const OF_DEFAULT = [1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1];
const LL_BITS = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
const ML_BITS = [
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9,
  10, 11, 12, 13, 14, 15, 16,
];
const LL_BASE = baselines(LL_BITS, 0, 16);
const ML_BASE = baselines(ML_BITS, 3, 32);

/** Codes below `direct` stand for themselves (plus `first`); after that each code starts where the previous one's extra bits end. */
function baselines(bits: number[], first: number, direct: number): Int32Array {
  const base = new Int32Array(bits.length);
  for (let c = 0; c < bits.length; c++) base[c] = c <= direct ? first + c : base[c - 1] + (1 << bits[c - 1]);
  return base;
}

const llTable = new SequenceTable("literal length", 35, 9, predefined(LL_DEFAULT, 6), 6);
const ofTable = new SequenceTable("offset", 31, 8, predefined(OF_DEFAULT, 5), 5);
const mlTable = new SequenceTable("match length", 52, 9, predefined(ML_DEFAULT, 6), 6);

// ---------------------------------------------------------------------------------------------------
// Huffman literals (RFC 8878 4.2). An entry of the decoding table packs symbol << 4 | code length.

const huffTable = new Uint16Array(1 << MAX_HUFFMAN_BITS);
/** Room for 256 weights plus the one decodeWeights may read past the limit before it is refused. */
const weights = new Uint8Array(258);
const weightTable = new Int32Array(64);
const perWeight = new Int32Array(16);
const firstIndex = new Int32Array(MAX_HUFFMAN_BITS + 1);
const firstEntry = new Int32Array(MAX_HUFFMAN_BITS + 1);
/** The current tree's codes in table order: where each starts in the table, and its entry. */
const codeStart = new Uint16Array(257);
const codeEntry = new Uint16Array(256);
let codes = 0;
let huffTableBuilt = false;
const bits = new BackwardBits();
let huffBits = 0;
/** A literal found by binary search costs about as much as filling this many table entries. */
const HUFFMAN_SEARCH_COST = 32;
/** Literals of the current block when they are not read straight from the input. */
const literals = new Uint8Array(MAX_BLOCK);

/** Reads a Huffman tree description at s[p, end) into huffTable; returns the position after it. */
function readHuffmanTree(s: Uint8Array, p: number, end: number): number {
  if (p >= end) bad("missing Huffman tree");
  const head = s[p++];
  let count: number;
  if (head >= 128) {
    count = head - 127;
    const bytes = (count + 1) >>> 1;
    if (p + bytes > end) bad("truncated Huffman weights");
    for (let k = 0; k < count; k++) weights[k] = k & 1 ? s[p + (k >>> 1)] & 15 : s[p + (k >>> 1)] >>> 4;
    p += bytes;
  } else {
    const wend = p + head;
    if (wend > end) bad("truncated Huffman weights");
    const d = readDistribution(s, p, wend, MAX_HUFFMAN_BITS, 6);
    buildTable(weightTable, d.log, d.symbols);
    count = decodeWeights(s, d.end, wend, d.log);
    if (count > 255) bad("too many Huffman weights");
    p = wend;
  }
  let sum = 0;
  for (let k = 0; k < count; k++) {
    const w = weights[k];
    if (w > MAX_HUFFMAN_BITS) bad("Huffman weight too large");
    if (w > 0) sum += 1 << (w - 1);
  }
  if (sum === 0) bad("Huffman tree without symbols");
  const maxBits = 32 - Math.clz32(sum);
  if (maxBits > MAX_HUFFMAN_BITS) bad("Huffman codes too long");
  const rest = (1 << maxBits) - sum;
  if ((rest & (rest - 1)) !== 0) bad("Huffman weights do not complete a tree");
  weights[count++] = 32 - Math.clz32(rest);
  // Codes are handed out from the lowest weight up, in symbol order within a weight: a symbol of
  // weight w owns the next 2^(w-1) entries of the decoding table. List them in that order.
  perWeight.fill(0);
  for (let k = 0; k < count; k++) perWeight[weights[k]]++;
  let index = 0;
  let entry = 0;
  for (let w = 1; w <= maxBits; w++) {
    firstIndex[w] = index;
    firstEntry[w] = entry;
    index += perWeight[w];
    entry += perWeight[w] << (w - 1);
  }
  for (let k = 0; k < count; k++) {
    const w = weights[k];
    if (w === 0) continue;
    const i = firstIndex[w]++;
    codeStart[i] = firstEntry[w];
    firstEntry[w] += 1 << (w - 1);
    codeEntry[i] = (k << 4) | (maxBits + 1 - w);
  }
  codes = index;
  codeStart[codes] = 1 << maxBits;
  huffBits = maxBits;
  huffTableBuilt = false;
  return p;
}

/**
 * Fills the 2^maxBits-entry decoding table. Until a block has enough literals to pay for it, literals
 * are decoded by a binary search of the code list instead: a body of many tiny blocks, each with its
 * own tree of 11-bit codes, would otherwise pay for 2,048 entries per literal.
 */
function buildHuffmanTable(): void {
  for (let i = 0; i < codes; i++) huffTable.fill(codeEntry[i], codeStart[i], codeStart[i + 1]);
  huffTableBuilt = true;
}

function huffmanCode(v: number): number {
  let lo = 0;
  let hi = codes - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (codeStart[mid] <= v) lo = mid;
    else hi = mid - 1;
  }
  return codeEntry[lo];
}

/** Two interleaved FSE states share one table; decoding stops when the stream runs out (RFC 8878 4.2.1.2). */
function decodeWeights(s: Uint8Array, start: number, end: number, log: number): number {
  bits.init(s, start, end);
  const states = [bits.read(log), bits.read(log)];
  for (let n = 0, i = 0; ; i ^= 1) {
    if (n > 253) bad("too many Huffman weights");
    const e = weightTable[states[i]];
    weights[n++] = e & 255;
    states[i] = (e >>> 12) + bits.read((e >>> 8) & 15);
    // Past the end of the stream: the other state's symbol is the last weight.
    if (bits.left < 0) {
      weights[n++] = weightTable[states[i ^ 1]] & 255;
      return n;
    }
  }
}

/** Decodes exactly `count` symbols from the Huffman stream s[start, end) into literals[at...]. */
function decodeHuffmanStream(s: Uint8Array, start: number, end: number, at: number, count: number): void {
  if (end <= start) bad("empty Huffman stream");
  const last = s[end - 1];
  if (last === 0) bad("Huffman stream without end mark");
  let left = (end - 1 - start) * 8 + (31 - Math.clz32(last));
  const width = huffBits;
  const mask = (1 << width) - 1;
  const out = literals;
  const stop = at + count;
  const built = huffTableBuilt;
  // The fast path reads 3 bytes at once, enough for any 11-bit code at any bit position.
  const safe = s.length - 3;
  for (let o = at; o < stop; o++) {
    const pos = left - width;
    let v: number;
    if (pos >= 0) {
      const i = start + (pos >>> 3);
      v = i <= safe ? ((s[i] | (s[i + 1] << 8) | (s[i + 2] << 16)) >>> (pos & 7)) & mask : bitsAt(s, start, pos, width);
    } else {
      v = left > 0 ? bitsAt(s, start, 0, left) << -pos : 0;
    }
    const e = built ? huffTable[v] : huffmanCode(v);
    out[o] = e >>> 4;
    left -= e & 15;
  }
  if (left !== 0) bad("Huffman stream size mismatch");
}

// ---------------------------------------------------------------------------------------------------
// Frames and blocks.

class Decoder {
  private p = 0;
  private op = 0;
  private frameStart = 0;
  private window = 0;
  private blockMax = 0;
  /** The end the current block may write to: its maximum size or the limit, whichever comes first. */
  private cap = 0;
  private rep0 = 1;
  private rep1 = 4;
  private rep2 = 8;
  private hasHuffman = false;

  constructor(
    private readonly src: Uint8Array,
    readonly out: Buffer,
    private readonly limit: number,
  ) {}

  run(): number {
    const s = this.src;
    if (s.length === 0) bad("empty input");
    while (this.p < s.length) {
      if (this.p + 4 > s.length) bad("truncated frame");
      const magic = u32(s, this.p);
      if (magic === FRAME_MAGIC) this.frame();
      else if ((magic & 0xfffffff0) >>> 0 === SKIPPABLE_MAGIC) {
        if (this.p + 8 > s.length) bad("truncated skippable frame");
        const size = u32(s, this.p + 4);
        if (size > s.length - this.p - 8) bad("truncated skippable frame");
        this.p += 8 + size;
      } else bad("not a zstd frame");
    }
    return this.op;
  }

  private frame(): void {
    const s = this.src;
    let p = this.p + 4;
    if (p >= s.length) bad("truncated frame header");
    const fhd = s[p++];
    if (fhd & 8) bad("reserved frame header bit set");
    const single = (fhd & 0x20) !== 0;
    const fcsFlag = fhd >>> 6;
    const dictBytes = [0, 1, 2, 4][fhd & 3];
    const fcsBytes = fcsFlag === 0 ? (single ? 1 : 0) : 1 << fcsFlag;
    if (p + (single ? 0 : 1) + dictBytes + fcsBytes > s.length) bad("truncated frame header");
    let window = 0;
    if (!single) {
      const wd = s[p++];
      const base = 2 ** (10 + (wd >>> 3));
      window = base + (base / 8) * (wd & 7);
      if (window > MAX_WINDOW) bad(`window of ${window} bytes exceeds ${MAX_WINDOW}`);
    }
    let dict = 0;
    for (let k = dictBytes - 1; k >= 0; k--) dict = dict * 256 + s[p + k];
    if (dict !== 0) bad("dictionaries are not supported");
    p += dictBytes;
    let size = -1;
    if (fcsBytes === 1) size = s[p];
    else if (fcsBytes === 2) size = (s[p] | (s[p + 1] << 8)) + 256;
    else if (fcsBytes === 4) size = u32(s, p);
    else if (fcsBytes === 8) size = u32(s, p + 4) * 0x100000000 + u32(s, p);
    p += fcsBytes;
    if (size > this.limit - this.op) throw new ZstdTooLarge(this.limit);
    if (single) {
      window = size;
      if (window > MAX_WINDOW) bad(`window of ${window} bytes exceeds ${MAX_WINDOW}`);
    }
    this.window = window;
    this.blockMax = Math.min(window, MAX_BLOCK);
    this.frameStart = this.op;
    this.rep0 = 1;
    this.rep1 = 4;
    this.rep2 = 8;
    this.hasHuffman = false;
    llTable.ready = ofTable.ready = mlTable.ready = false;

    for (let last = 0; !last; ) {
      if (p + 3 > s.length) bad("truncated block header");
      const header = s[p] | (s[p + 1] << 8) | (s[p + 2] << 16);
      p += 3;
      last = header & 1;
      const type = (header >>> 1) & 3;
      const n = header >>> 3;
      if (n > this.blockMax) bad(`block of ${n} bytes exceeds ${this.blockMax}`);
      if (type === 3) bad("reserved block type");
      if (type !== 1 && n > s.length - p) bad("truncated block");
      if (type === 2) {
        this.cap = Math.min(this.limit, this.op + this.blockMax);
        this.compressedBlock(p, p + n);
        p += n;
        continue;
      }
      this.room(n);
      if (type === 0) {
        this.copyIn(s, p, n);
        p += n;
      } else {
        if (p >= s.length) bad("truncated RLE block");
        this.out.fill(s[p++], this.op, this.op + n);
        this.op += n;
      }
    }
    if (fhd & 4) {
      if (p + 4 > s.length) bad("truncated content checksum");
      xxh64Into(this.out, this.frameStart, this.op);
      if (X[H + 1] !== u32(s, p)) bad("content checksum mismatch");
      p += 4;
    }
    if (size >= 0 && this.op - this.frameStart !== size) bad("frame content size mismatch");
    this.p = p;
  }

  private room(n: number): void {
    if (n > this.limit - this.op) throw new ZstdTooLarge(this.limit);
  }

  /** Like room(), within the current compressed block. */
  private blockRoom(n: number): void {
    if (n > this.cap - this.op) {
      this.room(n);
      bad("block output exceeds the block maximum");
    }
  }

  private copyIn(from: Uint8Array, at: number, n: number): void {
    const out = this.out;
    const op = this.op;
    if (n > SHORT_COPY) out.set(from.subarray(at, at + n), op);
    else for (let k = 0; k < n; k++) out[op + k] = from[at + k];
    this.op = op + n;
  }

  private compressedBlock(start: number, end: number): void {
    const s = this.src;
    if (start >= end) bad("empty compressed block");
    let p = start;
    const b0 = s[p];
    const type = b0 & 3;
    const format = (b0 >>> 2) & 3;
    let size: number;
    let litSrc: Uint8Array = literals;
    let litAt = 0;
    if (type < 2) {
      const headerBytes = format === 1 ? 2 : format === 3 ? 3 : 1;
      if (p + headerBytes > end) bad("truncated literals header");
      size = headerBytes === 1 ? b0 >>> 3 : headerBytes === 2 ? (b0 >>> 4) | (s[p + 1] << 4) : (b0 >>> 4) | (s[p + 1] << 4) | (s[p + 2] << 12);
      p += headerBytes;
      this.literalRoom(size);
      if (type === 0) {
        if (size > end - p) bad("truncated raw literals");
        litSrc = s;
        litAt = p;
        p += size;
      } else {
        if (p >= end) bad("truncated RLE literals");
        literals.fill(s[p++], 0, size);
      }
    } else {
      const headerBytes = format < 2 ? 3 : format === 2 ? 4 : 5;
      if (p + headerBytes > end) bad("truncated literals header");
      const v = u32(s, p);
      let packed: number;
      if (format < 2) {
        size = (v >>> 4) & 0x3ff;
        packed = (v >>> 14) & 0x3ff;
      } else if (format === 2) {
        size = (v >>> 4) & 0x3fff;
        packed = v >>> 18;
      } else {
        size = (v >>> 4) & 0x3ffff;
        packed = (v >>> 22) | (s[p + 4] << 10);
      }
      p += headerBytes;
      if (packed > end - p) bad("truncated Huffman literals");
      this.literalRoom(size);
      let q = p;
      if (type === 2) {
        q = readHuffmanTree(s, p, p + packed);
        this.hasHuffman = true;
      } else if (!this.hasHuffman) bad("treeless literals without an earlier Huffman tree");
      this.huffmanLiterals(q, p + packed, size, format === 0);
      p += packed;
    }
    this.sequences(p, end, litSrc, litAt, size);
  }

  private literalRoom(n: number): void {
    if (n > this.blockMax) bad("literals exceed the block maximum");
    this.room(n);
  }

  private huffmanLiterals(p: number, end: number, size: number, oneStream: boolean): void {
    const s = this.src;
    if (!huffTableBuilt && size * HUFFMAN_SEARCH_COST >= 1 << huffBits) buildHuffmanTable();
    if (oneStream) {
      decodeHuffmanStream(s, p, end, 0, size);
      return;
    }
    if (p + 6 > end) bad("truncated Huffman jump table");
    const n1 = s[p] | (s[p + 1] << 8);
    const n2 = s[p + 2] | (s[p + 3] << 8);
    const n3 = s[p + 4] | (s[p + 5] << 8);
    const a = p + 6;
    const b = a + n1;
    const c = b + n2;
    const d = c + n3;
    if (d > end) bad("Huffman jump table past the literals");
    const segment = (size + 3) >>> 2;
    if (3 * segment > size) bad("too few literals for four streams");
    decodeHuffmanStream(s, a, b, 0, segment);
    decodeHuffmanStream(s, b, c, segment, segment);
    decodeHuffmanStream(s, c, d, 2 * segment, segment);
    decodeHuffmanStream(s, d, end, 3 * segment, size - 3 * segment);
  }

  private sequences(start: number, end: number, litSrc: Uint8Array, litAt: number, litSize: number): void {
    const s = this.src;
    let p = start;
    if (p >= end) bad("missing sequences section");
    const b0 = s[p++];
    let count = b0;
    if (b0 >= 128) {
      if (b0 < 255) {
        if (p >= end) bad("truncated sequences header");
        count = ((b0 - 128) << 8) + s[p++];
      } else {
        if (p + 2 > end) bad("truncated sequences header");
        count = s[p] + (s[p + 1] << 8) + 0x7f00;
        p += 2;
      }
    }
    if (count === 0) {
      if (p !== end) bad("bytes after an empty sequences section");
      this.blockRoom(litSize);
      this.copyIn(litSrc, litAt, litSize);
      return;
    }
    if (p >= end) bad("truncated sequences header");
    const modes = s[p++];
    if (modes & 3) bad("reserved sequence mode bits set");
    p = llTable.select(modes >>> 6, s, p, end, count);
    p = ofTable.select((modes >>> 4) & 3, s, p, end, count);
    p = mlTable.select((modes >>> 2) & 3, s, p, end, count);

    bits.init(s, p, end);
    let llState = bits.read(llTable.log);
    let ofState = bits.read(ofTable.log);
    let mlState = bits.read(mlTable.log);
    const litEnd = litAt + litSize;
    let lit = litAt;
    for (let k = 0; k < count; k++) {
      const le = llTable.entry(llState);
      const me = mlTable.entry(mlState);
      const oe = ofTable.entry(ofState);
      const ofCode = oe & 255;
      if (ofCode > MAX_OFFSET_CODE) bad("offset code too large");
      let offset = (1 << ofCode) + bits.read(ofCode);
      const ml = ML_BASE[me & 255] + bits.read(ML_BITS[me & 255]);
      const ll = LL_BASE[le & 255] + bits.read(LL_BITS[le & 255]);
      if (k + 1 < count) {
        llState = (le >>> 12) + bits.read((le >>> 8) & 15);
        mlState = (me >>> 12) + bits.read((me >>> 8) & 15);
        ofState = (oe >>> 12) + bits.read((oe >>> 8) & 15);
      }
      if (offset > 3) {
        offset -= 3;
        this.rep2 = this.rep1;
        this.rep1 = this.rep0;
        this.rep0 = offset;
      } else {
        offset = this.repeatOffset(ll === 0 ? offset : offset - 1);
      }
      if (ll > litEnd - lit) bad("sequence uses more literals than the block has");
      this.blockRoom(ll + ml);
      this.copyIn(litSrc, lit, ll);
      lit += ll;
      this.match(offset, ml);
    }
    if (bits.left !== 0) bad("sequences bitstream size mismatch");
    this.blockRoom(litEnd - lit);
    this.copyIn(litSrc, lit, litEnd - lit);
  }

  /** Repeat codes 0..3 (already shifted by one when the literal length is 0); updates the history. */
  private repeatOffset(code: number): number {
    if (code === 0) return this.rep0;
    let offset: number;
    if (code === 1) {
      offset = this.rep1;
    } else {
      offset = code === 2 ? this.rep2 : this.rep0 - 1;
      if (offset === 0) bad("zero offset");
      this.rep2 = this.rep1;
    }
    this.rep1 = this.rep0;
    this.rep0 = offset;
    return offset;
  }

  private match(offset: number, n: number): void {
    const out = this.out;
    const op = this.op;
    if (offset > op - this.frameStart || offset > this.window) bad("offset points before the frame's output");
    const from = op - offset;
    // An offset shorter than the length repeats the last `offset` bytes: copy byte by byte.
    if (n > SHORT_COPY && offset >= n) out.copyWithin(op, from, from + n);
    else for (let k = 0; k < n; k++) out[op + k] = out[from + k];
    this.op = op + n;
  }
}

/**
 * Decodes a zstd stream (any number of frames, skippable frames skipped) of at most `limit` bytes.
 * Throws ZstdTooLarge as soon as the output would pass `limit`, ZstdMalformed for anything invalid
 * or unsupported (dictionaries, windows over 8 MiB).
 */
export function decompressZstd(input: Uint8Array, limit: number): Buffer {
  if (!Number.isInteger(limit) || limit < 0) throw new RangeError("limit must be a non-negative integer");
  const decoder = new Decoder(input, Buffer.allocUnsafe(limit), limit);
  const size = decoder.run();
  return decoder.out.subarray(0, size);
}

/** For tests: the decoding table of a distribution (-1 for "less than 1") built whole, and cell by cell. */
export function fseTablesForTest(counts: number[], log: number): { whole: number[]; lazy: number[] } {
  const whole = new Int32Array(1 << log);
  norm.set(counts);
  buildTable(whole, log, counts.length);
  const lazy = new LazyTable();
  lazy.prepare(log, counts.length);
  return { whole: [...whole], lazy: Array.from(whole, (_, u) => lazy.cell(u)) };
}
