import { randomBytes } from "node:crypto";
import pg from "pg";
import { Redis } from "ioredis";

/** The PostgreSQL and Redis servers of the test machines (.ci/run starts them); override with these variables. */
export const PG_ADMIN_URL = process.env.SVC_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * A database of its own and a Redis key prefix of its own for one test or bench run, so that runs in
 * parallel (and other users of the same servers) never see each other's keys, rows or counters.
 * drop() removes both.
 */
export interface Scratch {
  database: string;
  /** URL of the scratch database on the given host and port (a TcpProxy's port, say). */
  databaseUrl(host?: string, port?: number): string;
  redisPrefix: string;
  /** A client of the scratch database (direct, not through any proxy). */
  db: pg.Client;
  /** A client of the Redis server (direct). */
  redis: Redis;
  /** Deletes every Redis key under the prefix: what a Redis restart without persistence does to this service. */
  flushRedis(): Promise<number>;
  drop(): Promise<void>;
}

export async function createScratch(label: string): Promise<Scratch> {
  const database = `svc_${label}_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const admUrl = new URL(PG_ADMIN_URL);
  const databaseUrl = (host = admUrl.hostname, port = Number(admUrl.port || 5432)): string => {
    const u = new URL(PG_ADMIN_URL);
    u.hostname = host;
    u.port = String(port);
    u.pathname = `/${database}`;
    return u.toString();
  };
  const db = new pg.Client({ connectionString: databaseUrl() });
  await db.connect();
  const redis = new Redis(REDIS_URL);
  const redisPrefix = `${database}:`;
  const flushRedis = async (): Promise<number> => {
    let deleted = 0;
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${redisPrefix}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== "0");
    return deleted;
  };
  return {
    database,
    databaseUrl,
    redisPrefix,
    db,
    redis,
    flushRedis,
    async drop() {
      await flushRedis().catch(() => undefined);
      redis.disconnect();
      await db.end().catch(() => undefined);
      const again = new pg.Client({ connectionString: PG_ADMIN_URL });
      await again.connect();
      await again.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await again.end();
    },
  };
}
