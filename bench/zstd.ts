/**
 * Decode time of zstd request bodies (src/http/zstd.ts) with the body limit of 64 KiB: realistic
 * request bodies next to Node's gunzip of the same bytes (the baseline, measured in the same run,
 * interleaved), and the costliest hostile bodies we could build, each at most 68 KiB (the raw cap).
 *
 *   npm run bench:zstd [-- --reps 200]
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { decompressZstd, ZstdMalformed, ZstdTooLarge } from "../src/http/zstd.js";
import {
  emptyFrames,
  emptyRawBlocks,
  fseStressBlocks,
  frameHeader,
  huffmanRebuildBlocks,
  oneByteBlocks,
  rawBlock,
  rleBomb,
  rng,
  secondFrameHugeWindow,
  skippableFrame,
  tableRebuildBlocks,
  zeroBitSequences,
  zstdCli,
} from "../test/helpers/zstd-frames.js";
import { choiceBody, header, machine, numberFlag, percentile, printTable, round, writeResult } from "./lib.js";

const LIMIT = 64 * 1024;
const RAW_CAP = LIMIT + 4096;

/** Runs one decode; the outcome is the output size or the error's name. */
function decodeOnce(body: Uint8Array): string {
  try {
    return `${decompressZstd(body, LIMIT).length} B`;
  } catch (err) {
    if (err instanceof ZstdMalformed || err instanceof ZstdTooLarge) return err.name;
    throw err;
  }
}

interface Timing {
  min: number;
  p50: number;
  p99: number;
  max: number;
}

function summary(ms: number[]): Timing {
  return { min: round(Math.min(...ms), 3), p50: round(percentile(ms, 50), 3), p99: round(percentile(ms, 99), 3), max: round(Math.max(...ms), 3) };
}

/** Times each function `reps` times, taking turns, after a warm-up of `reps / 10` rounds. */
function timeTogether(fns: (() => unknown)[], reps: number): number[][] {
  const samples = fns.map((): number[] => []);
  const warm = Math.ceil(reps / 10);
  for (let r = 0; r < warm + reps; r++) {
    fns.forEach((fn, i) => {
      const t0 = performance.now();
      fn();
      if (r >= warm) samples[i].push(performance.now() - t0);
    });
  }
  return samples;
}

/** Realistic bodies: /v1/systemone requests with more and more questions and options. */
function realistic(): { name: string; plain: Buffer }[] {
  const shapes: [number, number][] = [[1, 4], [4, 8], [16, 8], [32, 12], [48, 12]];
  return shapes.map(([q, o]) => {
    const plain = Buffer.from(JSON.stringify(choiceBody(`bench-${q}-${o}`, q, o)));
    if (plain.length > LIMIT) throw new Error(`${q} x ${o} is ${plain.length} bytes, over the limit`);
    return { name: `${q} question(s) x ${o} options`, plain };
  });
}

/** The hostile bodies, each at most the raw cap. */
function hostile(): { name: string; body: Buffer }[] {
  const random = rng(1);
  const request = Buffer.from(JSON.stringify(choiceBody("hostile", 1, 4)));
  const bodies: { name: string; body: Buffer }[] = [
    { name: "probe 1: second frame declares a 1 GiB window", body: secondFrameHugeWindow() },
    { name: "probe 2: 16,000 one-byte raw blocks, 8 MiB window", body: oneByteBlocks(request) },
    { name: "100 MB RLE bomb (RLE blocks)", body: rleBomb(100_000_000) },
    { name: "100 MB of zeros, zstd -19", body: zstdCli(Buffer.alloc(100_000_000), ["-19"]) },
    { name: "content size 2^63 declared", body: Buffer.concat([frameHeader({ windowLog: 23, contentSize: 2n ** 63n }), rawBlock(request, true)]) },
    { name: "64 KiB random bytes, zstd -19 (raw blocks)", body: zstdCli(Buffer.from(Array.from({ length: LIMIT }, () => Math.floor(random() * 256))), ["-19"]) },
    { name: "FSE tables described in every block, 1 sequence each", body: tableRebuildBlocks(RAW_CAP) },
  ];
  for (const k of [2, 4, 8, 16, 32, 64, 128]) bodies.push({ name: `FSE tables in every block, ${k} sequences each`, body: fseStressBlocks(k, RAW_CAP) });
  for (const n of [1, 4, 8, 16]) bodies.push({ name: `11-bit Huffman table in every block, ${n} literals each`, body: huffmanRebuildBlocks(n, RAW_CAP) });
  bodies.push(
    { name: "21,000 sequences of no bits (63 KB out)", body: zeroBitSequences(21_000) },
    { name: "32,000 sequences of no bits (over the limit)", body: zeroBitSequences(32_000) },
    { name: "empty frames with checksums", body: emptyFrames(RAW_CAP) },
    { name: "empty skippable frames", body: Buffer.concat(Array.from({ length: Math.floor(RAW_CAP / 8) }, () => skippableFrame(0))) },
    { name: "empty raw blocks", body: emptyRawBlocks(RAW_CAP) },
  );
  for (const { name, body } of bodies) if (body.length > RAW_CAP) throw new Error(`${name}: ${body.length} bytes, over the raw cap`);
  return bodies;
}

function main(): void {
  const m = machine();
  header("bench:zstd: decoding zstd request bodies (limit 64 KiB)", m);
  const reps = numberFlag("reps", 200);

  const realRows = realistic().map(({ name, plain }) => {
    const z3 = zstdCli(plain, ["-3"]);
    const z19 = zstdCli(plain, ["-19"]);
    const gz = gzipSync(plain);
    for (const z of [z3, z19]) if (!decompressZstd(z, LIMIT).equals(plain)) throw new Error(`${name}: wrong output`);
    const [a, b, g] = timeTogether(
      [() => decompressZstd(z3, LIMIT), () => decompressZstd(z19, LIMIT), () => gunzipSync(gz, { maxOutputLength: LIMIT, chunkSize: 16 * 1024 })],
      reps,
    ).map(summary);
    return { name, plain: plain.length, zstd3: z3.length, zstd19: z19.length, gzip: gz.length, zstd3Ms: a, zstd19Ms: b, gunzipMs: g, zstd3OverGunzip: round(a.p50 / g.p50, 2) };
  });
  printTable(
    realRows.map((r) => ({
      body: r.name,
      bytes: r.plain,
      "zstd -3 / -19 / gzip B": `${r.zstd3} / ${r.zstd19} / ${r.gzip}`,
      "zstd -3 min/p50/max ms": `${r.zstd3Ms.min} / ${r.zstd3Ms.p50} / ${r.zstd3Ms.max}`,
      "zstd -19 p50 ms": r.zstd19Ms.p50,
      "gunzip min/p50/max ms": `${r.gunzipMs.min} / ${r.gunzipMs.p50} / ${r.gunzipMs.max}`,
      "zstd-3/gunzip": r.zstd3OverGunzip,
    })),
  );

  const hostileRows = hostile().map(({ name, body }) => {
    const outcome = decodeOnce(body);
    const [t] = timeTogether([() => decodeOnce(body)], reps).map(summary);
    return { name, bytes: body.length, outcome, ...t };
  });
  console.log();
  printTable(hostileRows.map((r) => ({ hostile: r.name, bytes: r.bytes, outcome: r.outcome, "min ms": r.min, "p50 ms": r.p50, "p99 ms": r.p99, "max ms": r.max })));
  const worst = hostileRows.reduce((w, r) => (r.p50 > w.p50 ? r : w));
  console.log(`\nworst hostile p50: ${worst.p50} ms (${worst.name}); worst max: ${Math.max(...hostileRows.map((r) => r.max))} ms`);
  writeResult("zstd", m, { reps, limit: LIMIT, realistic: realRows, hostile: hostileRows, worstP50: { name: worst.name, ms: worst.p50 } });
}

main();
