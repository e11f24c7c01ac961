#!/usr/bin/env node
/**
 * Runs before `npm test` (package.json): checks the system tools and servers the tests need, so that a
 * fresh machine stops with one line that says what to do instead of failing somewhere in the middle.
 *
 *  - the `zstd` command and Debian's chromium at /usr/bin/chromium: installed with apt-get when this runs
 *    as root and apt-get is there (one line says so), otherwise one line names the command to run, exit 1;
 *  - PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379 (or SVC_TEST_PG_URL / SVC_TEST_REDIS_URL,
 *    as the tests read them): when one does not answer, one line says how to start it (as .ci/run does), exit 1.
 *
 * Everything present: no output, exit 0. SVC_PREFLIGHT_NO_INSTALL=1: never install, only say what to run.
 * Plain Node.js, no dependencies (it runs before the build).
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, readdirSync } from "node:fs";
import { connect } from "node:net";
import { delimiter, join } from "node:path";

const CHROMIUM = "/usr/bin/chromium";
const CONNECT_TIMEOUT_MS = 1000;

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
const sudo = isRoot ? "" : "sudo ";

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The command's path on PATH, or null. */
function which(command) {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir && executable(join(dir, command))) return join(dir, command);
  }
  return null;
}

/** Debian package names of the missing tools. */
function missingTools() {
  const missing = [];
  if (!which("zstd")) missing.push("zstd");
  if (!executable(CHROMIUM)) missing.push("chromium");
  return missing;
}

function fail(line) {
  process.stderr.write(line + "\n");
  process.exit(1);
}

function installCommand(packages) {
  return `${sudo}apt-get install -y ${packages.join(" ")}`;
}

let missing = missingTools();
if (missing.length > 0) {
  const need = `svc tests need ${missing.join(" and ")}`;
  const canInstall = isRoot && which("apt-get") !== null && process.env.SVC_PREFLIGHT_NO_INSTALL !== "1";
  if (!canInstall) fail(`${need}: run ${installCommand(missing)}`);
  process.stdout.write(`${need}: installing with apt-get install -y ${missing.join(" ")}\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  let out = "";
  for (const args of [["update", "-qq"], ["install", "-y", "-qq", ...missing]]) {
    const r = spawnSync("apt-get", args, { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    out += (r.stdout ?? "") + (r.stderr ?? "");
    if (r.status !== 0) break;
  }
  missing = missingTools();
  if (missing.length > 0) {
    if (out.trim()) process.stderr.write(out.trimEnd() + "\n");
    fail(`svc tests need ${missing.join(" and ")}: still missing after apt-get install${out.trim() ? " (output above)" : ""}; run ${installCommand(missing)}`);
  }
}

/** Resolves true when something accepts a TCP connection at host:port within the timeout. */
function answers(host, port) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** Host and port of an override URL, or the default. */
function target(variable, defaultPort) {
  const value = process.env[variable];
  if (!value) return { host: "127.0.0.1", port: defaultPort, override: null };
  try {
    const url = new URL(value);
    return { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || defaultPort), override: variable };
  } catch {
    fail(`svc tests: ${variable} is not a URL: ${value}`);
  }
}

/** The newest PostgreSQL cluster version under /etc/postgresql (Debian's layout), or null. */
function pgVersion() {
  try {
    const versions = readdirSync("/etc/postgresql").filter((v) => /^\d+(\.\d+)?$/.test(v));
    versions.sort((a, b) => Number(a) - Number(b));
    return versions.at(-1) ?? null;
  } catch {
    return null;
  }
}

const pg = target("SVC_TEST_PG_URL", 5432);
const redis = target("SVC_TEST_REDIS_URL", 6379);
const [pgUp, redisUp] = await Promise.all([answers(pg.host, pg.port), answers(redis.host, redis.port)]);

const down = [];
const fixes = [];
if (!pgUp) {
  down.push(`PostgreSQL on ${pg.host}:${pg.port}`);
  const version = pgVersion();
  if (pg.override) fixes.push(`start the server that ${pg.override} names`);
  else if (version) fixes.push(`run ${sudo}pg_ctlcluster --skip-systemctl-redirect ${version} main start`);
  else fixes.push(`set PostgreSQL up as .ci/run does (${installCommand(["postgresql"])}, trust user postgres from 127.0.0.1 in pg_hba.conf, pg_ctlcluster ... main start)`);
}
if (!redisUp) {
  down.push(`Redis on ${redis.host}:${redis.port}`);
  const start = `redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no`;
  if (redis.override) fixes.push(`start the server that ${redis.override} names`);
  else if (which("redis-server")) fixes.push(`run ${start}`);
  else fixes.push(`run ${installCommand(["redis-server"])} && ${start}`);
}
if (down.length > 0) fail(`svc tests need ${down.join(" and ")}, not answering: ${fixes.join("; ")}`);
