/**
 * A TCP relay in front of a PostgreSQL server that records the startup packet of every connection
 * through it: the parameters a client asks the server to set for the whole session
 * (application_name, statement_timeout, lock_timeout...). No SQL view shows another session's
 * settings, so this is how a test sees what every one of pgvigil's connections was opened with.
 * SSL and GSS encryption requests are declined (the client then goes on in the clear, as with
 * sslmode=prefer); everything after the startup packet is relayed untouched.
 */
import net from 'node:net';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

export class StartupRecorder {
  /** The parameters of each connection's startup packet, in the order they arrived. */
  readonly startups: Array<Record<string, string>> = [];
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly upstream: { host: string; port: number }) {
    this.server = net.createServer((client) => this.relay(client));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private track(socket: net.Socket): net.Socket {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    return socket;
  }

  private relay(client: net.Socket): void {
    this.track(client);
    let pending = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 8 && pending.length >= pending.readInt32BE(0)) {
        const length = pending.readInt32BE(0);
        const packet = pending.subarray(0, length);
        pending = pending.subarray(length);
        const code = packet.readInt32BE(4);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          client.write('N');
          continue;
        }
        client.off('data', onData);
        client.pause();
        this.startups.push(startupParameters(packet));
        const server = this.track(net.connect(this.upstream.port, this.upstream.host, () => {
          server.write(packet);
          if (pending.length > 0) server.write(pending);
          client.pipe(server);
          server.pipe(client);
          client.resume();
        }));
        server.on('close', () => client.destroy());
        client.on('close', () => server.destroy());
        return;
      }
    };
    client.on('data', onData);
  }
}

/** key\0value\0 pairs after the length and protocol version, up to an empty key. */
function startupParameters(packet: Buffer): Record<string, string> {
  const fields = packet.subarray(8).toString('utf8').split('\0');
  const parameters: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length && fields[i] !== ''; i += 2) parameters[fields[i]!] = fields[i + 1]!;
  return parameters;
}
