/**
 * A webhook receiver on 127.0.0.1 that answers every POST with 200 and keeps each body in
 * arrival order: the log a fault test checks notifications against.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export class WebhookReceiver {
  readonly received: Array<Record<string, unknown>> = [];
  private server: http.Server | null = null;

  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('the webhook receiver is not started');
    return `http://127.0.0.1:${address.port}/hook`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (text: string) => { body += text; });
      req.on('end', () => {
        this.received.push(JSON.parse(body) as Record<string, unknown>);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    server?.closeAllConnections();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
