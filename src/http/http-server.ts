/** The listening side of the HTTP app, as a Component app.ts starts and stops. */
import type { FastifyInstance } from 'fastify';
import type { Component } from '../domain/index.js';

export class HttpServer implements Component {
  readonly name = 'http';
  private address: string | null = null;

  constructor(private readonly app: FastifyInstance, private readonly host: string, private readonly port: number) {}

  /** The bound address (useful with port 0), e.g. http://127.0.0.1:40123. */
  get url(): string {
    if (this.address === null) throw new Error('the HTTP server is not listening');
    return this.address;
  }

  async start(): Promise<void> {
    this.address = await this.app.listen({ host: this.host, port: this.port });
  }

  async stop(): Promise<void> {
    await this.app.close();
    this.address = null;
  }
}
