import pg from "pg";

/**
 * Whether a failed call means PostgreSQL could not be reached or could not serve (connection refused,
 * cut or timed out; server shutting down, out of connections, statement timeout): a 503. Any other
 * error is a SQL error, a bug (a 500).
 */
export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof pg.DatabaseError)) return true;
  return /^(08|53|57)/.test(err.code ?? "");
}
