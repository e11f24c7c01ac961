import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
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
    for (const type of ["application/vnd.api+json", 'Application/JSON; charset="UTF-8"', "application/json;charset=utf8"]) {
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
    for (const type of ["multipart/form-data; boundary=x", "image/png"]) {
      const r = await post(svc, "/v1/systemone", goodBytes, { "content-type": type });
      assert.equal(r.status, 422, type);
      assert.equal(r.body.error.type, "invalid_request_error");
      assert.equal(r.body.detail[0].type, "text_only");
    }
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1"]) {
      const r = await post(svc, "/v1/systemone", goodBytes, { "content-type": type });
      assert.equal(r.status, 422, type);
      assert.equal(r.body.error.message, `Content-Type '${type}' is not supported; send application/json in UTF-8.`);
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

  test("a truncated body times out with 408 and the server stays up", async () => {
    const url = new URL(svc.url);
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
    assert.match(answer, /^HTTP\/1.1 408 /);
    assert.match(answer, /"type":"timeout_error"/);
    assert.equal((await fetch(`${svc.url}/healthz`)).status, 200);
  });
});
