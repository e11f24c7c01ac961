import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { defaultsPath, MODEL_FILES, SVC_MODEL_FILE } from "../engine/onnx/model-folder.js";
import { checkHubId, modelNameFor, modelsDir, readManifest, type Manifest, type ManifestFile } from "./store.js";

/** Downloads a model from the Hugging Face Hub (or a mirror at HF_ENDPOINT) into the data dir, pinned to a commit. */
export interface PullOptions {
  hubId: string;
  /** Branch, tag or commit (default "main"); the files are fetched from the commit it resolves to. */
  revision?: string;
  /** ONNX file to fetch instead of the first of MODEL_FILES the repository has. */
  file?: string;
  dataDir: string;
  /** Default: HF_ENDPOINT, else https://huggingface.co. */
  endpoint?: string;
  /** Default: HF_TOKEN; sent only to the endpoint, never to the CDN it redirects to. */
  token?: string | null;
  /** Where progress goes (stderr); a TTY gets a live bar, anything else plain lines. */
  progress?: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface PullResult {
  name: string;
  dir: string;
  manifest: Manifest;
  alreadyInstalled: boolean;
}

/** One file to fetch: the first of `candidates` the server has; a missing required one fails the pull. */
interface Wanted {
  candidates: string[];
  required: boolean;
}

const REQUIRED = ["config.json", "tokenizer.json"];
const OPTIONAL = ["tokenizer_config.json", "special_tokens_map.json", SVC_MODEL_FILE];
/** Tried in order when the hub API cannot list the repository's files. */
const FALLBACK_MODEL_FILES = ["onnx/model_quantized.onnx", "onnx/model.onnx"];
const VERIFIED = ".verified.json";

class HttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const isSha = (s: string): boolean => /^[0-9a-f]{40}$/.test(s);

/** An ETag that is a sha256 (the hub gives one for LFS files in X-Linked-Etag); git blob ids (sha1) are not. */
function sha256Etag(value: string | null): string | null {
  const m = value ? /^(?:W\/)?"?([0-9a-f]{64})"?$/.exec(value.trim()) : null;
  return m ? m[1] : null;
}

/** 950 B, 171.2 kB, 428.0 MB, 1.1 GB. */
export function human(bytes: number): string {
  if (bytes < 1e3) return `${Math.round(bytes)} B`;
  const [div, unit] = bytes < 1e6 ? [1e3, "kB"] : bytes < 1e9 ? [1e6, "MB"] : [1e9, "GB"];
  return `${(bytes / div).toFixed(1)} ${unit}`;
}

/** A progress bar on a TTY, plain lines every 10% elsewhere (logs, CI). */
class Progress {
  private lastDraw = 0;
  private lastTenth = -1;
  private readonly t0 = performance.now();

  constructor(
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean },
    private readonly file: string,
    private readonly total: number | null,
    private readonly from: number,
  ) {
    if (from > 0) this.out.write(`${file}: resuming at ${human(from)}${total ? ` of ${human(total)}` : ""}\n`);
  }

  private line(done: number): string {
    const secs = Math.max(0.001, (performance.now() - this.t0) / 1000);
    const speed = `${human((done - this.from) / secs)}/s`;
    const pct = this.total ? `${Math.floor((100 * done) / this.total)}%`.padStart(4) : "";
    return `${this.file} ${pct} ${human(done)}${this.total ? ` / ${human(this.total)}` : ""}  ${speed}`;
  }

  update(done: number): void {
    const now = performance.now();
    if (this.out.isTTY) {
      if (now - this.lastDraw < 100) return;
      this.lastDraw = now;
      this.out.write(`\r${this.line(done)}\x1b[K`);
    } else if (this.total && this.total >= 1e6) {
      const tenth = Math.floor((10 * done) / this.total);
      if (tenth > this.lastTenth && tenth < 10) {
        this.lastTenth = tenth;
        this.out.write(`${this.line(done)}\n`);
      }
    }
  }

  finish(done: number, note: string): void {
    this.out.write(`${this.out.isTTY ? "\r" : ""}${this.line(done)}  ${note}${this.out.isTTY ? "\x1b[K" : ""}\n`);
  }
}

class Client {
  constructor(
    private readonly endpoint: string,
    private readonly token: string | null,
  ) {}

  private headers(url: string, extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { "user-agent": "svc-models-pull", ...extra };
    if (this.token && new URL(url).origin === new URL(this.endpoint).origin) h.authorization = `Bearer ${this.token}`;
    return h;
  }

  /** fetch() with the failing address and the network cause in the message ("fetch failed" alone says nothing). */
  private async fetch(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, init);
    } catch (err) {
      const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
      throw new Error(`cannot reach ${url}: ${cause}`);
    }
  }

  async json(path: string): Promise<unknown> {
    const url = `${this.endpoint}${path}`;
    const res = await this.fetch(url, { headers: this.headers(url) });
    if (!res.ok) throw new HttpError(`${url} answered ${res.status}`, res.status);
    return res.json() as Promise<unknown>;
  }

  /**
   * GETs a file, following redirects by hand: the hub answers /resolve/ for LFS files with a
   * redirect carrying X-Linked-Etag (the sha256) and X-Linked-Size, which the final CDN answer lacks.
   */
  async get(url: string, range: number): Promise<{ res: Response; sha256: string | null; size: number | null; commit: string | null }> {
    let sha256: string | null = null;
    let size: number | null = null;
    let commit: string | null = null;
    for (let hop = 0; hop < 6; hop++) {
      const res = await this.fetch(url, { headers: this.headers(url, range > 0 ? { range: `bytes=${range}-` } : {}), redirect: "manual" });
      sha256 ??= sha256Etag(res.headers.get("x-linked-etag")) ?? sha256Etag(res.headers.get("etag"));
      const linkedSize = res.headers.get("x-linked-size");
      if (size === null && linkedSize && /^\d+$/.test(linkedSize)) size = Number(linkedSize);
      commit ??= res.headers.get("x-repo-commit");
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel();
        url = new URL(location, url).toString();
        continue;
      }
      return { res, sha256, size, commit };
    }
    throw new Error(`too many redirects for ${url}`);
  }
}

async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

function sizeOrZero(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Downloads one file into `<dest>.part` (resuming it with a Range request), verifies it and renames it to `dest`. */
async function download(
  client: Client,
  url: string,
  file: string,
  dest: string,
  progress: NodeJS.WritableStream & { isTTY?: boolean },
): Promise<{ sha256: string; size: number; commit: string | null } | null> {
  const part = `${dest}.part`;
  mkdirSync(dirname(dest), { recursive: true });
  let have = sizeOrZero(part);
  let got = await client.get(url, have);
  let { res } = got;
  if (res.status === 416 && have > 0) {
    // The part is already whole (or longer than the file): verify what we have, or start over.
    await res.body?.cancel();
    if (got.size === null || have !== got.size) {
      rmSync(part, { force: true });
      have = 0;
      got = await client.get(url, 0);
      res = got.res;
    }
  }
  if (res.status === 404) {
    await res.body?.cancel();
    return null;
  }
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel();
    throw new Error(`${url} answered ${res.status}: the model is private or gated; set HF_TOKEN to a token that can read it`);
  }
  let append = false;
  let total = got.size;
  if (res.status === 206) {
    const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(res.headers.get("content-range") ?? "");
    if (!m || Number(m[1]) !== have) {
      await res.body?.cancel();
      rmSync(part, { force: true });
      throw new Error(`${url} answered a range that does not continue ${part}; it was deleted, run the pull again`);
    }
    append = true;
    if (m[2] !== "*") total ??= Number(m[2]);
  } else if (res.status === 200) {
    const len = res.headers.get("content-length");
    if (len && /^\d+$/.test(len)) total ??= Number(len);
    have = 0; // the server ignored the range (or there was none): start from the first byte
  } else if (res.status !== 416) {
    await res.body?.cancel();
    throw new Error(`${url} answered ${res.status}`);
  }

  const bar = new Progress(progress, file, total, append ? have : 0);
  let done = append ? have : 0;
  if (res.status !== 416) {
    const out = createWriteStream(part, { flags: append ? "a" : "w" });
    const closed = new Promise<void>((ok, fail) => {
      out.once("close", ok);
      out.once("error", fail);
    });
    try {
      if (!res.body) throw new Error("empty body");
      for await (const chunk of res.body) {
        if (!out.write(chunk)) await new Promise<void>((ok) => out.once("drain", () => ok()));
        done += (chunk as Uint8Array).byteLength;
        bar.update(done);
      }
    } catch (err) {
      out.end();
      await closed.catch(() => undefined);
      const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
      throw new Error(
        `download of ${file} was interrupted at ${human(done)}${total ? ` of ${human(total)}` : ""} (${cause}); ` +
          `${file}.part is kept: run the same pull again to resume`,
      );
    }
    out.end();
    await closed;
  }
  const size = sizeOrZero(part);
  if (total !== null && size !== total) {
    rmSync(part, { force: true });
    throw new Error(`${file}: got ${size} bytes, the server announced ${total}; the file was deleted, run the pull again`);
  }
  const sha256 = await fileSha256(part);
  if (got.sha256 && sha256 !== got.sha256) {
    rmSync(part, { force: true });
    throw new Error(`${file}: sha256 mismatch (expected ${got.sha256}, got ${sha256}); the file was deleted and nothing was installed`);
  }
  renameSync(part, dest);
  bar.finish(size, got.sha256 ? "sha256 verified" : `sha256 ${sha256.slice(0, 12)}`);
  return { sha256, size, commit: got.commit };
}

/** The files to fetch, from the repository's file list when the hub API gave one. */
function plan(siblings: string[] | null, file: string | undefined, label: string): Wanted[] {
  if (siblings === null) {
    return [
      ...REQUIRED.map((p) => ({ candidates: [p], required: true })),
      ...OPTIONAL.map((p) => ({ candidates: [p], required: false })),
      { candidates: file ? [file] : FALLBACK_MODEL_FILES, required: true },
    ];
  }
  const has = new Set(siblings);
  for (const r of REQUIRED) if (!has.has(r)) throw new Error(`${label} has no ${r}; svc needs a Hugging Face folder with ${REQUIRED.join(" and ")}`);
  const model = file ?? MODEL_FILES.find((f) => has.has(f));
  if (!model || !has.has(model)) {
    throw new Error(
      `${label} has no ${file ?? `ONNX export (looked for ${MODEL_FILES.join(", ")})`}; ` +
        "export one with Optimum and point SVC_MODEL at the folder (docs/models.md)",
    );
  }
  const wanted = [...REQUIRED, ...OPTIONAL.filter((f) => has.has(f)), model];
  // Models over 2 GB keep their weights beside the graph as external data.
  for (const extra of [`${model}_data`, `${model}.data`]) if (has.has(extra)) wanted.push(extra);
  return wanted.map((p) => ({ candidates: [p], required: true }));
}

export async function pullModel(opts: PullOptions): Promise<PullResult> {
  checkHubId(opts.hubId);
  const endpoint = (opts.endpoint ?? process.env.HF_ENDPOINT ?? "https://huggingface.co").replace(/\/+$/, "");
  const token = opts.token === undefined ? process.env.HF_TOKEN || null : opts.token;
  const progress = opts.progress ?? process.stderr;
  const requested = opts.revision ?? "main";
  const client = new Client(endpoint, token);
  const name = modelNameFor(opts.hubId);
  const target = join(modelsDir(opts.dataDir), name);

  let sha: string | null = null;
  let siblings: string[] | null = null;
  let apiNote = "";
  try {
    const info = (await client.json(`/api/models/${opts.hubId}/revision/${encodeURIComponent(requested)}`)) as {
      sha?: unknown;
      siblings?: { rfilename?: unknown }[];
    };
    if (typeof info.sha === "string" && isSha(info.sha)) sha = info.sha;
    if (Array.isArray(info.siblings)) siblings = info.siblings.map((s) => s.rfilename).filter((f): f is string => typeof f === "string");
  } catch (err) {
    if (err instanceof HttpError && (err.status === 401 || err.status === 403)) {
      throw new Error(`${opts.hubId}: access denied (${err.status}); the model is private or gated, set HF_TOKEN`);
    }
    apiNote = ` (the hub API was not usable: ${(err as Error).message})`;
    progress.write(`svc: cannot list ${opts.hubId}@${requested} through the hub API; trying the usual file names${apiNote}\n`);
  }
  if (sha === null && isSha(requested)) sha = requested;

  const existing = readManifest(target);
  if (sha && existing && existing.hub_id === opts.hubId && existing.revision === sha && existing.files.every((f) => existsSync(join(target, f.path)))) {
    return { name, dir: target, manifest: existing, alreadyInstalled: true };
  }

  const label = `${opts.hubId}@${requested}${sha && sha !== requested ? ` (${sha.slice(0, 12)})` : ""}`;
  const wanted = plan(siblings, opts.file, label);
  let pin = sha ?? requested;
  const staging = join(modelsDir(opts.dataDir), ".pull", `${name}@${pin.replace(/[^\w.-]/g, "_")}`);
  mkdirSync(staging, { recursive: true });
  const verifiedPath = join(staging, VERIFIED);
  const verified: Record<string, { sha256: string; size: number }> = existsSync(verifiedPath)
    ? (JSON.parse(readFileSync(verifiedPath, "utf8")) as Record<string, { sha256: string; size: number }>)
    : {};

  const files: ManifestFile[] = [];
  for (const want of wanted) {
    let found = false;
    for (const path of want.candidates) {
      const dest = join(staging, path);
      const done = verified[path];
      if (done && sizeOrZero(dest) === done.size) {
        files.push({ path, ...done, source: "hub" });
        found = true;
        break;
      }
      const url = `${endpoint}/${opts.hubId}/resolve/${encodeURIComponent(pin)}/${path}`;
      const got = await download(client, url, path, dest, progress);
      if (!got) continue;
      // Without the hub API, the first answer's X-Repo-Commit pins the remaining files to one commit.
      if (sha === null && got.commit && isSha(got.commit)) pin = sha = got.commit;
      verified[path] = { sha256: got.sha256, size: got.size };
      writeFileSync(verifiedPath, JSON.stringify(verified));
      files.push({ path, sha256: got.sha256, size: got.size, source: "hub" });
      found = true;
      break;
    }
    if (!found && want.required) throw new Error(`${label} has no ${want.candidates.join(" or ")} at ${endpoint}${apiNote}`);
  }

  if (!files.some((f) => f.path === SVC_MODEL_FILE)) {
    const text = readFileSync(defaultsPath());
    writeFileSync(join(staging, SVC_MODEL_FILE), text);
    files.push({ path: SVC_MODEL_FILE, sha256: createHash("sha256").update(text).digest("hex"), size: text.length, source: "svc-default" });
  }
  const manifest: Manifest = {
    hub_id: opts.hubId,
    revision: sha ?? requested,
    requested_revision: requested,
    endpoint,
    files,
    pulled_at: new Date().toISOString(),
  };
  writeFileSync(join(staging, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  rmSync(verifiedPath, { force: true });
  // Swap folders so a running reader never sees a half-installed model.
  const old = existsSync(target) ? join(modelsDir(opts.dataDir), ".pull", `${name}.old-${Date.now()}`) : null;
  if (old) renameSync(target, old);
  renameSync(staging, target);
  if (old) rmSync(old, { recursive: true, force: true });
  try {
    rmdirSync(join(modelsDir(opts.dataDir), ".pull"));
  } catch {
    /* other downloads are still in there */
  }
  return { name, dir: target, manifest, alreadyInstalled: false };
}
