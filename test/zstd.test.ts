import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decompressZstd, fseTablesForTest, xxh64, ZstdMalformed, ZstdTooLarge } from "../src/http/zstd.js";
import { post, startService, type Service } from "./helpers/service.js";
import {
  backwardStream,
  compressedBlock,
  emptyFrames,
  emptyRawBlocks,
  fseDescription,
  fseStressBlocks,
  frameHeader,
  huffmanRebuildBlocks,
  longMatchBomb,
  MIB,
  oneBitLiterals,
  oneByteBlocks,
  rawBlock,
  rawFrame,
  rleBlock,
  rleBomb,
  rng,
  secondFrameHugeWindow,
  sequenceCount,
  skippableFrame,
  tableRebuildBlocks,
  zeroBitSequences,
  zstdCli,
} from "./helpers/zstd-frames.js";

const LIMIT = 65536;
const SEED = 20261122;
const dir = mkdtempSync(join(tmpdir(), "svc-zstd-"));

/** The CLI reading a file, so that the frame declares its content size (and may be single-segment). */
function zstdFile(data: Uint8Array, args: string[]): Buffer {
  const file = join(dir, "input");
  writeFileSync(file, data);
  return zstdCli(new Uint8Array(0), [...args, file]);
}

/** Window_Size of a frame header (RFC 8878 3.1.1.1.2), or its content size for a single-segment frame. */
function declaredWindow(frame: Buffer): number {
  const fhd = frame[4];
  if (fhd & 0x20) {
    const sizes = [() => frame[5], () => frame.readUInt16LE(5) + 256, () => frame.readUInt32LE(5), () => Number(frame.readBigUInt64LE(5))];
    return sizes[fhd >> 6]();
  }
  const base = 2 ** (10 + (frame[5] >> 3));
  return base + (base / 8) * (frame[5] & 7);
}

function throwsKind(input: Uint8Array, kind: typeof ZstdMalformed | typeof ZstdTooLarge, limit = LIMIT, what = ""): void {
  assert.throws(() => decompressZstd(input, limit), kind, what);
}

/** The decoder's output, or the error it refused the input with; any other error is a bug and is thrown. */
function outcome(input: Uint8Array): Buffer | ZstdMalformed | ZstdTooLarge {
  try {
    return decompressZstd(input, LIMIT);
  } catch (err) {
    if (err instanceof ZstdMalformed || err instanceof ZstdTooLarge) return err;
    throw err;
  }
}

/** Milliseconds of the fastest of `runs` decodes (after one warm-up): the decoder's cost without the machine's noise. */
function fastest(input: Uint8Array, runs = 5): number {
  let best = Infinity;
  for (let i = 0; i <= runs; i++) {
    const t0 = performance.now();
    outcome(input);
    if (i > 0) best = Math.min(best, performance.now() - t0);
  }
  return best;
}

const WORDS = (
  "the customer was charged twice for a subscription and asks for a refund of the extra payment please " +
  "help my order arrived damaged the box was open and one item is missing can you send a replacement " +
  "login fails after password reset error code invoice billing account profile technical shipping"
).split(" ");

/** A body like the service's own requests, grown to about `size` bytes. */
function requestBody(size: number, next: () => number): Buffer {
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(next() * WORDS.length)]).join(" ");
  const questions: Record<string, unknown> = {};
  const body = { model: "svc-latest", state: "", questions };
  for (let q = 0; JSON.stringify(body).length < size / 2 && q < 64; q++) {
    const criteria: Record<string, string> = {};
    for (let o = 0; o < 2 + Math.floor(next() * 6); o++) criteria[`option_${o}`] = words(3 + Math.floor(next() * 8));
    questions[`q${q}`] = { type: "choice", instructions: `${words(6)}?`, criteria };
  }
  // Words are plain ASCII, so each one adds exactly its length (plus a space) to the JSON.
  for (let missing = size - JSON.stringify(body).length; missing > 0; ) {
    const word = `${WORDS[Math.floor(next() * WORDS.length)]} `;
    body.state += word;
    missing -= word.length;
  }
  return Buffer.from(JSON.stringify(body)).subarray(0, size);
}

/** Generic JSON records: numbers, nested arrays, unicode. */
function recordsJson(size: number, next: () => number): Buffer {
  const rows: unknown[] = [];
  let length = 2;
  while (length < size) {
    const row = { id: Math.floor(next() * 1e9), score: next(), tags: ["α", "β", "ñ", "日本"].slice(0, Math.floor(next() * 4)), ok: next() < 0.5, nested: { x: [next(), null] } };
    length += JSON.stringify(row).length + 1;
    rows.push(row);
  }
  return Buffer.from(JSON.stringify(rows)).subarray(0, size);
}

function randomBytes(size: number, next: () => number): Buffer {
  return Buffer.from(Array.from({ length: size }, () => Math.floor(next() * 256)));
}

/** Runs of one byte of random lengths: long RLE blocks and matches with offset 1. */
function runs(size: number, next: () => number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; ) {
    const n = Math.min(size - i, 1 + Math.floor(next() * 5000));
    out.fill(Math.floor(next() * 4) + 0x30, i, i + n);
    i += n;
  }
  return out;
}

const SIZES = [0, 1, 2, 3, 31, 32, 33, 100, 255, 256, 257, 1000, 4095, 4096, 10_000, 32_768, 65_535, 65_536];

function corpus(): { name: string; data: Buffer }[] {
  const next = rng(SEED);
  const out: { name: string; data: Buffer }[] = [];
  for (const size of SIZES) out.push({ name: `request ${size}`, data: requestBody(size, next) });
  for (const size of [500, 7000, 40_000, 65_536]) {
    out.push({ name: `records ${size}`, data: recordsJson(size, next) });
    out.push({ name: `random ${size}`, data: randomBytes(size, next) });
    out.push({ name: `runs ${size}`, data: runs(size, next) });
    out.push({ name: `repeated ${size}`, data: Buffer.from('{"a":"abcabc"},'.repeat(size / 15 + 1)).subarray(0, size) });
    out.push({ name: `zeros ${size}`, data: Buffer.alloc(size) });
  }
  return out;
}

const LEVELS: string[][] = [
  ["-1"],
  ["-3"],
  ["-9"],
  ["-19"],
  ["--ultra", "-22"],
  ["--long"],
  ["--no-check"],
  ["-B2048"],
  ["--target-compressed-block-size=1024"],
  ["--zstd=wlog=10"],
  ["-19", "--zstd=wlog=10"],
];

describe(`zstd decoder against the zstd ${"CLI"} (seed ${SEED})`, () => {
  const cases = corpus();

  test("every level and block option, from files: one frame per file, each declaring its content size", () => {
    const files = cases.map(({ data }, i) => {
      const file = join(dir, `case-${i}`);
      writeFileSync(file, data);
      return file;
    });
    const whole = Buffer.concat(cases.map((c) => c.data));
    for (const args of LEVELS) {
      // The CLI writes one frame per file, back to back: one run covers every case.
      const frames = zstdCli(new Uint8Array(0), [...args, ...files]);
      const out = decompressZstd(frames, whole.length);
      if (!out.equals(whole)) {
        for (const { name, data } of cases) assert.deepEqual(decompressZstd(zstdFile(data, args), LIMIT), data, `${name} ${args.join(" ")}`);
      }
      assert.deepEqual(out, whole, args.join(" "));
    }
  });

  test("from stdin: no content size, and --long or --ultra -22 declare 128 MiB windows, which are refused", () => {
    let refused = 0;
    let decoded = 0;
    cases.forEach(({ name, data }, i) => {
      for (const args of [LEVELS[i % LEVELS.length], LEVELS[(i + 4) % LEVELS.length]]) {
        const piped = zstdCli(data, args);
        if (declaredWindow(piped) > 8 * MIB) {
          assert.throws(() => decompressZstd(piped, LIMIT), /window of 134217728 bytes exceeds 8388608/, `${name} ${args.join(" ")}`);
          refused++;
        } else {
          assert.deepEqual(decompressZstd(piped, LIMIT), data, `${name} ${args.join(" ")}`);
          decoded++;
        }
      }
    });
    assert.ok(refused >= 5 && decoded >= 50, `${refused} refused, ${decoded} decoded`);
  });

  test("concatenated frames of different levels, with skippable frames between them", () => {
    const next = rng(SEED + 1);
    const parts = [requestBody(3000, next), recordsJson(9000, next), randomBytes(2000, next), runs(20_000, next), Buffer.alloc(0)];
    const frames = parts.flatMap((p, i) => [zstdCli(p, [["-1"], ["-19"], ["--no-check"], ["-3"], ["-9"]][i]), skippableFrame(i * 7)]);
    const whole = Buffer.concat(parts);
    assert.deepEqual(decompressZstd(Buffer.concat(frames), LIMIT), whole);
    // The multi-frame format of the CLI itself: zstd -d of a concatenation gives the concatenation.
    const cat = Buffer.concat([zstdCli(parts[0]), zstdCli(parts[1])]);
    assert.deepEqual(decompressZstd(cat, LIMIT), Buffer.concat([parts[0], parts[1]]));
    assert.equal(decompressZstd(Buffer.concat([skippableFrame(0), skippableFrame(100)]), LIMIT).length, 0);
  });

  test("output of exactly the limit decodes; one byte more is ZstdTooLarge", () => {
    const next = rng(SEED + 2);
    const exact = requestBody(LIMIT, next);
    assert.equal(exact.length, LIMIT);
    for (const args of [["-1"], ["-19"]]) {
      assert.deepEqual(decompressZstd(zstdCli(exact, args), LIMIT), exact);
      throwsKind(zstdCli(Buffer.concat([exact, Buffer.from(" ")]), args), ZstdTooLarge);
      throwsKind(zstdFile(Buffer.concat([exact, Buffer.from(" ")]), args), ZstdTooLarge);
    }
    assert.deepEqual(decompressZstd(zstdCli(exact), 100_000), exact);
    throwsKind(zstdCli(exact), ZstdTooLarge, 1000);
    assert.equal(decompressZstd(rawFrame(Buffer.alloc(0), { contentSize: 0 }), 0).length, 0);
  });
});

describe("zstd decoder on hand-built frames", () => {
  test("a second frame declaring a 1 GiB window is ZstdMalformed at once, with no big allocation", () => {
    const body = secondFrameHugeWindow();
    assert.equal(body.length, 193);
    const before = process.memoryUsage().arrayBuffers;
    assert.throws(() => decompressZstd(body, LIMIT), (err: unknown) => err instanceof ZstdMalformed && err.message === "zstd: window of 1073741824 bytes exceeds 8388608");
    assert.ok(process.memoryUsage().arrayBuffers - before < 1 * MIB);
    assert.ok(fastest(body) < 5);
  });

  test("16,000 one-byte raw blocks in an 8 MiB-window frame decode exactly, in under 50 ms", () => {
    const json = Buffer.from('{"model":"svc-latest"}');
    const body = oneByteBlocks(json);
    assert.equal(body.length, 6 + 16_000 * 4);
    const expected = Buffer.concat([json, Buffer.alloc(16_000 - json.length, 0x20)]);
    assert.deepEqual(decompressZstd(body, LIMIT), expected);
    const ms = fastest(body);
    assert.ok(ms < 50, `${ms.toFixed(2)} ms`);
  });

  test("a declared content size over the limit is ZstdTooLarge before any block is read", () => {
    const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff]); // a reserved block type, were it read
    for (const contentSize of [LIMIT + 1, 2 ** 32 - 1, 2n ** 63n]) {
      throwsKind(Buffer.concat([frameHeader({ windowLog: 20, contentSize }), garbage]), ZstdTooLarge, LIMIT, String(contentSize));
    }
    // The limit counts every frame: 40,000 declared after 40,000 written is too much.
    const first = rawFrame(Buffer.alloc(40_000), { windowLog: 17, contentSize: 40_000 });
    throwsKind(Buffer.concat([first, frameHeader({ windowLog: 17, contentSize: 40_000 }), garbage]), ZstdTooLarge);
    throwsKind(Buffer.concat([frameHeader({ windowLog: 17, contentSize: 10 }), garbage]), ZstdMalformed);
  });

  test("a 100 MB RLE bomb is ZstdTooLarge after one block", () => {
    const bomb = rleBomb(100_000_000);
    throwsKind(bomb, ZstdTooLarge);
    assert.ok(fastest(bomb) < 5);
    // An RLE block may not be longer than the window either.
    throwsKind(Buffer.concat([frameHeader({ windowLog: 10 }), rleBlock(0x41, 1025, true)]), ZstdMalformed);
  });

  test("dictionaries, reserved bits, large windows and reserved block types are ZstdMalformed", () => {
    const block = rawBlock(Buffer.from("{}"), true);
    assert.deepEqual(decompressZstd(Buffer.concat([frameHeader({ windowLog: 10, dictId: 0 }), block]), LIMIT), Buffer.from("{}"));
    for (const [what, header] of [
      ["dictionary 1", frameHeader({ windowLog: 10, dictId: 1 })],
      ["dictionary 2^32-1", frameHeader({ windowLog: 10, dictId: 2 ** 32 - 1 })],
      ["reserved bit", frameHeader({ windowLog: 10, reserved: true })],
      ["window 16 MiB", frameHeader({ windowLog: 24 })],
      ["window 2^41", frameHeader({ windowLog: 41 })],
    ] as [string, Buffer][]) {
      throwsKind(Buffer.concat([header, block]), ZstdMalformed, LIMIT, what);
    }
    // A single-segment frame's window is its content size: refused for its window (not only for
    // the size mismatch that follows) when a caller's limit is over 8 MiB.
    assert.throws(() => decompressZstd(Buffer.concat([frameHeader({ contentSize: 9 * MIB }), block]), 16 * MIB), /window of 9437184 bytes exceeds 8388608/);
    // 8 MiB exactly is accepted; 8 MiB + 1/8 (mantissa 1) is not.
    assert.deepEqual(decompressZstd(Buffer.concat([frameHeader({ windowLog: 23 }), block]), LIMIT), Buffer.from("{}"));
    const over = frameHeader({ windowLog: 23 });
    over[5] |= 1;
    throwsKind(Buffer.concat([over, block]), ZstdMalformed);
    throwsKind(Buffer.concat([frameHeader({ windowLog: 10 }), Buffer.from([0x07, 0x00, 0x00])]), ZstdMalformed, LIMIT, "reserved block type");
    throwsKind(Buffer.concat([frameHeader({ windowLog: 10 }), rawBlock(Buffer.alloc(1025), true)]), ZstdMalformed, LIMIT, "block over the window");
    throwsKind(Buffer.alloc(0), ZstdMalformed, LIMIT, "empty");
    throwsKind(Buffer.from("{}"), ZstdMalformed, LIMIT, "plain JSON");
    throwsKind(Buffer.concat([rawFrame(Buffer.from("{}"), { contentSize: 2 }), Buffer.from([0x28, 0xb5])]), ZstdMalformed, LIMIT, "trailing bytes");
    throwsKind(rawFrame(Buffer.from("{}"), { contentSize: 3 }), ZstdMalformed, LIMIT, "content size mismatch");
  });

  test("every truncation of a valid frame is ZstdMalformed", () => {
    const next = rng(SEED + 3);
    for (const args of [["-3"], ["-19"], ["--no-check"]]) {
      const frame = zstdCli(requestBody(5000, next), args);
      for (let n = 0; n < frame.length; n++) throwsKind(frame.subarray(0, n), ZstdMalformed, LIMIT, `${args} ${n} of ${frame.length}`);
    }
  });

  test("a wrong checksum is ZstdMalformed; without a checksum, a changed literal decodes as written", () => {
    const data = Buffer.from('{"state":"hello"}');
    const frame = zstdCli(data, ["-1"]);
    const bad = Buffer.from(frame);
    bad[bad.length - 1] ^= 1;
    assert.throws(() => decompressZstd(bad, LIMIT), /content checksum mismatch/);
    const raw = rawFrame(data, { contentSize: data.length, checksum: true });
    assert.throws(() => decompressZstd(raw, LIMIT), /truncated content checksum/);
    const sum = Buffer.alloc(4);
    sum.writeUInt32LE(Number(xxh64(data) & 0xffffffffn));
    assert.deepEqual(decompressZstd(Buffer.concat([raw, sum]), LIMIT), data);
  });

  test("xxHash64 matches the reference values", () => {
    assert.equal(xxh64(Buffer.alloc(0)), 0xef46db3751d8e999n);
    assert.equal(xxh64(Buffer.from("abc")), 0x44bc2cf5ad770999n);
    // Every length from 0 to 100 against the checksum the CLI writes (the low 32 bits).
    const next = rng(SEED + 4);
    for (let n = 0; n <= 100; n++) {
      const data = randomBytes(n, next);
      const frame = zstdCli(data);
      assert.equal(Number(xxh64(data) & 0xffffffffn), frame.readUInt32LE(frame.length - 4), `length ${n}`);
    }
  });

  test("an offset reaching before the frame's first byte is ZstdMalformed, also across frames", () => {
    // One sequence: no literals, offset code 5 with extra bits 0 (offset 32 - 3 = 29), 3 bytes.
    const sequence = compressedBlock(Buffer.from([0x00, 0x01, 0x54, 0x00, 0x05, 0x00, ...backwardStream([[0, 5]])]), true);
    const after = (n: number) => Buffer.concat([frameHeader({ windowLog: 10 }), rawBlock(Buffer.alloc(n, 0x61)), sequence]);
    assert.deepEqual(decompressZstd(after(29), LIMIT), Buffer.alloc(32, 0x61));
    assert.throws(() => decompressZstd(after(28), LIMIT), /offset points before the frame's output/);
    // The previous frame's 100 bytes are not this frame's window.
    const previous = rawFrame(Buffer.alloc(100, 0x62), { contentSize: 100 });
    assert.throws(() => decompressZstd(Buffer.concat([previous, after(28)]), LIMIT), /offset points before/);
    // A repeat offset of 0 (the first one minus one, when it is 1) is refused too.
    // No literals, offset code 1 with extra bit 1: value 3, which means the first repeat offset minus one.
    const zero = compressedBlock(Buffer.from([0x00, 0x01, 0x54, 0x00, 0x01, 0x00, ...backwardStream([[1, 1]])]), true);
    assert.throws(() => decompressZstd(Buffer.concat([frameHeader({ windowLog: 10 }), rawBlock(Buffer.alloc(8)), zero]), LIMIT), /zero offset/);
  });

  test("sequences that cost no bits decode exactly, and stop at the limit", () => {
    const count = 21_000;
    const expected = Buffer.alloc(8 + 3 * count);
    expected.write("abcdefgh");
    let [rep0, rep1] = [1, 4];
    for (let k = 0, op = 8; k < count; k++, op += 3) {
      [rep0, rep1] = [rep1, rep0]; // no literals: offset code 1 means the second repeat offset
      for (let i = 0; i < 3; i++) expected[op + i] = expected[op + i - rep0];
    }
    assert.deepEqual(decompressZstd(zeroBitSequences(count), LIMIT), expected);
    throwsKind(zeroBitSequences(32_000), ZstdTooLarge);
    // Repeat_Mode in the first compressed block of a frame has no table to repeat.
    const repeat = compressedBlock(Buffer.from([0x00, 0x01, 0xfc, 0x01]), true);
    assert.throws(() => decompressZstd(Buffer.concat([frameHeader({ windowLog: 10 }), repeat]), LIMIT), /repeated before one was set/);
  });

  test("Huffman literals decode the same by code search (few literals) and by table, also without a tree", () => {
    const pattern = (n: number, k: number) => Array.from({ length: n }, (_, i) => (i % k === 0 ? 1 : 0));
    const blocks = [oneBitLiterals(pattern(3, 2)), oneBitLiterals(pattern(100, 3), false), oneBitLiterals(pattern(5, 4), false), oneBitLiterals(pattern(70, 5), true, true)];
    const expected = Buffer.from([...pattern(3, 2), ...pattern(100, 3), ...pattern(5, 4), ...pattern(70, 5)]);
    assert.deepEqual(decompressZstd(Buffer.concat([frameHeader({ windowLog: 10 }), ...blocks]), LIMIT), expected);
    assert.throws(() => decompressZstd(Buffer.concat([frameHeader({ windowLog: 10 }), oneBitLiterals([1], false, true)]), LIMIT), /treeless literals without an earlier Huffman tree/);
  });

  test(`FSE tables computed cell by cell equal tables built whole (seed ${SEED})`, () => {
    const next = rng(SEED + 5);
    let compared = 0;
    for (let trial = 0; trial < 2000; trial++) {
      const log = 5 + Math.floor(next() * 5);
      const counts: number[] = [];
      let left = 1 << log;
      while (left > 0 && counts.length < 53) {
        const x = next();
        const c = x < 0.15 ? -1 : x < 0.3 ? 0 : 1 + Math.floor(next() * Math.min(left, (1 << log) / 4));
        counts.push(c);
        left -= Math.abs(c);
      }
      const first = counts.findIndex((c) => c > 0);
      if (first < 0 || left < 0) continue;
      counts[first] += left;
      const { whole, lazy } = fseTablesForTest(counts, log);
      assert.deepEqual(lazy, whole, `log ${log} counts ${counts.join(",")}`);
      compared++;
    }
    assert.ok(compared > 1500, `${compared} tables compared`);
  });

  test(`random corruption of valid frames only ever gives output, ZstdMalformed or ZstdTooLarge (seed ${SEED})`, () => {
    const next = rng(SEED + 6);
    const sources = [requestBody(20_000, next), recordsJson(8000, next), runs(30_000, next)];
    const frames = sources.flatMap((s) => [zstdCli(s, ["-1"]), zstdCli(s, ["-19", "--no-check"]), zstdCli(s, ["--zstd=wlog=10"])]);
    let malformed = 0;
    let slowest = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const bytes = Buffer.from(frames[trial % frames.length]);
      for (let flips = 1 + Math.floor(next() * 4); flips > 0; flips--) bytes[Math.floor(next() * bytes.length)] ^= 1 << Math.floor(next() * 8);
      const t0 = performance.now();
      if (!Buffer.isBuffer(outcome(bytes))) malformed++;
      const ms = performance.now() - t0;
      // A slow trial is timed again: the decoder's cost repeats, a pause of the machine does not.
      slowest = Math.max(slowest, ms < 20 ? ms : fastest(bytes, 3));
    }
    assert.ok(malformed > 2500, `${malformed} of 3000 refused`);
    assert.ok(slowest < 100, `slowest ${slowest.toFixed(1)} ms`);
  });

  test("the costliest bodies built for the decoder each decode or fail in under 50 ms", (t) => {
    const budget = LIMIT + 4096;
    for (const [name, body] of [
      ["FSE tables rebuilt every block", tableRebuildBlocks(budget)],
      ["FSE cells computed for 4 sequences a block", fseStressBlocks(4, budget)],
      ["FSE tables built for 128 sequences a block", fseStressBlocks(128, budget)],
      ["Huffman tables rebuilt every block", huffmanRebuildBlocks(8, budget)],
      ["empty frames", emptyFrames(budget)],
      ["empty raw blocks", emptyRawBlocks(budget)],
    ] as [string, Buffer][]) {
      assert.ok(body.length <= budget, name);
      const ms = fastest(body);
      t.diagnostic(`${name}: ${body.length} bytes, ${ms.toFixed(2)} ms`);
      assert.ok(ms < 50, `${name}: ${ms.toFixed(2)} ms`);
    }
  });
});

describe("zstd bodies over HTTP", () => {
  let svc: Service;
  before(async () => {
    svc = await startService({ env: { SVC_PER_MINUTE: "0" } });
  });
  after(async () => {
    await svc.stop();
  });

  /** VmRSS and VmHWM of the server process, in bytes. */
  function memory(pid: number): { rss: number; hwm: number } {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
    return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
  }

  test("bombs that declare no size are 413 within milliseconds, and the server's own peak memory stays flat", async (t) => {
    const pid = svc.proc.pid!;
    const text = Buffer.from(`{"model":"svc-latest","state":"${"the cat sat on the mat, ".repeat(4_000_000)}"}`);
    // 100 MB of RLE blocks; 100 MB of JSON text through the zstd CLI from stdin (compressed blocks of
    // 128 KiB); 262 MB of 131 KB matches in one compressed block. No frame declares its content size
    // (flag bits 6-7 and the single-segment bit 5 of the header byte are 0), so only the limit checks
    // while decoding stop them.
    const bombs = { rle: rleBomb(100_000_000), cli: zstdCli(text, ["-3"]), matches: longMatchBomb() };
    for (const bomb of Object.values(bombs)) assert.equal(bomb[4] & 0xe0, 0);
    const zstd = { "content-encoding": "zstd" };
    const tooLarge = { error: { type: "request_too_large", message: "The body is larger than 65536 bytes after decompression." }, detail: [] };
    const timed = async (body: Buffer): Promise<number> => {
      const t0 = performance.now();
      const r = await post(svc, "/v1/systemone", body, zstd);
      const ms = performance.now() - t0;
      assert.equal(r.status, 413);
      assert.deepEqual(r.body, tooLarge);
      return ms;
    };
    for (const bomb of Object.values(bombs)) await timed(bomb);
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    const start = memory(pid);
    const times: Record<string, number> = {};
    for (const [name, bomb] of Object.entries(bombs)) {
      const ms: number[] = [];
      for (let i = 0; i < 5; i++) ms.push(await timed(bomb));
      times[name] = ms.sort((a, b) => a - b)[2];
      await Promise.all(Array.from({ length: 20 }, () => timed(bomb)));
    }
    const growth = memory(pid).hwm - start.rss;
    t.diagnostic(`median time to 413: ${JSON.stringify(times)} ms; server VmHWM growth ${(growth / MIB).toFixed(1)} MiB`);
    // Refused after 64 KiB of output: well under a millisecond of decoding; a decoder that runs on
    // to the end of the bomb spends 100+ ms on each, and one that keeps its output, 100 MB.
    for (const [name, ms] of Object.entries(times)) assert.ok(ms < 40, `${name}: 413 after ${ms.toFixed(1)} ms`);
    assert.ok(growth < 32 * MIB, `server VmHWM grew by ${(growth / MIB).toFixed(1)} MiB`);
  });

  test("the probe's hostile bodies, 20 at a time, leave /healthz fast and memory flat", async (t) => {
    const pid = svc.proc.pid!;
    const request = { model: "svc-latest", state: "My card was charged twice.", questions: { q: { type: "noul", instructions: "Is this about billing?" } } };
    const blocks = oneByteBlocks(Buffer.from(JSON.stringify(request)));
    const window = secondFrameHugeWindow();
    const zstd = { "content-encoding": "zstd" };
    const round = async () => {
      const replies = await Promise.all([
        ...Array.from({ length: 20 }, () => post(svc, "/v1/systemone", window, zstd)),
        ...Array.from({ length: 20 }, () => post(svc, "/v1/systemone", blocks, zstd)),
      ]);
      for (const r of replies.slice(0, 20)) {
        assert.equal(r.status, 400);
        assert.deepEqual(r.body, { error: { type: "invalid_request_error", message: "The body could not be decompressed as zstd." }, detail: [] });
      }
      for (const r of replies.slice(20)) {
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(typeof r.body.answers.q, "object");
      }
    };
    // One unmeasured round first: the server's first requests compile code and fill caches.
    await round();
    // Writing 5 to clear_refs resets VmHWM to the current RSS, so that VmHWM afterwards is this test's peak.
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    const start = memory(pid);
    let peakRss = start.rss;
    let done = false;
    const latencies: number[] = [];
    const poll = (async () => {
      while (!done) {
        const t0 = performance.now();
        const h = await fetch(`${svc.url}/healthz`);
        await h.arrayBuffer();
        latencies.push(performance.now() - t0);
        peakRss = Math.max(peakRss, memory(pid).rss);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    for (let i = 0; i < 5; i++) await round();
    done = true;
    await poll;
    const end = memory(pid);
    const worst = Math.max(...latencies);
    const growth = Math.max(peakRss, end.hwm) - start.rss;
    t.diagnostic(`/healthz max ${worst.toFixed(1)} ms over ${latencies.length} checks; peak RSS growth ${(growth / MIB).toFixed(1)} MiB (VmRSS ${(start.rss / MIB).toFixed(0)} -> ${(end.rss / MIB).toFixed(0)} MiB, VmHWM ${(end.hwm / MIB).toFixed(0)} MiB)`);
    assert.ok(latencies.length >= 5, `${latencies.length} health checks`);
    assert.ok(worst < 200, `slowest /healthz: ${worst.toFixed(1)} ms over ${latencies.length} checks`);
    assert.ok(growth < 100 * MIB, `RSS grew by ${(growth / MIB).toFixed(1)} MiB`);
  });
});
