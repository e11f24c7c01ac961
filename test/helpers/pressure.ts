/**
 * Pieces for overload tests and benches: the largest valid request, a small one, and probes of a
 * server's memory and responsiveness, each one small enough to combine freely.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { MAX_BODY_BYTES } from "../../src/http/body.js";
import { percentile, round } from "../../bench/lib.js";
import { reply } from "./service.js";

export interface ChoiceRequest {
  model: string;
  state: string;
  questions: Record<string, { type: "choice"; instructions: string; criteria: string[] }>;
}

/**
 * Differs between runs, so that a server reused across runs cannot answer from its cache. Digits
 * only: a letter run such as "es" or "la" counts as a Spanish word and can move a request to the
 * cheaper multilingual route.
 */
const RUN = String(Date.now() % 10_000).padStart(4, "0");

// Seat codes: 36 of one character and 520 of two. The list form of criteria costs 3 bytes of JSON
// around each key, so 64 x 192 options fit in 64 KiB only with keys of about 2 characters. One
// letter at most keeps a key from reading as a word of another language (see RUN).
const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";
const SINGLES = [...LETTERS, ...DIGITS];
const DOUBLES = [...LETTERS].flatMap((l) => [...DIGITS].flatMap((d) => [`${l}${d}`, `${d}${l}`]));

/**
 * The largest kind of valid /v1/systemone body: 64 choice questions of 192 options (12,288 pairs).
 * Every question's instructions carry the seed, so each question is new to the model; the options rotate with the
 * seed and the question, but they are the same seat codes in every request, and the built-in model keeps the
 * encoder outputs of options it has read: what stays is the scorer's work on every pair (seconds for 12,288 pairs,
 * a few hundred ms for 1,024 on fast cores).
 */
export function maximalRequest(seed: number, opts: { questions?: number; options?: number } = {}): ChoiceRequest {
  const nq = opts.questions ?? 64;
  const no = opts.options ?? 192;
  if (no > SINGLES.length + DOUBLES.length) throw new Error(`at most ${SINGLES.length + DOUBLES.length} options`);
  const tag = `${RUN}${seed}`;
  const questions: ChoiceRequest["questions"] = {};
  for (let q = 0; q < nq; q++) {
    const shift = (seed * 131 + q * 37) % DOUBLES.length;
    const doubles = [...DOUBLES.slice(shift), ...DOUBLES.slice(0, shift)];
    const criteria = [...SINGLES, ...doubles].slice(0, no);
    questions[`q${q}`] = { type: "choice", instructions: `Seat for booking ${tag}-${q}?`, criteria };
  }
  const body = { model: "svc-latest", state: `Booking ${tag}: two adults, aisle seats together, near the front.`, questions };
  const bytes = Buffer.byteLength(JSON.stringify(body));
  if (bytes >= MAX_BODY_BYTES) throw new Error(`maximalRequest(${seed}) is ${bytes} bytes, over the ${MAX_BODY_BYTES}-byte body limit`);
  return body;
}

const TICKETS = [
  "My card was charged twice for one order.",
  "The parcel never arrived and tracking has not moved.",
  "I cannot log in since I changed my phone.",
  "The jacket is too big; can I swap it?",
];

/** One choice question of 4 options about a state never sent before (one fresh embedding per request). */
export function smallRequest(seed: number): ChoiceRequest {
  return {
    model: "svc-latest",
    state: `Ticket ${RUN}-${seed}: ${TICKETS[seed % TICKETS.length]}`,
    questions: {
      topic: { type: "choice", instructions: "What is this ticket about?", criteria: ["billing", "shipping", "account", "returns"] },
    },
  };
}

export interface RssSummary {
  peakRssMb: number;
  lastRssMb: number;
  /** VmHWM (the kernel's own peak of the process's life) when sampling started and stopped. */
  hwmStartMb: number;
  hwmEndMb: number;
  samples: number;
  /** True when the process was gone before stop(). */
  gone: boolean;
}

/** A file of /proc/<pid>/, or null once the process is gone. */
function procFile(pid: number, name: "status" | "stat"): string | null {
  try {
    return readFileSync(`/proc/${pid}/${name}`, "utf8");
  } catch {
    return null;
  }
}

function memoryMb(pid: number): { rss: number; hwm: number } | null {
  const status = procFile(pid, "status");
  if (status === null) return null;
  // To 0.1 MiB: finer is noise next to a heap that moves by megabytes.
  const mb = (field: string): number => round(Number(new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(status)?.[1] ?? NaN) / 1024, 1);
  const m = { rss: mb("VmRSS"), hwm: mb("VmHWM") };
  // A process that has exited but is not yet reaped (a zombie) has a status without memory lines.
  return Number.isNaN(m.rss) ? null : m;
}

/** Samples VmRSS every `everyMs`; VmHWM also catches a peak that falls between two samples. */
export function rssSampler(pid: number, everyMs: number): { stop(): RssSummary } {
  const first = memoryMb(pid);
  const s: RssSummary = { peakRssMb: first?.rss ?? NaN, lastRssMb: first?.rss ?? NaN, hwmStartMb: first?.hwm ?? NaN, hwmEndMb: first?.hwm ?? NaN, samples: first ? 1 : 0, gone: !first };
  const take = (): void => {
    const m = memoryMb(pid);
    if (!m) {
      s.gone = true;
      clearInterval(timer);
      return;
    }
    s.samples++;
    s.lastRssMb = m.rss;
    s.hwmEndMb = m.hwm;
    s.peakRssMb = Math.max(s.peakRssMb, m.rss);
  };
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      if (!s.gone) take();
      return { ...s };
    },
  };
}

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  failures: number;
}

/** Count and p50/p99/max (ms, to 0.01) of latencies; NaN where there are none. */
export function summarize(ms: number[], failures = 0): LatencySummary {
  return { count: ms.length, p50: round(percentile(ms, 50)), p99: round(percentile(ms, 99)), max: round(ms.length ? Math.max(...ms) : NaN), failures };
}

/**
 * GETs /healthz one probe after the other, `everyMs` apart, until stop(). One at a time, so a stalled
 * server is not also flooded with probes; a probe still waiting at stop() counts with the time it
 * has waited so far (a lower bound), else a whole stalled phase would show no latency at all.
 */
export function healthProbe(url: string, everyMs: number, timeoutMs = 30_000): { stop(): LatencySummary } {
  const ms: number[] = [];
  let failures = 0;
  let stopped = false;
  let inFlightSince: number | null = null;
  const abort = new AbortController();
  void (async () => {
    while (!stopped) {
      inFlightSince = performance.now();
      const r = await fire(`${url}/healthz`, null, null, { timeoutMs, signal: abort.signal });
      inFlightSince = null;
      if (stopped) break;
      if (r.status === 200) ms.push(r.ms);
      else failures++;
      await new Promise((done) => setTimeout(done, everyMs));
    }
  })();
  return {
    stop() {
      stopped = true;
      if (inFlightSince !== null) ms.push(performance.now() - inFlightSince);
      abort.abort();
      return summarize(ms, failures);
    },
  };
}

/** The prober of probeElsewhere(): GETs /healthz until its stdin closes, then prints the latencies as JSON. */
const PROBER = `
const [url, every] = process.argv.slice(-2);
const ms = [];
let failures = 0;
let stopped = false;
process.stdin.on("data", () => {});
process.stdin.on("end", () => { stopped = true; });
while (!stopped) {
  const t0 = performance.now();
  try { const r = await fetch(url + "/healthz"); await r.arrayBuffer(); if (r.status === 200) ms.push(performance.now() - t0); else failures++; }
  catch { failures++; }
  await new Promise((r) => setTimeout(r, Number(every)));
}
process.stdout.write(JSON.stringify({ ms, failures }));
`;

/**
 * healthProbe() from a process of its own: a test that also sends 100 large requests keeps its own
 * event loop busy, which would show as server latency in an in-process probe.
 */
export function probeElsewhere(url: string, everyMs: number): { stop(): Promise<LatencySummary> } {
  const child = spawn(process.execPath, ["--input-type=module", "-e", PROBER, url, String(everyMs)], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    async stop() {
      child.stdin.end();
      await exited;
      const { ms, failures } = JSON.parse(out) as { ms: number[]; failures: number };
      return summarize(ms, failures);
    },
  };
}

export interface Fired {
  /** HTTP status, or null when no response came (timeout, refused, reset, aborted). */
  status: number | null;
  ms: number;
  /** The body parsed as JSON, or its text when it is not JSON. */
  body: unknown;
  headers: Record<string, string>;
  /** "timeout", "aborted" (by opts.signal) or the connection error's code. */
  error?: string;
}

/**
 * Sends one request (a POST of `body` with `key`, or a GET without a body) and never rejects: under
 * overload a refused connection or a timeout is an outcome to count, not an exception.
 */
export async function fire(
  url: string,
  key: string | null,
  body: string | object | null,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<Fired> {
  const t0 = performance.now();
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  if (body !== null) headers["content-type"] = "application/json";
  try {
    const res = await fetch(url, {
      method: body === null ? "GET" : "POST",
      headers,
      body: body === null ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      signal,
    });
    const r = await reply(res);
    const parsed: unknown = r.body;
    return { status: r.status, ms: performance.now() - t0, body: parsed, headers: Object.fromEntries(r.headers) };
  } catch (err) {
    const error = timeout.aborted ? "timeout" : opts.signal?.aborted ? "aborted" : connectionError(err);
    return { status: null, ms: performance.now() - t0, body: null, headers: {}, error };
  }
}

function connectionError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

/** `error.type` and `error.limit` of an error body (null where absent). */
export function errorOf(body: unknown): { type: string | null; limit: string | null } {
  const e = (body as { error?: { type?: unknown; limit?: unknown } } | null)?.error;
  return { type: typeof e?.type === "string" ? e.type : null, limit: typeof e?.limit === "string" ? e.limit : null };
}

/** One word for an outcome: "200", "429 concurrency", "503 service_unavailable_error", "timeout", "ECONNRESET". */
export function outcomeKey(f: Fired): string {
  if (f.status === null) return f.error ?? "no response";
  if (f.status === 200) return "200";
  const e = errorOf(f.body);
  return `${f.status} ${e.limit ?? e.type ?? "?"}`;
}

/** How many outcomes of each kind (outcomeKey). */
export function tally(outcomes: Fired[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const o of outcomes) t[outcomeKey(o)] = (t[outcomeKey(o)] ?? 0) + 1;
  return t;
}

/** CPU seconds a process has used so far, all its threads (the model's workers too); null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  const stat = procFile(pid, "stat");
  if (stat === null) return null;
  // Fields after the command name (which may hold spaces); utime and stime are the 12th and 13th,
  // in clock ticks of 1/100 s on Linux.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
