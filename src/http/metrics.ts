import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** What one finished request adds to the metrics. */
export interface RequestSample {
  /** A route's path, or "other" for paths that are not routes (unbounded label values would be a leak). */
  endpoint: string;
  status: number;
  seconds: number;
  /** Seconds the model ran for it, or null when it did not reach the model. */
  modelSeconds: number | null;
  /** Input tokens billed (0 unless answered). */
  tokens: number;
  /** error.limit of a 429 (per_minute, per_day, monthly_quota, key_limit, concurrency), else null. */
  limit: string | null;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const MODEL_STATES = ["loading", "ready", "failed"] as const;

/**
 * The service's Prometheus metrics, in a registry of its own per server. Labels are endpoints,
 * statuses and limit names only: never a key, a key prefix or a request id.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"endpoint" | "status">;
  private readonly latency: Histogram<"endpoint">;
  private readonly model: Histogram<"endpoint">;
  private readonly tokens: Counter<"endpoint">;
  private readonly limited: Counter<"limit">;

  constructor(sources: { pairsHeld: () => number; modelState: () => string }) {
    const registers = [this.registry];
    this.requests = new Counter({ name: "svc_http_requests_total", help: "HTTP requests answered, by endpoint and status (499: the client left first).", labelNames: ["endpoint", "status"], registers });
    this.latency = new Histogram({ name: "svc_http_request_duration_seconds", help: "Time from request to answer, by endpoint.", labelNames: ["endpoint"], buckets: LATENCY_BUCKETS, registers });
    this.model = new Histogram({ name: "svc_model_duration_seconds", help: "Time a request spent in the model (queued and running), by endpoint.", labelNames: ["endpoint"], buckets: LATENCY_BUCKETS, registers });
    this.tokens = new Counter({ name: "svc_input_tokens_billed_total", help: "Input tokens billed, by endpoint.", labelNames: ["endpoint"], registers });
    this.limited = new Counter({ name: "svc_rate_limited_total", help: "Requests refused with 429, by error.limit.", labelNames: ["limit"], registers });
    new Gauge({
      name: "svc_queue_pairs",
      help: "Question-option pairs admitted and not yet answered (running or waiting for the model).",
      registers,
      collect() {
        this.set(sources.pairsHeld());
      },
    });
    new Gauge({
      name: "svc_model_state",
      help: "1 for the model's current state (loading, ready or failed), 0 for the others.",
      labelNames: ["state"],
      registers,
      collect() {
        const now = sources.modelState();
        for (const s of MODEL_STATES) this.set({ state: s }, s === now ? 1 : 0);
      },
    });
    collectDefaultMetrics({ register: this.registry, prefix: "svc_" });
  }

  observe(s: RequestSample): void {
    this.requests.inc({ endpoint: s.endpoint, status: String(s.status) });
    this.latency.observe({ endpoint: s.endpoint }, s.seconds);
    if (s.modelSeconds !== null) this.model.observe({ endpoint: s.endpoint }, s.modelSeconds);
    if (s.tokens > 0) this.tokens.inc({ endpoint: s.endpoint }, s.tokens);
    if (s.limit !== null) this.limited.inc({ limit: s.limit });
  }

  /** The text exposition format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/**
 * Serves GET /metrics on a listener of its own (SVC_METRICS_PORT): the API port never answers it,
 * so the metrics can stay on a private interface while the API is public.
 */
export async function startMetricsServer(metrics: ServiceMetrics, host: string, port: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("only GET /metrics here\n");
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(req.method === "HEAD" ? undefined : text),
      () => res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("metrics could not be collected\n"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return { server, url: `http://${host.includes(":") ? `[${host}]` : host}:${actual}` };
}
