/**
 * Throughput and p99 of the full HTTP path (body, auth, limits, validation, usage record in SQLite,
 * serialization) with the model replaced by a trivial engine, against a bare node:http handler that
 * returns the same response bytes. Both run in this process; autocannon runs in a worker thread.
 * Runs alternate (svc, bare, svc, bare, ...) so drift in the machine's load hits both alike.
 *
 *   npm run bench:server [-- --duration 5 --connections 50 --rounds 3]
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { post } from "../test/helpers/service.js";
import {
  autocannon,
  choiceBody,
  header,
  machine,
  numberFlag,
  printTable,
  round,
  sleep,
  startInProcess,
  writeResult,
  type CannonResult,
} from "./lib.js";
import { TrivialEngine } from "./trivial-engine.js";

async function bare(response: Buffer): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": response.length });
      res.end(response);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

interface Run {
  target: "svc" | "bare";
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
}

async function main(): Promise<void> {
  const m = machine();
  header("bench:server: full HTTP path with a trivial engine vs a bare node:http handler", m);
  const duration = numberFlag("duration", 5);
  const connections = numberFlag("connections", 50);
  const rounds = numberFlag("rounds", 3);
  const payload = JSON.stringify(choiceBody("bench"));
  const results: Record<string, unknown> = {};
  const summary = [];
  for (const sync of ["full", "normal"] as const) {
    const svc = await startInProcess(new TrivialEngine(), sync);
    const sample = await post(svc, "/v1/systemone", JSON.parse(payload));
    if (sample.status !== 200) throw new Error(`svc answered ${sample.status}: ${JSON.stringify(sample.body)}`);
    const b = await bare(Buffer.from(JSON.stringify(sample.body)));
    const fire = async (target: "svc" | "bare", seconds: number): Promise<CannonResult> =>
      autocannon({
        url: `${target === "svc" ? svc.url : b.url}/v1/systemone`,
        method: "POST",
        headers: { authorization: `Bearer ${svc.key}`, "content-type": "application/json" },
        body: payload,
        connections,
        duration: seconds,
        workers: 1,
      });
    await fire("svc", 1);
    await fire("bare", 1);
    const runs: Run[] = [];
    const rowsBefore = svc.store.countUsage();
    let svc2xx = 0;
    for (let r = 0; r < rounds; r++) {
      for (const target of ["svc", "bare"] as const) {
        await sleep(300);
        const res = await fire(target, duration);
        if (target === "svc") svc2xx += res.statusCodeStats["200"]?.count ?? 0;
        runs.push({
          target,
          rps: round(res.requests.total / res.duration, 0),
          p50: res.latency.p50,
          p99: res.latency.p99,
          total: res.requests.total,
          non2xx: res.non2xx,
          errors: res.errors,
        });
      }
    }
    const usageRows = svc.store.countUsage() - rowsBefore;
    await svc.close();
    await new Promise((r) => b.server.close(r));
    const mean = (t: "svc" | "bare", f: (r: Run) => number) => {
      const xs = runs.filter((r) => r.target === t).map(f);
      return xs.reduce((s, x) => s + x, 0) / xs.length;
    };
    const ratio = mean("svc", (r) => r.rps) / mean("bare", (r) => r.rps);
    console.log(`SVC_DB_SYNC=${sync}: ${connections} connections, ${duration} s per run`);
    printTable(runs.map((r) => ({ run: r.target, "req/s": r.rps, "p50 ms": r.p50, "p99 ms": r.p99, requests: r.total, non2xx: r.non2xx, errors: r.errors })));
    console.log(`svc/bare throughput: ${round(ratio, 3)} (goal >= 0.5); usage rows written ${usageRows} for ${svc2xx} responses 200\n`);
    results[sync] = { runs, ratio: round(ratio, 3), svcMeanRps: round(mean("svc", (r) => r.rps), 0), bareMeanRps: round(mean("bare", (r) => r.rps), 0), usageRows, svc200: svc2xx };
    summary.push({
      sync,
      "svc req/s": round(mean("svc", (r) => r.rps), 0),
      "bare req/s": round(mean("bare", (r) => r.rps), 0),
      ratio: round(ratio, 3),
      "svc p99 ms": round(mean("svc", (r) => r.p99), 1),
      "bare p99 ms": round(mean("bare", (r) => r.p99), 1),
    });
  }
  printTable(summary);
  writeResult("server-overhead", m, { durationS: duration, connections, rounds, request: "1 choice question, 4 options, ~60-token state", results });
}

await main();
