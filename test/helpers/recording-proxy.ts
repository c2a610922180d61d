/**
 * A forward proxy on 127.0.0.1 for notification tests: absolute-URI requests (http targets) and
 * CONNECT tunnels (https targets), each recorded as `METHOD target` before it is served. It
 * reaches only the hosts it is given routes for (`alerts.example.com:80` -> a local port), so a
 * request that reached a receiver by such a name can only have come through it.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';

export class RecordingProxy {
  /** `POST http://alerts.example.com/hook`, `CONNECT alerts.example.com:443`, in arrival order. */
  readonly requests: string[] = [];
  private readonly server: http.Server;
  private readonly sockets = new Set<net.Socket>();

  /** routes: `host:port` as the client names it -> the local port that serves it. */
  constructor(private readonly routes: Record<string, number>) {
    this.server = http.createServer((req, res) => this.forward(req, res));
    this.server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => this.tunnel(req, client, head));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.requests.push(`${req.method} ${req.url}`);
    const target = URL.canParse(req.url ?? '') ? new URL(req.url!) : null;
    const port = target ? this.routes[`${target.hostname}:${target.port || 80}`] : undefined;
    if (target === null || port === undefined) {
      res.writeHead(502).end(`no route to ${req.url}`);
      return;
    }
    const upstream = http.request({ host: '127.0.0.1', port, method: req.method, path: target.pathname + target.search, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (err) => res.writeHead(502).end(err.message));
    req.pipe(upstream);
  }

  private tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): void {
    this.requests.push(`CONNECT ${req.url}`);
    this.sockets.add(client);
    const port = this.routes[req.url ?? ''];
    if (port === undefined) {
      client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      return;
    }
    const upstream = net.connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  }
}
