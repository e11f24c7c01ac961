/**
 * Is the server's event loop free while the model is saturated? A real `svc serve` child gets
 * `--heavy` concurrent clients each sending large requests (4 questions x 16 options, fresh texts,
 * 64 pairs) back to back, while one prober asks GET /healthz every 20 ms. The same probe on the idle
 * server, in the same run, is the baseline. Goal: /healthz p99 < 10 ms under load.
 *
 *   npm run bench:loop [-- --duration 20 --heavy 8 --questions 4 --options 16 --workers 0]
 * (--workers sets SVC_WORKERS, the model's worker threads; 0 = the engine's default)
 */
import { Agent, request } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { startService } from "../test/helpers/service.js";
import { hammer } from "../test/helpers/load.js";
import { choiceBody, header, machine, numberFlag, percentile, printTable, round, sleep, writeResult } from "./lib.js";

function probe(url: string, agent: Agent): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${url}/healthz`, { agent }, (res) => {
      res.resume();
      res.on("end", () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`healthz ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

async function probeFor(url: string, ms: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const out: number[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    out.push(await probe(url, agent));
    await sleep(20);
  }
  agent.destroy();
  return out;
}

async function main(): Promise<void> {
  const m = machine();
  header("bench:loop: /healthz latency while the model is saturated", m);
  const duration = numberFlag("duration", 20);
  const heavy = numberFlag("heavy", 8);
  const questions = numberFlag("questions", 4);
  const options = numberFlag("options", 16);
  const workers = numberFlag("workers", 0);
  const svc = await startService({ env: { SVC_PER_MINUTE: "0", SVC_WORKERS: String(workers) } });
  // This process's own loop delay: if it were high, the probe would measure the client, not the server.
  const own = monitorEventLoopDelay({ resolution: 10 });
  try {
    await probeFor(svc.url, 1000); // warm-up
    const idle = await probeFor(svc.url, Math.min(10, duration / 2) * 1000);
    let stop = false;
    let n = 0;
    const body = () => Buffer.from(JSON.stringify(choiceBody(`loop${n++}x${Date.now()}`, questions, options)));
    const load = hammer(svc, { concurrency: heavy, stop: () => stop, body });
    await sleep(2000); // let the queue fill
    own.enable();
    const busy = await probeFor(svc.url, duration * 1000);
    own.disable();
    stop = true;
    const outcomes = await load;
    const ok = outcomes.filter((o) => o.status === 200);
    const stat = (xs: number[]) => ({ n: xs.length, p50: round(percentile(xs, 50)), p99: round(percentile(xs, 99)), max: round(Math.max(...xs)) });
    const rows = [
      { when: "idle", ...stat(idle) },
      { when: `${heavy} heavy clients`, ...stat(busy) },
    ];
    printTable(rows.map((r) => ({ "/healthz": r.when, probes: r.n, "p50 ms": r.p50, "p99 ms": r.p99, "max ms": r.max })));
    const heavyMs = ok.map((o) => o.ms);
    const pairs = questions * options;
    console.log(
      `\nheavy requests (${questions} questions x ${options} options = ${pairs} pairs, fresh texts): ${ok.length} answered 200 of ${outcomes.length}, ` +
        `p50 ${round(percentile(heavyMs, 50), 0)} ms; client loop delay p99 ${round(own.percentile(99) / 1e6)} ms` +
        `\n/healthz p99 under load: ${rows[1].p99} ms (goal < 10 ms): ${rows[1].p99 < 10 ? "met" : "NOT met"}`,
    );
    writeResult(workers ? `event-loop-workers-${workers}` : "event-loop", m, {
      durationS: duration,
      heavyClients: heavy,
      svcWorkers: workers,
      heavyRequest: { questions, options, pairs },
      healthz: rows,
      heavy: { sent: outcomes.length, ok: ok.length, p50Ms: round(percentile(heavyMs, 50)), p99Ms: round(percentile(heavyMs, 99)) },
      clientLoopDelayP99Ms: round(own.percentile(99) / 1e6),
      goalMet: rows[1].p99 < 10,
    });
  } finally {
    await svc.stop();
  }
}

await main();
