import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join, relative } from "node:path";
import { cli, get, post, ROOT, startService, tempDir } from "./helpers/service.js";

/*
 * A local stand-in for the Hugging Face Hub serving test/fixtures/tiny-nli as "test-org/tiny-nli":
 *   GET /api/models/<id>/revision/<rev>  -> {sha, siblings}
 *   GET /<id>/resolve/<rev>/<file>       -> small files: 200 with a git-style (sha1) ETag;
 *                                           LFS files (*.onnx): 302 to a CDN on another origin, with
 *                                           X-Linked-Etag (sha256) and X-Linked-Size, as the hub does
 *   GET /lfs/<sha256> (CDN)              -> the bytes, with Range support
 * Switches make it drop a connection mid-file once, serve corrupted bytes, or have no API.
 */
const FIXTURE = join(ROOT, "test", "fixtures", "tiny-nli");
const HUB_ID = "test-org/tiny-nli";
const NAME = "test-org--tiny-nli";
const SHA = "0123456789abcdef0123456789abcdef01234567";
const MODEL_FILE = "onnx/model_quantized.onnx";

interface Served {
  body: Buffer;
  sha256: string;
  lfs: boolean;
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

const files = new Map<string, Served>();
for (const path of walk(FIXTURE)) {
  const body = readFileSync(path);
  const rel = relative(FIXTURE, path).split("\\").join("/");
  files.set(rel, { body, sha256: createHash("sha256").update(body).digest("hex"), lfs: rel.endsWith(".onnx") });
}

const state = {
  apiDown: false,
  dropOnce: null as string | null,
  corrupt: null as string | null,
  /** Files the repository pretends not to have. */
  hide: new Set<string>(),
  log: [] as { server: "hub" | "cdn"; url: string; range: string | null; auth: string | null }[],
};

/** Sends a body or the part a Range header asks for. */
function sendBytes(req: IncomingMessage, res: ServerResponse, body: Buffer, headers: Record<string, string>, path: string): void {
  const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
  const start = m ? Number(m[1]) : 0;
  if (start > body.length) {
    res.writeHead(416, { "content-range": `bytes */${body.length}`, ...headers }).end();
    return;
  }
  let bytes = body.subarray(start);
  if (state.corrupt === path) {
    bytes = Buffer.from(bytes);
    bytes[bytes.length >> 1] ^= 0xff;
  }
  const h: Record<string, string> = { "content-type": "application/octet-stream", "accept-ranges": "bytes", "content-length": String(bytes.length), ...headers };
  if (m) h["content-range"] = `bytes ${start}-${body.length - 1}/${body.length}`;
  res.writeHead(m ? 206 : 200, h);
  if (state.dropOnce === path) {
    state.dropOnce = null;
    // Half the bytes, then the connection dies without finishing the body.
    res.write(bytes.subarray(0, bytes.length >> 1), () => setTimeout(() => res.socket?.destroy(), 50));
    return;
  }
  res.end(bytes);
}

let hub: Server;
let cdn: Server;
let hubUrl = "";
let cdnUrl = "";

function listen(server: Server): Promise<string> {
  return new Promise((done) => server.listen(0, "127.0.0.1", () => done(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

before(async () => {
  hub = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    state.log.push({ server: "hub", url: url.pathname, range: req.headers.range ?? null, auth: req.headers.authorization ?? null });
    const api = /^\/api\/models\/(.+)\/revision\/([^/]+)$/.exec(url.pathname);
    if (api) {
      if (state.apiDown) return void res.writeHead(500).end("down");
      if (api[1] !== HUB_ID || !["main", SHA].includes(decodeURIComponent(api[2]))) return void res.writeHead(404).end("{}");
      res.writeHead(200, { "content-type": "application/json" });
      const siblings = [...files.keys()].filter((f) => !state.hide.has(f)).map((rfilename) => ({ rfilename }));
      return void res.end(JSON.stringify({ id: HUB_ID, sha: SHA, siblings }));
    }
    const resolve = /^\/test-org\/tiny-nli\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    const file = resolve && !state.hide.has(resolve[2]) ? files.get(resolve[2]) : undefined;
    if (!resolve || !file || !["main", SHA].includes(decodeURIComponent(resolve[1]))) return void res.writeHead(404).end("not found");
    const common = { "x-repo-commit": SHA };
    if (file.lfs) {
      res.writeHead(302, { location: `${cdnUrl}/lfs/${file.sha256}`, "x-linked-etag": `"${file.sha256}"`, "x-linked-size": String(file.body.length), ...common });
      return void res.end();
    }
    const sha1 = createHash("sha1").update(file.body).digest("hex");
    sendBytes(req, res, file.body, { etag: `"${sha1}"`, ...common }, resolve[2]);
  });
  cdn = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    state.log.push({ server: "cdn", url: url.pathname, range: req.headers.range ?? null, auth: req.headers.authorization ?? null });
    const entry = [...files.entries()].find(([, f]) => `/lfs/${f.sha256}` === url.pathname);
    if (!entry) return void res.writeHead(404).end();
    sendBytes(req, res, entry[1].body, { etag: `"cdn-${entry[1].sha256.slice(0, 8)}"` }, entry[0]);
  });
  hubUrl = await listen(hub);
  cdnUrl = await listen(cdn);
});

after(() => {
  hub.close();
  cdn.close();
});

function env(dataDir: string): Record<string, string> {
  return { SVC_DATA_DIR: dataDir, HF_ENDPOINT: hubUrl, HF_TOKEN: "hf_test_token", SVC_MODEL: "" };
}

function sha256Of(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function reset(): void {
  state.apiDown = false;
  state.dropOnce = null;
  state.corrupt = null;
  state.hide = new Set();
  state.log = [];
}

/** A new data folder with the hub's model pulled into it: each test below starts from its own. */
async function pulled(): Promise<string> {
  reset();
  const dataDir = tempDir();
  const r = await cli(["models", "pull", HUB_ID], env(dataDir));
  assert.equal(r.code, 0, r.stderr);
  return dataDir;
}

describe("svc models pull / list / use against a local hub", () => {
  test("pull downloads the files pinned to the commit sha, verifies them and writes a manifest", async () => {
    const dataDir = tempDir();
    const installed = join(dataDir, "models", NAME);
    reset();
    const r = await cli(["models", "pull", HUB_ID, "--revision", "main"], env(dataDir));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /installed test-org--tiny-nli \(test-org\/tiny-nli@0123456789ab, 5 files/);
    assert.match(r.stderr, /onnx\/model_quantized\.onnx .*sha256 verified/);
    const manifest = JSON.parse(readFileSync(join(installed, "manifest.json"), "utf8"));
    assert.equal(manifest.hub_id, HUB_ID);
    assert.equal(manifest.revision, SHA);
    assert.equal(manifest.requested_revision, "main");
    assert.ok(!Number.isNaN(Date.parse(manifest.pulled_at)));
    const paths = manifest.files.map((f: { path: string }) => f.path).sort();
    // The quantized file is preferred; the float32 one is not fetched.
    assert.deepEqual(paths, ["config.json", MODEL_FILE, "special_tokens_map.json", "svc-model.json", "tokenizer.json", "tokenizer_config.json"].filter((p) => files.has(p)).sort());
    for (const f of manifest.files) {
      assert.equal(f.sha256, files.get(f.path)!.sha256, f.path);
      assert.equal(f.size, files.get(f.path)!.body.length, f.path);
      assert.equal(sha256Of(join(installed, f.path)), f.sha256, `${f.path} on disk`);
    }
    assert.ok(!existsSync(join(installed, "onnx", "model.onnx")));
    // Every file came from the pinned commit; the token went to the hub only, never to the CDN.
    const resolves = state.log.filter((l) => l.url.includes("/resolve/"));
    assert.ok(resolves.length >= 5 && resolves.every((l) => l.url.includes(`/resolve/${SHA}/`)));
    assert.ok(state.log.filter((l) => l.server === "hub").every((l) => l.auth === "Bearer hf_test_token"));
    assert.ok(state.log.some((l) => l.server === "cdn") && state.log.filter((l) => l.server === "cdn").every((l) => l.auth === null));
  });

  test("pulling the same revision again downloads nothing", async () => {
    const dataDir = await pulled();
    reset();
    const r = await cli(["models", "pull", HUB_ID], env(dataDir));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /test-org--tiny-nli is already installed at test-org\/tiny-nli@0123456789ab/);
    assert.equal(state.log.filter((l) => l.url.includes("/resolve/")).length, 0);
  });

  test("list shows the installed model with its size; the built-in model is active by default", async () => {
    const dataDir = await pulled();
    const r = await cli(["models", "list", "--json"], env(dataDir));
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.active_from, "default");
    const [builtin, tiny] = out.models;
    assert.equal(builtin.name, "builtin");
    assert.equal(builtin.active, true);
    assert.deepEqual(builtin.serves, ["svc-latest", "svc-preview", "svc-1.6.0"]);
    assert.equal(tiny.name, NAME);
    assert.equal(tiny.hub_id, HUB_ID);
    assert.equal(tiny.revision, SHA);
    assert.equal(tiny.active, false);
    assert.ok(tiny.size > 100_000);
    const text = await cli(["models", "list"], env(dataDir));
    assert.match(text.stdout, /^\* builtin/m);
    assert.match(text.stdout, /^ {2}test-org--tiny-nli +0123456789ab +1\d\d\.\d kB/m);
  });

  test("use rejects a folder that is not a model, and changes nothing", async () => {
    const dataDir = await pulled();
    const r = await cli(["models", "use", "no-such-model"], env(dataDir));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /model folder .*no-such-model does not exist/);
    assert.ok(!existsSync(join(dataDir, "models", "active.json")));
  });

  test("use makes the pulled model the one svc serve answers with", async () => {
    const dataDir = await pulled();
    const r = await cli(["models", "use", NAME], env(dataDir));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /svc serve now uses test-org--tiny-nli \(backend onnx:test-org--tiny-nli\); it answers as svc-latest, svc-preview, svc-1\.6\.0/);
    const listed = JSON.parse((await cli(["models", "list", "--json"], env(dataDir))).stdout);
    assert.equal(listed.active_from, "active.json");
    assert.deepEqual(listed.models.filter((m: { active: boolean }) => m.active).map((m: { name: string }) => m.name), [NAME]);

    const svc = await startService({ dataDir, env: { SVC_MODEL: "" } });
    try {
      assert.match(svc.output(), /model onnx:test-org--tiny-nli ready in \d+ ms/);
      const models = await get(svc, "/v1/models");
      assert.equal(models.status, 200);
      assert.ok(models.body.models.every((m: { backend: string }) => m.backend === "onnx:test-org--tiny-nli"));
      assert.deepEqual(models.body.models[0].languages, ["en"]);
      const res = await post(svc, "/v1/systemone", {
        model: "svc-latest",
        state: "The cat sat",
        questions: { q: { type: "noul", instructions: "Is the cat here?" } },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.model, "svc-1.6.0");
      // [CLS] the cat sat [SEP] is the cat here ? [SEP]; P(true) = sigmoid(12 * 2/sqrt(15) - 4)
      assert.equal(res.body.usage.input_tokens, 11);
      assert.ok(Math.abs(res.body.answers.q.noul - 0.8999593825632822) < 1e-5, String(res.body.answers.q.noul));
    } finally {
      await svc.stop();
    }
  });

  test("use builtin returns to the built-in model", async () => {
    const dataDir = await pulled();
    assert.equal((await cli(["models", "use", NAME], env(dataDir))).code, 0);
    assert.ok(existsSync(join(dataDir, "models", "active.json")));
    const r = await cli(["models", "use", "builtin"], env(dataDir));
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync(join(dataDir, "models", "active.json")));
    assert.equal(JSON.parse((await cli(["models", "list", "--json"], env(dataDir))).stdout).models[0].active, true);
  });
});

describe("svc models pull when the network or the data misbehaves", () => {
  test("an interrupted download is resumed with a Range request on the next pull", async () => {
    reset();
    const dataDir = tempDir();
    state.dropOnce = MODEL_FILE;
    const first = await cli(["models", "pull", HUB_ID], env(dataDir));
    assert.equal(first.code, 1);
    assert.match(first.stderr, /download of onnx\/model_quantized\.onnx was interrupted at .*run the same pull again to resume/);
    assert.ok(!existsSync(join(dataDir, "models", NAME)), "nothing installed yet");
    const part = join(dataDir, "models", ".pull", `${NAME}@${SHA}`, `${MODEL_FILE}.part`);
    const kept = statSync(part).size;
    const full = files.get(MODEL_FILE)!.body.length;
    assert.ok(kept > 0 && kept < full, `kept ${kept} of ${full} bytes`);

    state.log = [];
    const second = await cli(["models", "pull", HUB_ID], env(dataDir));
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /onnx\/model_quantized\.onnx: resuming at/);
    const ranged = state.log.filter((l) => l.server === "cdn" && l.range !== null);
    assert.deepEqual(ranged.map((l) => l.range), [`bytes=${kept}-`]);
    // Files finished before the drop are not fetched again.
    assert.equal(state.log.filter((l) => l.url.endsWith("/config.json")).length, 0);
    assert.equal(sha256Of(join(dataDir, "models", NAME, MODEL_FILE)), files.get(MODEL_FILE)!.sha256);
    assert.ok(!existsSync(join(dataDir, "models", ".pull")), "the download area is cleaned up");
  });

  test("a file whose bytes do not match the advertised sha256 is deleted and nothing is installed", async () => {
    reset();
    const dataDir = tempDir();
    state.corrupt = MODEL_FILE;
    const r = await cli(["models", "pull", HUB_ID], env(dataDir));
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(`svc: onnx/model_quantized\\.onnx: sha256 mismatch \\(expected ${files.get(MODEL_FILE)!.sha256}, got [0-9a-f]{64}\\); the file was deleted and nothing was installed`),
    );
    assert.ok(!existsSync(join(dataDir, "models", NAME)));
    const staging = join(dataDir, "models", ".pull", `${NAME}@${SHA}`, "onnx");
    assert.deepEqual(existsSync(staging) ? readdirSync(staging) : [], []);
    const listed = JSON.parse((await cli(["models", "list", "--json"], env(dataDir))).stdout);
    assert.deepEqual(listed.models.map((m: { name: string }) => m.name), ["builtin"]);
  });

  test("without the hub API, the usual file names are fetched and pinned by X-Repo-Commit; a missing svc-model.json gets the defaults", async () => {
    reset();
    const dataDir = tempDir();
    state.apiDown = true;
    state.hide = new Set(["svc-model.json"]);
    const r = await cli(["models", "pull", HUB_ID], env(dataDir));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /cannot list test-org\/tiny-nli@main through the hub API/);
    const manifest = JSON.parse(readFileSync(join(dataDir, "models", NAME, "manifest.json"), "utf8"));
    assert.equal(manifest.revision, SHA);
    assert.ok(manifest.files.some((f: { path: string }) => f.path === MODEL_FILE));
    // After the first file, the rest come from the pinned commit.
    const resolves = state.log.filter((l) => l.url.includes("/resolve/"));
    assert.ok(resolves[0].url.includes("/resolve/main/config.json"));
    assert.ok(resolves.slice(1).every((l) => l.url.includes(`/resolve/${SHA}/`)));
    const svcModel = manifest.files.find((f: { path: string }) => f.path === "svc-model.json");
    assert.equal(svcModel.source, "svc-default");
    const defaults = readFileSync(join(ROOT, "models", "onnx-defaults.json"));
    assert.deepEqual(readFileSync(join(dataDir, "models", NAME, "svc-model.json")), defaults);
    assert.equal(svcModel.sha256, createHash("sha256").update(defaults).digest("hex"));
  });

  test("an unknown model id fails clearly", async () => {
    reset();
    const r = await cli(["models", "pull", "test-org/missing"], env(tempDir()));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /test-org\/missing@main has no config\.json at http:\/\/127\.0\.0\.1:\d+ \(the hub API was not usable: .* answered 404\)/);
  });
});
