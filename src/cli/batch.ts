import { closeSync, existsSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";
import { answerNumbers } from "../engine/answer.js";
import type { Engine } from "../engine/engine.js";
import { createEngine } from "../engine/registry.js";
import { ApiError } from "../http/errors.js";
import { resolveModel, PUBLIC_MODELS } from "../api/models.js";
import { parseSystemOne, systemOneAnswer, type SystemOneResponse } from "../api/systemone.js";
import type { Config } from "../config.js";
import { flagInt, flagString, type Args } from "./args.js";

/** One line of OUT: the line number of IN it answers, then exactly the body POST /v1/systemone returns. */
type OutLine = { line: number } & SystemOneResponse;

/** Answers one System One request body: in this process, or over HTTP against a running service. */
type Answerer = (body: unknown) => Promise<SystemOneResponse>;

function inProcess(engine: Engine): Answerer {
  return async (body) => {
    const req = parseSystemOne(body);
    const model = resolveModel(req.model);
    if (model === null) throw new ApiError(404, "model_not_found", { params: { model: req.model, available: PUBLIC_MODELS.join(", ") } });
    const plan = engine.plan(req.state, req.questions);
    const raw = await engine.run(plan, { lane: "batch" });
    return {
      model,
      answers: Object.fromEntries(
        req.questions.map((q, i) => [q.key, systemOneAnswer(q, answerNumbers(q.kind, raw[i], q.options.map((o) => o.key), engine.calibration))]),
      ),
      usage: { input_tokens: plan.inputTokens, output_tokens: 0 },
    };
  };
}

class RemoteError extends Error {}

function overHttp(url: string, key: string): Answerer {
  return async (body) => {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(`${url.replace(/\/+$/, "")}/v1/systemone`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status === 200) return JSON.parse(text) as SystemOneResponse;
      // Waiting helps only for these; everything else is this line's own problem.
      if ((res.status === 429 || res.status === 503) && attempt < 5) {
        const wait = Math.min(60, Number(res.headers.get("retry-after") ?? "1") || 1);
        await new Promise((r) => setTimeout(r, wait * 1000));
        continue;
      }
      let message = text;
      try {
        message = (JSON.parse(text) as { error: { message: string } }).error.message;
      } catch {
        /* not an error body */
      }
      throw new RemoteError(`HTTP ${res.status}: ${message}`);
    }
  };
}

/** The request of one input line: a System One body, or {state, questions} (model defaults to svc-latest). */
function requestOf(value: unknown): unknown {
  if (value && typeof value === "object" && !Array.isArray(value) && !("model" in value)) return { model: "svc-latest", ...value };
  return value;
}

/**
 * Lines of OUT already answered by an earlier run. A last line cut short by an interruption is removed
 * from the file (it is answered again), so the output stays one JSON object per line.
 */
function alreadyAnswered(out: string): Set<number> {
  const done = new Set<number>();
  if (!existsSync(out)) return done;
  const text = readFileSync(out, "utf8");
  let keep = 0;
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf("\n", at);
    if (end < 0) break;
    try {
      const line = (JSON.parse(text.slice(at, end)) as { line?: unknown }).line;
      if (typeof line === "number") done.add(line);
    } catch {
      break;
    }
    at = end + 1;
    keep = at;
  }
  if (keep < Buffer.byteLength(text)) truncateSync(out, Buffer.byteLength(text.slice(0, keep)));
  return done;
}

/** Progress on stderr: a bar redrawn in place on a terminal, a plain line every few seconds otherwise. */
class Progress {
  private readonly t0 = performance.now();
  private last = 0;
  private done = 0;

  constructor(
    private readonly total: number,
    private readonly tty: boolean,
  ) {}

  step(): void {
    this.done++;
    const now = performance.now();
    if (now - this.last < (this.tty ? 200 : 5000) && this.done < this.total) return;
    this.last = now;
    const secs = (now - this.t0) / 1000;
    const rate = this.done / Math.max(secs, 1e-3);
    const left = rate > 0 ? (this.total - this.done) / rate : 0;
    const eta = left >= 60 ? `${Math.floor(left / 60)}m${String(Math.round(left % 60)).padStart(2, "0")}s` : `${Math.round(left)}s`;
    if (this.tty) {
      const width = 30;
      const filled = this.total > 0 ? Math.round((width * this.done) / this.total) : width;
      process.stderr.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${this.done}/${this.total} ${rate.toFixed(1)}/s, ${eta} left `);
      if (this.done >= this.total) process.stderr.write("\n");
    } else {
      process.stderr.write(`svc batch: ${this.done}/${this.total} requests, ${rate.toFixed(1)}/s, ${eta} left\n`);
    }
  }
}

/**
 * `svc batch IN.jsonl OUT.jsonl [--url URL --key KEY] [--concurrency N]`: one request per line of IN, each answered
 * exactly as POST /v1/systemone answers it, written to OUT as {"line": n, ...answer}. Lines already in OUT are
 * not asked again, so an interrupted run resumes where it stopped. A line that is not valid JSON or not a valid
 * request is reported on stderr with its number and skipped. Totals at the end.
 */
export async function batchCommand(config: Config, args: Args): Promise<number> {
  const [, input, output] = args.positionals;
  if (!input || !output) throw new Error("batch needs an input and an output file: svc batch IN.jsonl OUT.jsonl");
  if (!existsSync(input)) throw new Error(`batch: no such file ${input}`);
  const url = flagString(args, "url");
  const key = flagString(args, "key") ?? process.env.SVC_API_KEY ?? process.env.TYPESAFE_API_KEY;
  if (url && !key) throw new Error("batch --url needs a key: --key KEY, or SVC_API_KEY in the environment");
  const concurrency = Math.max(1, flagInt(args, "concurrency") ?? (url ? 4 : 1));

  const lines = readFileSync(input, "utf8").split("\n");
  if (lines.at(-1) === "") lines.pop();
  const done = alreadyAnswered(output);
  const todo = lines.map((text, i) => ({ n: i + 1, text })).filter((l) => l.text.trim() !== "" && !done.has(l.n));
  if (done.size > 0) process.stderr.write(`svc batch: ${done.size} lines already answered in ${output}; resuming with ${todo.length}\n`);

  let engine: Engine | null = null;
  let ask: Answerer;
  if (url) ask = overHttp(url, key!);
  else {
    engine = createEngine({ workers: config.workers, dataDir: config.dataDir });
    await engine.load();
    ask = inProcess(engine);
  }
  const fd = openSync(output, "a");
  const progress = new Progress(todo.length, process.stderr.isTTY === true);
  let answered = 0;
  let bad = 0;
  let tokens = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < todo.length) {
      const { n, text } = todo[next++];
      try {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch (err) {
          throw new Error(`not JSON: ${(err as Error).message}`);
        }
        const res = await ask(requestOf(body));
        const out: OutLine = { line: n, ...res };
        writeSync(fd, `${JSON.stringify(out)}\n`);
        answered++;
        tokens += res.usage.input_tokens;
      } catch (err) {
        bad++;
        const msg = err instanceof ApiError ? err.toBody("en").error.message : (err as Error).message;
        process.stderr.write(`${process.stderr.isTTY ? "\n" : ""}svc batch: line ${n} skipped: ${msg}\n`);
      }
      progress.step();
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    closeSync(fd);
    await engine?.close();
  }
  process.stdout.write(
    `answered ${answered} requests (${done.size} already answered before), skipped ${bad} bad lines; input tokens ${tokens}\n`,
  );
  return bad > 0 ? 2 : 0;
}
