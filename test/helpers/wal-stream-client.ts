/**
 * The replication protocol's clients that are not standbys, for servers whose own client binaries
 * this machine lacks (the embedded PG 18 ships only initdb, pg_ctl and postgres; Debian's PG 15
 * pg_receivewal and pg_basebackup refuse a newer server): a WAL stream as pg_receivewal and
 * pg_basebackup -X stream keep it open (write and flush reported, replay never: they replay
 * nothing), and a BASE_BACKUP whose archive is read and dropped. The walsenders they make on the
 * server are what pgvigil sees; where the files go does not matter to it.
 */
import type { Duplex, DuplexOptions } from 'node:stream';
import pg from 'pg';
import { both as copyBoth } from 'pg-copy-streams';
import type { PgServer } from './pg-harness.js';

// pg-copy-streams ships `both` (CopyBoth, for replication) without its type.
declare module 'pg-copy-streams' {
  export function both(txt: string, options?: DuplexOptions & { alignOnCopyDataFrame?: boolean }): Duplex & pg.Submittable;
}

const STATUS_INTERVAL_MS = 1_000;
// Microseconds between the Unix epoch and PostgreSQL's (2000-01-01).
const PG_EPOCH_US = 946_684_800_000_000n;

export interface WalStream {
  /** Ends the stream as pg_receivewal does on SIGINT: CopyDone, then the connection closes. */
  stop(): Promise<void>;
}

/** A physical WAL stream from the server's current position, reported as written and flushed. */
export async function streamWal(server: PgServer, applicationName: string): Promise<WalStream> {
  const client = replicationClient(server, applicationName, 'true');
  await client.connect();
  const [system] = (await client.query('IDENTIFY_SYSTEM')).rows as Array<{ xlogpos: string; timeline: number }>;
  if (!system) throw new Error(`IDENTIFY_SYSTEM on port ${server.port} returned no row`);
  const stream = client.query(copyBoth(`START_REPLICATION PHYSICAL ${system.xlogpos} TIMELINE ${system.timeline}`, { alignOnCopyDataFrame: true }));
  let receivedLsn = lsnToBigInt(system.xlogpos);
  const sendStatus = () => stream.write(standbyStatus(receivedLsn));
  stream.on('data', (frame: Buffer) => {
    // 'w' XLogData: start LSN, end LSN, send time, then WAL; 'k' keepalive: end LSN, time, reply requested.
    if (frame[0] === 0x77) receivedLsn = frame.readBigUInt64BE(1) + BigInt(frame.length - 25);
    if (frame[0] === 0x6b && frame[17] === 1) sendStatus();
  });
  let failure: Error | null = null;
  const ended = new Promise<void>((resolve) => {
    stream.on('error', (error) => { failure = error; resolve(); });
    stream.on('end', () => resolve());
    stream.on('finish', () => resolve());
  });
  const timer = setInterval(sendStatus, STATUS_INTERVAL_MS);
  return {
    async stop() {
      clearInterval(timer);
      // Only a failure while streaming counts: ending the connection ourselves (below, when the
      // server is slow to answer CopyDone) ends the stream with "Connection terminated".
      const failedWhileStreaming: Error | null = failure;
      if (failedWhileStreaming === null) stream.end();
      await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 2_000))]);
      await client.end().catch(() => undefined);
      if (failedWhileStreaming !== null) {
        throw new Error(`WAL stream ${applicationName} from port ${server.port} failed`, { cause: failedWhileStreaming });
      }
    },
  };
}

/** A base backup through the replication protocol (a walsender in state `backup`); its archive is discarded. */
export async function baseBackupDiscarded(server: PgServer, applicationName: string, maxRateKbPerSecond: number): Promise<void> {
  const client = replicationClient(server, applicationName, 'true');
  await client.connect();
  try {
    // pg's client ignores CopyData it was not asked to stream: the tar archive goes nowhere.
    await client.query(`BASE_BACKUP (LABEL 'pgvigil-normal-day', CHECKPOINT 'fast', WAL false, MAX_RATE ${maxRateKbPerSecond})`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function replicationClient(server: PgServer, applicationName: string, replication: 'true' | 'database'): pg.Client {
  const client = new pg.Client({
    host: server.host, port: server.port, user: 'postgres', database: 'postgres', application_name: applicationName, replication,
  } as pg.ClientConfig);
  client.on('error', () => undefined); // the awaited calls reject with the same error
  return client;
}

/** Standby status update ('r'): written, flushed, applied (invalid: nothing is replayed), time, no reply wanted. */
function standbyStatus(lsn: bigint): Buffer {
  const message = Buffer.alloc(34);
  message.write('r', 0);
  message.writeBigUInt64BE(lsn, 1);
  message.writeBigUInt64BE(lsn, 9);
  message.writeBigUInt64BE(0n, 17);
  message.writeBigInt64BE(BigInt(Date.now()) * 1000n - PG_EPOCH_US, 25);
  message.writeUInt8(0, 33);
  return message;
}

function lsnToBigInt(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}
