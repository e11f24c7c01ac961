/**
 * Hostile-input fuzzing shared by test/fuzz.test.ts (short) and bench/fuzz.ts (long): fast-check cases
 * (mutated and random bodies, headers, encodings) over HTTP, and raw-socket cases that an HTTP client
 * would not send. Every answer must be a documented one: never 5xx, the three request-id headers,
 * and an error body of exactly {"error": {"type", "message", ...}, "detail": [{loc, msg, type}]}.
 */
import { Agent, request } from "node:http";
import { connect, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { openApiProblems } from "./openapi.js";

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export const ERROR_TYPES = new Set([
  "invalid_request_error",
  "authentication_error",
  "not_found_error",
  "request_too_large",
  "unsupported_media_type",
  "rate_limit_error",
  "timeout_error",
  "service_unavailable_error",
]);
const ID_HEADERS = ["x-request-id", "x-alt-request-id", "x-typesafe-request-id"];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const sameKeys = (o: Record<string, unknown>, keys: string[]): boolean => Object.keys(o).sort().join() === [...keys].sort().join();

/** What is wrong with one answer (empty when it is a documented answer). */
export function checkAnswer(a: Answer, path = "/v1/systemone"): string[] {
  const problems: string[] = [];
  if (a.status >= 500) problems.push(`status ${a.status}`);
  const ids = ID_HEADERS.map((h) => a.headers[h]);
  if (!ids.every((id) => typeof id === "string" && /^req_[0-9a-f]{16,}$/.test(id) && id === ids[0])) {
    problems.push(`request-id headers ${JSON.stringify(ids)}`);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(a.headers)) if (typeof value === "string") headers.set(name, value);
  problems.push(...openApiProblems(path.startsWith("/healthz") ? "GET" : "POST", path.split("?")[0], a.status, headers, a.body.toString("utf8")));
  let body: unknown;
  try {
    body = JSON.parse(a.body.toString("utf8"));
  } catch {
    problems.push(`status ${a.status}, body is not JSON: ${JSON.stringify(a.body.subarray(0, 100).toString("latin1"))}`);
    return problems;
  }
  if (a.status === 200) {
    const ok =
      isObject(body) &&
      (path.startsWith("/healthz") || (typeof body.model === "string" && isObject(body.answers) && isObject(body.usage)));
    if (!ok) problems.push(`200 with body ${JSON.stringify(body).slice(0, 200)}`);
    return problems;
  }
  const shape = (why: string) => problems.push(`status ${a.status}: ${why} in ${JSON.stringify(body).slice(0, 300)}`);
  if (!isObject(body) || !sameKeys(body, ["error", "detail"])) {
    shape("top-level keys are not error, detail");
    return problems;
  }
  const { error, detail } = body;
  if (!isObject(error) || typeof error.type !== "string" || typeof error.message !== "string" || error.message === "") shape("error is not {type, message}");
  else if (!ERROR_TYPES.has(error.type)) shape(`undocumented error.type ${error.type}`);
  if (!Array.isArray(detail)) shape("detail is not an array");
  else {
    for (const d of detail) {
      const ok =
        isObject(d) &&
        sameKeys(d, ["loc", "msg", "type"]) &&
        Array.isArray(d.loc) &&
        d.loc[0] === "body" &&
        d.loc.every((x) => typeof x === "string" || typeof x === "number") &&
        typeof d.msg === "string" &&
        typeof d.type === "string";
      if (!ok) {
        shape(`bad detail entry ${JSON.stringify(d).slice(0, 100)}`);
        break;
      }
    }
  }
  return problems;
}

export interface Case {
  path: string;
  body: Buffer;
  headers: Record<string, string>;
  /** What kind of case this is, for statistics and failure reports. */
  kind: string;
}

/** Sends one case; resolves with the answer, or null when the server closed without one. */
export function fire(url: string, c: Case, agent: Agent): Promise<Answer | null> {
  return new Promise((resolve) => {
    const req = request(`${url}${c.path}`, { method: "POST", agent, headers: { ...c.headers, "content-length": String(c.body.length) } });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", () => resolve(null));
    });
    req.on("error", () => resolve(null));
    req.end(c.body);
  });
}

// ---- zstd frames built by hand (raw blocks): valid frames without a compressor.

function zstdFrame(data: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50])]; // no content size, 1 MiB window
  const max = 128 * 1024;
  let at = 0;
  do {
    const n = Math.min(max, data.length - at);
    const last = at + n >= data.length ? 1 : 0;
    const h = (n << 3) | last; // block type 0: raw
    parts.push(Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff]), data.subarray(at, at + n));
    at += n;
  } while (at < data.length);
  return Buffer.concat(parts);
}

// ---- arbitraries

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 8 }), loneSurrogate, fc.string({ maxLength: 8 })).map((p) => p.join("")) },
  { weight: 2, arbitrary: fc.constantFrom("Where is my parcel?", "I was charged twice.", "Please cancel my order.", "") },
);
const textOrJson = fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) });
const optionKeys = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 10 }), { minLength: 2, maxLength: 5 });

const systemOneQuestion = fc.oneof(
  fc.record({ type: fc.constant("noul"), instructions: fc.option(textOrJson), criteria: fc.option(fc.record({ true: text, false: text }, { requiredKeys: [] })) }, { requiredKeys: ["type"] }),
  fc.record({
    type: fc.constant("choice"),
    instructions: fc.option(textOrJson),
    criteria: fc.oneof(optionKeys, optionKeys.chain((keys) => fc.tuple(...keys.map(() => fc.option(text))).map((ds) => Object.fromEntries(keys.map((k, i) => [k, ds[i]]))))),
  }),
  fc.record({ type: fc.constant("score"), instructions: fc.option(textOrJson), criteria: fc.array(text, { minLength: 2, maxLength: 5 }) }),
);
const decideQuestion = fc.oneof(
  fc.record({ type: fc.constant("binary"), question: textOrJson, yes: text, no: text, min_confidence: fc.double({ min: -0.5, max: 1.5, noNaN: true }) }, { requiredKeys: ["type", "question"] }),
  fc.record({ type: fc.constant("choice"), question: textOrJson, options: fc.oneof(optionKeys, fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.option(text), { minKeys: 1, maxKeys: 5 })) }),
  fc.record({ type: fc.constant("scale"), question: textOrJson, levels: fc.array(text, { minLength: 2, maxLength: 5 }) }),
);
const model = fc.oneof(
  { weight: 6, arbitrary: fc.constant("svc-latest") },
  { weight: 1, arbitrary: fc.constantFrom("alt-latest", "jev-1.0.3", "svc-1.6.0", "svc-preview", "gpt-4", "") },
);
const state = fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) });
const questionKey = fc.oneof({ weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 10 }).filter((k) => k.trim() !== "") }, { weight: 1, arbitrary: fc.string({ maxLength: 3 }) });

const validBody = fc.oneof(
  fc.record({ path: fc.constant("/v1/systemone"), body: fc.record({ model, state, questions: fc.dictionary(questionKey, systemOneQuestion, { minKeys: 1, maxKeys: 2 }) }) }),
  fc.record({
    path: fc.constant("/v1/decide"),
    body: fc.record({ model, state, questions: fc.dictionary(questionKey, decideQuestion, { minKeys: 1, maxKeys: 2 }), min_confidence: fc.double({ min: 0, max: 1, noNaN: true }) }, { requiredKeys: ["model", "state", "questions"] }),
  }),
);

/** Every path to a value inside a JSON value. */
function paths(v: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...prefix, i], out));
  else if (isObject(v)) for (const [k, x] of Object.entries(v)) paths(x, [...prefix, k], out);
  return out;
}

/** A copy of `root` with the value at `path` deleted or replaced. */
function edit(root: unknown, path: (string | number)[], op: "delete" | "replace", value: unknown): unknown {
  if (path.length === 0) return op === "delete" ? undefined : value;
  const copy: unknown = structuredClone(root);
  let parent = copy as Record<string | number, unknown>;
  for (const seg of path.slice(0, -1)) parent = parent[seg] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (op === "delete") {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else parent[last] = value;
  return copy;
}

const oddValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(null, 0, -1, 1e308, true, "", [], {}, "box", "image", { type: "image", url: "x" }, { type: "box" }),
  fc.integer({ min: 1000, max: 70_000 }).map((n) => "k".repeat(n)),
  loneSurrogate,
);

const mutated = fc
  .tuple(validBody, fc.array(fc.tuple(fc.nat(), fc.constantFrom("delete" as const, "replace" as const), oddValue), { minLength: 1, maxLength: 3 }))
  .map(([v, edits]) => {
    let body: unknown = v.body;
    for (const [pick, op, value] of edits) {
      const all = paths(body);
      body = edit(body, all[pick % all.length], op, value);
    }
    return { path: v.path, body };
  });

const json = (v: { path: string; body: unknown }, kind: string) => ({ path: v.path, bytes: Buffer.from(JSON.stringify(v.body) ?? ""), kind });

/** A body with `nest` as the value at one place that is read as text (or at the top). */
function nested(depth: number, open: "[" | "{", where: string): Buffer {
  const nest = open === "[" ? "[".repeat(depth) + "1" + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  const q = (inner: string) => `{"model":"svc-latest","state":"hi","questions":{"q":${inner}}}`;
  const bodies: Record<string, string> = {
    top: nest,
    state: `{"model":"svc-latest","state":${nest},"questions":{"q":{"type":"noul","instructions":"x"}}}`,
    instructions: q(`{"type":"noul","instructions":${nest}}`),
    description: q(`{"type":"choice","criteria":{"a":${nest},"b":null}}`),
    level: q(`{"type":"score","criteria":["low",${nest}]}`),
    yes: q(`{"type":"noul","criteria":{"true":${nest}}}`),
    questions: `{"model":"svc-latest","state":"hi","questions":${nest}}`,
  };
  return Buffer.from(bodies[where]);
}

const INVALID_UTF8 = [[0xff], [0xc3], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80]];

const payload: fc.Arbitrary<{ path: string; bytes: Buffer; kind: string }> = fc.oneof(
  { weight: 3, arbitrary: validBody.map((v) => json(v, "valid")) },
  { weight: 8, arbitrary: mutated.map((v) => json(v, "mutated")) },
  { weight: 1, arbitrary: fc.record({ path: fc.constant("/v1/systemone"), body: fc.jsonValue() }).map((v) => json(v, "random json")) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2048 }).map((b) => ({ path: "/v1/systemone", bytes: Buffer.from(b), kind: "random bytes" })) },
  {
    weight: 2,
    arbitrary: fc.tuple(validBody, fc.nat()).map(([v, cut]) => {
      const b = json(v, "truncated").bytes;
      return { path: v.path, bytes: b.subarray(0, cut % Math.max(1, b.length)), kind: "truncated json" };
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 32_000 }), fc.constantFrom("[" as const, "{" as const), fc.constantFrom("top", "state", "instructions", "description", "level", "yes", "questions"))
      .map(([depth, open, where]) => ({ path: "/v1/systemone", bytes: nested(depth, open, where), kind: "deep nesting" })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 1000, max: 66_000 }), fc.boolean()).map(([n, inOption]) => ({
      path: "/v1/systemone",
      bytes: Buffer.from(
        JSON.stringify(
          inOption
            ? { model: "svc-latest", state: "x", questions: { q: { type: "choice", criteria: { ["o".repeat(n)]: null, b: null } } } }
            : { model: "svc-latest", state: "x", questions: { ["q".repeat(n)]: { type: "noul", instructions: "x" } } },
        ),
      ),
      kind: "long key",
    })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(...INVALID_UTF8), fc.constantFrom("state", "key", "option")).map(([bad, where]) => {
      const body =
        where === "state"
          ? { model: "svc-latest", state: "caf@@", questions: { q: { type: "noul", instructions: "x" } } }
          : where === "key"
            ? { model: "svc-latest", state: "x", questions: { "k@@": { type: "noul", instructions: "x" } } }
            : { model: "svc-latest", state: "x", questions: { q: { type: "choice", criteria: ["a@@", "b"] } } };
      const [before, after] = JSON.stringify(body).split("@@");
      return { path: "/v1/systemone", bytes: Buffer.concat([Buffer.from(before), Buffer.from(bad), Buffer.from(after)]), kind: "invalid utf-8" };
    }),
  },
);

/** Header values a client can send: tab, printable ASCII and bytes 0x80-0xff (latin1). */
const headerJunk = fc
  .array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(0x09)), { maxLength: 60 })
  .map((codes) => String.fromCharCode(...codes).trim());

const encoding = fc.oneof(
  { weight: 10, arbitrary: fc.constant("none") },
  { weight: 4, arbitrary: fc.constantFrom("gzip", "x-gzip", "zstd", "gzip, zstd") },
  { weight: 2, arbitrary: fc.constantFrom("gzip-cut", "zstd-cut", "gzip-random", "zstd-junk", "says-gzip", "says-zstd") },
  fc.array(fc.oneof(fc.constantFrom("gzip", "zstd", "identity", "br", "deflate", " ", "", "GZIP", "x-gzip;q=1"), headerJunk), { minLength: 1, maxLength: 5 }).map((l) => `list:${l.join(",")}`),
);

function encode(bytes: Buffer, enc: string, cut: number, junk: Buffer): { body: Buffer; header?: string } {
  const at = (b: Buffer) => b.subarray(0, cut % Math.max(1, b.length));
  switch (enc) {
    case "none":
      return { body: bytes };
    case "gzip":
    case "x-gzip":
      return { body: gzipSync(bytes), header: enc };
    case "zstd":
      return { body: zstdFrame(bytes), header: "zstd" };
    case "gzip, zstd":
      return { body: zstdFrame(gzipSync(bytes)), header: enc };
    case "gzip-cut":
      return { body: at(gzipSync(bytes)), header: "gzip" };
    case "zstd-cut":
      return { body: at(zstdFrame(bytes)), header: "zstd" };
    case "gzip-random":
      return { body: gzipSync(junk), header: "gzip" };
    case "zstd-junk":
      return { body: Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), junk]), header: "zstd" };
    case "says-gzip":
      return { body: bytes, header: "gzip" };
    case "says-zstd":
      return { body: bytes, header: "zstd" };
    default:
      return { body: bytes, header: enc.slice("list:".length) };
  }
}

export function caseArb(key: string): fc.Arbitrary<Case> {
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant("application/json") },
    { weight: 2, arbitrary: fc.constant(undefined) },
    {
      weight: 2,
      arbitrary: fc.constantFrom("application/json; charset=utf-8", "APPLICATION/JSON;CHARSET=UTF8", "application/vnd.x+json", "text/plain", "multipart/form-data; boundary=x", "image/png", "application/json; charset=latin1", ""),
    },
    { weight: 1, arbitrary: headerJunk },
  );
  const language = fc.option(fc.oneof(fc.constantFrom("es", "pt-BR", "fr;q=0.2, es;q=0.9", "*", "es;q=NaN", ";q=,", "de, xx-YY;q=1.5"), headerJunk), { nil: undefined });
  const auth = fc.oneof(
    { weight: 8, arbitrary: fc.constant(`Bearer ${key}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.oneof(headerJunk, headerJunk.map((j) => `Bearer ${j}`), fc.constant(`bearer   ${key}  `), fc.constant(`Basic ${key}`)) },
  );
  const path = fc.oneof({ weight: 12, arbitrary: fc.constant("") }, { weight: 1, arbitrary: fc.constantFrom("/v1/models", "/healthz", "/v1/nope", "/v1/systemone?x=1", "//v1/systemone", "/v1/systemone/") });
  const extra = fc.option(fc.tuple(fc.constantFrom("alt-danger-zone-long-context", "typesafe-danger-zone-long-context", "x-junk", "expect", "x-typesafe-client"), headerJunk), { nil: undefined });
  return fc
    .record({ payload, encoding, cut: fc.nat(), junk: fc.uint8Array({ maxLength: 512 }), contentType, language, auth, path, extra })
    .map((r) => {
      const { body, header } = encode(r.payload.bytes, r.encoding, r.cut, Buffer.from(r.junk));
      const headers: Record<string, string> = {};
      if (r.contentType !== undefined) headers["content-type"] = r.contentType;
      if (header !== undefined) headers["content-encoding"] = header;
      if (r.language !== undefined) headers["accept-language"] = r.language;
      if (r.auth !== undefined) headers.authorization = r.auth;
      if (r.extra && r.extra[0] !== "expect") headers[r.extra[0]] = r.extra[1];
      const c: Case = { path: r.path || r.payload.path, body, headers, kind: `${r.payload.kind}/${r.encoding.startsWith("list:") ? "list" : r.encoding}` };
      // fast-check prints counterexamples with this: a 64 KiB body as a byte list is unreadable.
      const preview = (b: Buffer) => JSON.stringify(b.length > 300 ? `${b.subarray(0, 150).toString("latin1")}…${b.subarray(-150).toString("latin1")}` : b.toString("latin1"));
      return Object.assign(c, { [fc.toStringMethod]: () => `${c.kind} POST ${c.path} ${JSON.stringify(c.headers)} body (${c.body.length} bytes, latin1): ${preview(c.body)}` });
    });
}

export interface FuzzStats {
  runs: number;
  statuses: Record<string, number>;
  kinds: Record<string, number>;
  ms: number;
}

/**
 * Runs `runs` fast-check cases against a running service; throws (with fast-check's counterexample and
 * seed) on the first case whose answer breaks a property.
 */
export async function fuzzHttp(svc: { url: string; key: string }, runs: number, seed?: number): Promise<FuzzStats> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const stats: FuzzStats = { runs: 0, statuses: {}, kinds: {}, ms: 0 };
  const t0 = performance.now();
  try {
    await fc.assert(
      fc.asyncProperty(caseArb(svc.key), async (c) => {
        const a = await fire(svc.url, c, agent);
        stats.runs++;
        const status = a ? String(a.status) : "no answer";
        stats.statuses[status] = (stats.statuses[status] ?? 0) + 1;
        stats.kinds[c.kind.split("/")[0]] = (stats.kinds[c.kind.split("/")[0]] ?? 0) + 1;
        // The server may close a connection after answering (413, 408); never without an answer.
        const problems = a ? checkAnswer(a, c.path) : ["no answer (connection closed)"];
        if (problems.length > 0) throw new Error(`${c.kind} ${c.path}: ${problems.join("; ")}`);
      }),
      { numRuns: runs, seed, endOnFailure: false },
    );
  } finally {
    agent.destroy();
    stats.ms = performance.now() - t0;
  }
  return stats;
}

// ---- raw sockets

/** Parses the HTTP/1.1 responses in `raw` (Content-Length bodies, as the service sends them). */
export function parseResponses(raw: Buffer): { answers: Answer[]; rest: Buffer } {
  const answers: Answer[] = [];
  let at = 0;
  for (;;) {
    const end = raw.indexOf("\r\n\r\n", at);
    if (end < 0) break;
    const lines = raw.subarray(at, end).toString("latin1").split("\r\n");
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
    if (!m) break;
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(":");
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers["content-length"] ?? 0);
    if (raw.length < end + 4 + length) break;
    answers.push({ status: Number(m[1]), headers, body: raw.subarray(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return { answers, rest: raw.subarray(at) };
}

/**
 * Opens a socket, runs `write` on it, and collects what the server sends until it closes the socket
 * or `waitMs` passes after `write` is done.
 */
export function rawExchange(
  url: string,
  write: (put: (data: string | Buffer) => void, sleep: (ms: number) => Promise<void>) => Promise<void>,
  waitMs = 2000,
): Promise<{ answers: Answer[]; rest: Buffer; closedByServer: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    const sock = connect(Number(port), hostname);
    const finish = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...parseResponses(Buffer.concat(chunks)), closedByServer: closed });
    };
    sock.on("data", (d) => chunks.push(d));
    sock.on("error", () => undefined);
    sock.on("close", () => {
      closed = true;
      finish();
    });
    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    sock.on("connect", () => {
      write((d) => {
        if (!sock.destroyed) sock.write(d);
      }, sleep).then(() => {
        if (!closed) timer = setTimeout(finish, waitMs);
      });
    });
  });
}

/** A complete `POST path` with a JSON body and the key, closing its connection after the answer. */
export function rawPost(path: string, key: string, body: string): string {
  return (
    `POST ${path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

/**
 * Opens one socket per request, waits until all are connected, then writes every request in one
 * synchronous loop, so that they reach the server together (in one poll phase of its event loop,
 * where a check that is not synchronous would let them all through). Resolves with the answers in
 * the order of `requests` (null where a socket closed without one).
 */
export async function sameTurn(url: string, requests: string[]): Promise<(Answer | null)[]> {
  const { hostname, port } = new URL(url);
  const sockets = await Promise.all(
    requests.map(
      () =>
        new Promise<Socket>((resolve, reject) => {
          const s = connect(Number(port), hostname, () => resolve(s));
          s.once("error", reject);
        }),
    ),
  );
  const answers = sockets.map(
    (s) =>
      new Promise<Answer | null>((resolve) => {
        const chunks: Buffer[] = [];
        s.on("data", (d) => chunks.push(d));
        s.on("close", () => resolve(parseResponses(Buffer.concat(chunks)).answers[0] ?? null));
      }),
  );
  sockets.forEach((s, i) => s.write(requests[i]));
  return Promise.all(answers);
}

export interface RawCase {
  name: string;
  /** Problems found (empty when the server answered as documented). */
  run(svc: { url: string; key: string }, bodyTimeoutMs: number): Promise<string[]>;
}

const GOOD = JSON.stringify({ model: "svc-latest", state: "Where is my parcel?", questions: { q: { type: "noul", instructions: "Is this about shipping?" } } });

function head(key: string, lines: string[], path = "/v1/systemone"): string {
  return [`POST ${path} HTTP/1.1`, "host: x", ...lines.map((l) => l.replace("{key}", key)), "", ""].join("\r\n");
}

/** Checks every answer, and that there is at least one (unless `mayClose`) with a status in `expect`. */
function judge(r: { answers: Answer[] }, expect: number[] | null, mayClose = false): string[] {
  const problems = r.answers.flatMap((a) => checkAnswer(a));
  if (r.answers.length === 0 && !mayClose) problems.push("no answer");
  if (expect && r.answers.length > 0 && !expect.includes(r.answers[0].status)) problems.push(`status ${r.answers[0].status}, expected ${expect.join(" or ")}`);
  return problems;
}

export const RAW_CASES: RawCase[] = [
  {
    name: "Content-Length shorter than the body",
    async run(svc) {
      const r = await rawExchange(svc.url, async (put) => put(head(svc.key, ["authorization: Bearer {key}", `content-length: ${GOOD.length - 10}`]) + GOOD), 1500);
      return judge(r, [400]);
    },
  },
  {
    name: "Content-Length longer than the body: 408 after the body timeout",
    async run(svc, timeoutMs) {
      const r = await rawExchange(svc.url, async (put) => put(head(svc.key, ["authorization: Bearer {key}", `content-length: ${GOOD.length + 20}`]) + GOOD), timeoutMs + 2000);
      return judge(r, [408]);
    },
  },
  {
    name: "one byte every 200 ms: 408 with JSON once the body timeout passes",
    async run(svc, timeoutMs) {
      const r = await rawExchange(svc.url, async (put, sleep) => {
        put(head(svc.key, ["authorization: Bearer {key}", "content-type: application/json", `content-length: ${GOOD.length}`]));
        const until = performance.now() + timeoutMs + 1000;
        for (let i = 0; i < GOOD.length && performance.now() < until; i++) {
          put(GOOD[i]);
          await sleep(200);
        }
      }, 1000);
      return judge(r, [408]).concat(r.answers[0] && JSON.parse(r.answers[0].body.toString()).error?.type !== "timeout_error" ? ["408 without timeout_error"] : []);
    },
  },
  {
    name: "duplicate Content-Type",
    async run(svc) {
      const out: string[] = [];
      for (const pair of [["application/json", "text/plain"], ["text/plain", "application/json"]]) {
        const r = await rawExchange(svc.url, async (put) => put(head(svc.key, ["authorization: Bearer {key}", `content-type: ${pair[0]}`, `content-type: ${pair[1]}`, `content-length: ${GOOD.length}`, "connection: close"]) + GOOD));
        out.push(...judge(r, [200, 400, 422]));
      }
      return out;
    },
  },
  {
    name: "duplicate Content-Encoding",
    async run(svc) {
      const body = gzipSync(GOOD);
      const r = await rawExchange(svc.url, async (put) => {
        put(head(svc.key, ["authorization: Bearer {key}", "content-encoding: gzip", "content-encoding: gzip", `content-length: ${body.length}`, "connection: close"]));
        put(body);
      });
      return judge(r, [200, 400, 415]);
    },
  },
  {
    name: "duplicate Authorization",
    async run(svc) {
      const out: string[] = [];
      for (const pair of [["Bearer {key}", "Bearer svc_00000000_nonononononononono"], ["Bearer svc_00000000_nonononononononono", "Bearer {key}"]]) {
        const r = await rawExchange(svc.url, async (put) => put(head(svc.key, [`authorization: ${pair[0]}`, `authorization: ${pair[1]}`, `content-length: ${GOOD.length}`, "connection: close"]) + GOOD));
        out.push(...judge(r, [200, 400, 401]));
      }
      return out;
    },
  },
  {
    name: "two different Content-Length headers, and Content-Length with chunked",
    async run(svc) {
      const out: string[] = [];
      for (const lines of [
        [`content-length: ${GOOD.length}`, "content-length: 3"],
        [`content-length: ${GOOD.length}`, "transfer-encoding: chunked"],
        ["content-length: -1"],
        ["content-length: 1e3"],
      ]) {
        const r = await rawExchange(svc.url, async (put) => put(head(svc.key, ["authorization: Bearer {key}", ...lines]) + GOOD), 1000);
        out.push(...judge(r, [400], true));
      }
      return out;
    },
  },
  {
    name: "chunked bodies, good and broken",
    async run(svc) {
      const good = `${GOOD.length.toString(16)}\r\n${GOOD}\r\n0\r\n\r\n`;
      const ok = await rawExchange(svc.url, async (put) => put(head(svc.key, ["authorization: Bearer {key}", "transfer-encoding: chunked", "connection: close"]) + good));
      const bad = await rawExchange(svc.url, async (put) => put(head(svc.key, ["authorization: Bearer {key}", "transfer-encoding: chunked"]) + "zz\r\nhello\r\n0\r\n\r\n"), 1000);
      return [...judge(ok, [200]), ...judge(bad, [400], true)];
    },
  },
  {
    name: "junk request lines and oversized headers",
    async run(svc) {
      const out: string[] = [];
      for (const data of [
        "HELLO THERE\r\n\r\n",
        "\x00\x01\x02\x03\xff\xfe\r\n\r\n",
        "GET /healthz HTTP/7.0\r\nhost: x\r\n\r\n",
        "POST /v1/systemone HTTP/1.1 trailing junk\r\nhost: x\r\n\r\n",
        "POST  /v1/systemone  HTTP/1.1\r\n\r\n",
        `GET /${"a".repeat(100_000)} HTTP/1.1\r\nhost: x\r\n\r\n`,
        `POST /v1/systemone HTTP/1.1\r\nhost: x\r\nx-big: ${"b".repeat(70_000)}\r\n\r\n`,
        "POST /v1/systemone HTTP/1.1\r\nhost: x\r\nbad header line\r\n\r\n",
        "POST /v1/systemone HTTP/1.1\r\nhost: x\r\nx:\x7f\x00\r\n\r\n",
        `POST http://evil.example/v1/systemone HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${svc.key}\r\ncontent-length: ${GOOD.length}\r\nconnection: close\r\n\r\n${GOOD}`,
      ]) {
        const r = await rawExchange(svc.url, async (put) => put(Buffer.from(data, "latin1")), 1000);
        out.push(...judge(r, null, true).map((p) => `${JSON.stringify(data.slice(0, 40))}: ${p}`));
      }
      return out;
    },
  },
];
