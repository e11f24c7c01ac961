import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { post, startService, type Service } from "./helpers/service.js";

let svc: Service;
before(async () => {
  svc = await startService({ env: { SVC_BODY_TIMEOUT_MS: "2000" } });
});
after(async () => {
  await svc.stop();
});

const good = { model: "svc-latest", state: "My card was charged twice.", questions: { q: { type: "noul", instructions: "Is this about billing?" } } };
const goodBytes = Buffer.from(JSON.stringify(good));

/** The real zstd command-line compressor (Debian package zstd). */
function zstd(data: Buffer, args: string[] = []): Buffer {
  return execFileSync("zstd", ["-c", "-q", ...args], { input: data, maxBuffer: 1 << 30 });
}

/** A zstd frame of RLE blocks that expands to `size` bytes, with no content size declared. */
function zstdRleBomb(size: number): Buffer {
  const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58])]; // magic, no FCS, window 128 KiB
  const block = 128 * 1024;
  for (let left = size; left > 0; left -= block) {
    const n = Math.min(block, left);
    const last = left - n === 0 ? 1 : 0;
    const header = (n << 3) | (1 << 1) | last; // RLE block
    parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff, 0x20]));
  }
  return Buffer.concat(parts);
}

/**
 * POSTs `parts` as separate writes, with a Content-Length (`chunked` false) or chunked; `end` false
 * keeps the body open. Resolves with the answer, which may come before the body is done.
 */
function streamed(svc: Service, parts: Buffer[], headers: Record<string, string>, chunked: boolean, end = true): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const length = parts.reduce((n, p) => n + p.length, 0);
    const req = request(`${svc.url}/v1/systemone`, {
      method: "POST",
      headers: { authorization: `Bearer ${svc.key}`, "content-type": "application/json", ...headers, ...(chunked ? {} : { "content-length": String(length) }) },
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => {
        resolve({ status: res.statusCode!, body });
        req.destroy();
      });
    });
    req.on("error", reject);
    let i = 0;
    const next = (): void => {
      if (i < parts.length) {
        req.write(parts[i++]);
        setTimeout(next, 5);
      } else if (end) req.end();
    };
    next();
  });
}

describe("request bodies", () => {
  test("gzip, x-gzip, zstd, identity and stacked encodings are read", async () => {
    const plain = await post(svc, "/v1/systemone", goodBytes);
    assert.equal(plain.status, 200);
    for (const [enc, body] of [
      ["gzip", gzipSync(goodBytes)],
      ["x-gzip", gzipSync(goodBytes)],
      ["zstd", zstd(goodBytes)],
      ["identity", goodBytes],
      ["gzip, zstd", zstd(gzipSync(goodBytes))],
    ] as [string, Buffer][]) {
      const r = await post(svc, "/v1/systemone", body, { "content-encoding": enc });
      assert.equal(r.status, 200, enc);
      assert.deepEqual(r.body.answers, plain.body.answers, enc);
      assert.equal(r.body.usage.input_tokens, plain.body.usage.input_tokens);
    }
  });

  test("codings in any case and spacing, at most three; JSON content types with +json or a utf-8 charset; a BOM", async () => {
    const plain = await post(svc, "/v1/systemone", goodBytes);
    for (const [enc, body] of [
      ["GZIP", gzipSync(goodBytes)],
      [" gzip , identity ,", gzipSync(goodBytes)],
      ["x-gzip, gzip, zstd", zstd(gzipSync(gzipSync(goodBytes)))],
    ] as [string, Buffer][]) {
      const r = await post(svc, "/v1/systemone", body, { "content-encoding": enc });
      assert.equal(r.status, 200, enc);
      assert.deepEqual(r.body.answers, plain.body.answers, enc);
    }
    const four = await post(svc, "/v1/systemone", goodBytes, { "content-encoding": "gzip, gzip, gzip, gzip" });
    assert.equal(four.status, 415);
    assert.equal(four.body.error.message, "Content-Encoding 'gzip, gzip, gzip, gzip' is not supported; use zstd, gzip, x-gzip or identity.");
    for (const type of ["application/vnd.api+json", 'Application/JSON; charset="UTF-8"', "application/json;charset=utf8", "application/json; version=2; charset=utf-8"]) {
      assert.equal((await post(svc, "/v1/systemone", goodBytes, { "content-type": type })).status, 200, type);
    }
    const bom = await post(svc, "/v1/systemone", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), goodBytes]));
    assert.deepEqual(bom.body.answers, plain.body.answers);
    assert.equal((await post(svc, "/v1/systemone", goodBytes, { "content-type": "" })).status, 200, "an empty Content-Type is taken as JSON");
  });

  test("the limit is exact for plain bodies too, and the shortest compressed bodies sent without Content-Encoding are named", async () => {
    const sized = (n: number) => {
      const pad = n - Buffer.byteLength(JSON.stringify({ ...good, state: "" }));
      return Buffer.from(JSON.stringify({ ...good, state: "y".repeat(pad) }));
    };
    assert.equal((await post(svc, "/v1/systemone", sized(65536))).status, 200);
    // Under the raw cap (64 KiB + 4 KiB), so it is the decoded size that refuses it.
    assert.equal((await post(svc, "/v1/systemone", sized(65537))).status, 413);
    for (const [encoding, magic] of [["gzip", [0x1f, 0x8b]], ["zstd", [0x28, 0xb5, 0x2f, 0xfd]]] as const) {
      const r = await post(svc, "/v1/systemone", Buffer.from(magic));
      assert.equal(r.status, 400, encoding);
      assert.equal(r.body.error.message, `The body is ${encoding}-compressed but has no Content-Encoding header: send 'Content-Encoding: ${encoding}'.`);
    }
    // Half of a magic number is not one: these are read as (bad) text.
    const halfMagic: [number[], string][] = [
      [[0x1f, 0x7b], "The body is not valid JSON: line 1, column 1."],
      [[0x7b, 0x8b], "The body is not valid UTF-8."],
      [[0x1f], "The body is not valid JSON: line 1, column 1."],
    ];
    for (const [bytes, message] of halfMagic) {
      const r = await post(svc, "/v1/systemone", Buffer.from(bytes));
      assert.equal(r.status, 400, JSON.stringify(bytes));
      assert.equal(r.body.error.message, message, JSON.stringify(bytes));
    }
  });

  test("an unsupported encoding is 415", async () => {
    for (const enc of ["br", "deflate", "compress", "gzip, br"]) {
      const r = await post(svc, "/v1/systemone", goodBytes, { "content-encoding": enc });
      assert.equal(r.status, 415, enc);
      assert.equal(r.body.error.type, "unsupported_media_type");
      assert.match(r.body.error.message, /^Content-Encoding '(br|deflate|compress)' is not supported; use zstd, gzip, x-gzip or identity\.$/);
      assert.deepEqual(r.body.detail, []);
    }
  });

  test("a body that cannot be decompressed is 400", async () => {
    const truncated = gzipSync(goodBytes).subarray(0, 20);
    for (const [enc, body] of [
      ["gzip", Buffer.from("definitely not gzip")],
      ["gzip", truncated],
      ["zstd", Buffer.from("definitely not zstd")],
      ["zstd", zstd(goodBytes).subarray(0, 12)],
    ] as [string, Buffer][]) {
      const r = await post(svc, "/v1/systemone", body, { "content-encoding": enc });
      assert.equal(r.status, 400, enc);
      assert.equal(r.body.error.type, "invalid_request_error");
      assert.equal(r.body.error.message, `The body could not be decompressed as ${enc}.`);
    }
  });

  test("over 64 KiB is 413, plain or after decompression, and bombs are refused early", async () => {
    const big = Buffer.from(JSON.stringify({ ...good, state: "x".repeat(70_000) }));
    const expect413 = async (body: Buffer, enc?: string) => {
      const t0 = performance.now();
      const r = await post(svc, "/v1/systemone", body, enc ? { "content-encoding": enc } : {});
      assert.equal(r.status, 413, enc ?? "identity");
      assert.equal(r.body.error.type, "request_too_large");
      assert.equal(r.body.error.message, "The body is larger than 65536 bytes after decompression.");
      return performance.now() - t0;
    };
    await expect413(big);
    await expect413(gzipSync(big), "gzip");
    await expect413(zstd(big), "zstd");
    // 100 MB of zeros: gzip (~100 KB compressed is over the raw cap, so use 10 MB -> ~10 KB), zstd CLI and a hand-made RLE frame.
    const zeros = Buffer.alloc(10 * 1024 * 1024);
    await expect413(gzipSync(zeros, { level: 9 }), "gzip");
    await expect413(gzipSync(gzipSync(Buffer.alloc(100 * 1024 * 1024), { level: 9 }), { level: 9 }), "gzip, gzip");
    const hundredMb = Buffer.alloc(100 * 1024 * 1024);
    const ms = await expect413(zstd(hundredMb, ["-19"]), "zstd");
    assert.ok(ms < 2000, `zstd bomb took ${ms} ms`);
    await expect413(zstdRleBomb(100 * 1024 * 1024), "zstd");
    // exactly at the limit is fine
    const pad = 65536 - Buffer.byteLength(JSON.stringify({ ...good, state: "" }));
    const exact = Buffer.from(JSON.stringify({ ...good, state: "y".repeat(pad) }));
    assert.equal(exact.length, 65536);
    assert.equal((await post(svc, "/v1/systemone", zstd(exact), { "content-encoding": "zstd" })).status, 200);
  });

  test("invalid JSON and invalid UTF-8 are 400", async () => {
    const bad = await post(svc, "/v1/systemone", Buffer.from('{"model": "svc-latest", '));
    assert.equal(bad.status, 400);
    // The text ends where a value should follow: line 1, just past its 24 characters.
    assert.deepEqual(bad.body, { error: { type: "invalid_request_error", message: "The body is not valid JSON: line 1, column 25.", line: 1, column: 25 }, detail: [] });
    const latin1 = Buffer.concat([Buffer.from('{"model":"svc-latest","state":"caf'), Buffer.from([0xe9]), Buffer.from('","questions":{}}')]);
    const u = await post(svc, "/v1/systemone", latin1);
    assert.equal(u.status, 400);
    assert.equal(u.body.error.message, "The body is not valid UTF-8.");
    const empty = await post(svc, "/v1/systemone", Buffer.alloc(0));
    assert.equal(empty.status, 400);
  });

  test("multipart, form and other non-JSON content types are 422", async () => {
    const textOnly = "This service reads text only: images, assets, files, Box questions and multipart bodies are not supported.";
    for (const type of ["multipart/form-data; boundary=x", "image/png"]) {
      const r = await post(svc, "/v1/systemone", goodBytes, { "content-type": type });
      assert.equal(r.status, 422, type);
      assert.deepEqual(r.body, { error: { type: "invalid_request_error", message: textOnly }, detail: [{ loc: ["body"], msg: textOnly, type: "text_only" }] });
    }
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "text/vnd.example+json", "application/xml; charset=utf-8"]) {
      const r = await post(svc, "/v1/systemone", goodBytes, { "content-type": type });
      assert.equal(r.status, 422, type);
      const message = `Content-Type '${type}' is not supported; send application/json in UTF-8.`;
      assert.deepEqual(r.body, { error: { type: "invalid_request_error", message }, detail: [{ loc: ["body"], msg: message, type: "unsupported_content_type" }] });
    }
    const ok = await post(svc, "/v1/systemone", goodBytes, { "content-type": "application/json; charset=utf-8" });
    assert.equal(ok.status, 200);
  });

  test("a body larger than its Content-Length or arriving too slowly gets a clean answer", async () => {
    // Declared huge: refused before reading.
    const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${svc.url}/v1/systemone`, {
        method: "POST",
        headers: { authorization: `Bearer ${svc.key}`, "content-type": "application/json", "content-length": String(10 * 1024 * 1024) },
      });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      });
      req.on("error", reject);
      req.write("{");
    });
    assert.equal(r.status, 413);
    assert.equal(JSON.parse(r.body).error.type, "request_too_large");
  });

  test("the raw cap (64 KiB + 4 KiB) is exact, with or without Content-Length, and a chunked body is refused as it passes it", async () => {
    const cap = 65536 + 4096;
    // A gzip member carrying a comment (FLG.FCOMMENT) as padding: exactly `size` bytes on the wire, a small body once decoded.
    const padded = (size: number): Buffer => {
      const z = gzipSync(goodBytes);
      const comment = Buffer.alloc(size - z.length - 1, 0x61);
      const head = Buffer.from(z.subarray(0, 10));
      head[3] |= 0x10;
      return Buffer.concat([head, comment, Buffer.from([0]), z.subarray(10)]);
    };
    const gz = { "content-encoding": "gzip" };
    const plain = await post(svc, "/v1/systemone", goodBytes);
    for (const chunked of [false, true]) {
      const at = await streamed(svc, [padded(cap)], gz, chunked);
      assert.equal(at.status, 200, `exactly the cap, chunked: ${chunked}`);
      assert.deepEqual(JSON.parse(at.body).answers, plain.body.answers);
      const over = await streamed(svc, [padded(cap + 1)], gz, chunked);
      assert.equal(over.status, 413, `one byte over, chunked: ${chunked}`);
      assert.deepEqual(JSON.parse(over.body), { error: { type: "request_too_large", message: "The body is larger than 65536 bytes after decompression." }, detail: [] });
    }
    // A chunked body that never ends: answered 413 once it passes the cap, not when it ends or times out.
    const t0 = performance.now();
    const endless = await streamed(svc, Array.from({ length: 64 }, () => Buffer.alloc(16 * 1024, 0x20)), {}, true, false);
    assert.equal(endless.status, 413);
    assert.ok(performance.now() - t0 < 1500, `413 after ${(performance.now() - t0).toFixed(0)} ms`);
  });

  test("gzip bombs are stopped at the body limit while decoding: the server's own peak memory stays flat", async () => {
    const pid = svc.proc.pid!;
    const hwm = (): number => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
    // 100 MB of zeros, gzipped twice: about 100 KB after the first layer, 100 MB after the second.
    const bomb = gzipSync(gzipSync(Buffer.alloc(100 * 1024 * 1024), { level: 9 }), { level: 9 });
    await post(svc, "/v1/systemone", bomb, { "content-encoding": "gzip, gzip" });
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    const start = hwm();
    for (let i = 0; i < 3; i++) assert.equal((await post(svc, "/v1/systemone", bomb, { "content-encoding": "gzip, gzip" })).status, 413);
    const growth = hwm() - start;
    assert.ok(growth < 32 * 1024 * 1024, `server VmHWM grew by ${(growth / 1048576).toFixed(1)} MiB`);
  });

  test("a truncated body times out with 408 and the server stays up", async () => {
    const url = new URL(svc.url);
    const t0 = performance.now();
    const answer = await new Promise<string>((resolve) => {
      const sock = connect(Number(url.port), url.hostname, () => {
        sock.write(
          `POST /v1/systemone HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${svc.key}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"model":`,
        );
      });
      let data = "";
      sock.on("data", (d) => (data += d));
      sock.on("close", () => resolve(data));
    });
    const ms = performance.now() - t0;
    assert.match(answer, /^HTTP\/1.1 408 /);
    assert.equal(answer.slice(answer.indexOf("\r\n\r\n") + 4), JSON.stringify({ error: { type: "timeout_error", message: "The body did not arrive within 2 seconds." }, detail: [] }));
    // SVC_BODY_TIMEOUT_MS is 2000: the body's own timer answers, not the server's later request timeout.
    assert.ok(ms >= 1900 && ms < 3500, `408 after ${ms.toFixed(0)} ms`);
    assert.equal((await fetch(`${svc.url}/healthz`)).status, 200);
  });
});
