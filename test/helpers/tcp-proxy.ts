import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A TCP relay in front of a shared server (PostgreSQL, Redis), so that a test can make it unreachable
 * for the instances it starts, and reachable again, without stopping a server other people use.
 * cut(): every open connection through it is closed and new ones are closed at once; restore() ends that.
 * target: where new connections go (a test may move it to a server of its own).
 */
export class TcpProxy {
  private down = false;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    public target: { host: string; port: number },
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    let proxy: TcpProxy | null = null;
    const server = createServer((client) => {
      if (!proxy || proxy.down) return void client.destroy();
      const upstream = connect(proxy.target.port, proxy.target.host);
      const pair = [client, upstream];
      for (const s of pair) {
        proxy.sockets.add(s);
        s.on("error", () => pair.forEach((x) => x.destroy()));
        s.on("close", () => {
          proxy?.sockets.delete(s);
          pair.forEach((x) => x.destroy());
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    proxy = new TcpProxy(server, (server.address() as AddressInfo).port, { host: targetHost, port: targetPort });
    return proxy;
  }

  cut(): void {
    this.down = true;
    // destroy(), not resetAndDestroy(): a reset racing a socket's own end() left its handle open and
    // made the test process spin at exit (Node 20).
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.down = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
