/**
 * Reads the lines a session's life leaves in the log (log_connections, log_disconnections, and
 * the FATALs of a refused login), 13-19 alike; texts from postmaster/auth.c/postinit.c, as
 * `/work/shared/reference/pg-messages.md` §6.3 lists them:
 *
 *   connection received: host=10.1.2.3 port=53312            (host=[local], no port, on a Unix socket)
 *   connection authorized: user=app database=shop application_name=orders-api SSL enabled (...)
 *   replication connection authorized: user=rep application_name=walreceiver
 *   disconnection: session time: 1:30:12.404 user=app database=shop host=10.1.2.3 port=53312
 *   FATAL:  password authentication failed for user "app"                  (28P01)
 *   FATAL:  no pg_hba.conf entry for host "10.1.2.3", user "x", database "shop", no encryption (28000)
 *
 * `connection authenticated:` (14+) and `connection ready: setup total=...` (PG 18+, with
 * log_connections `setup_durations` or `all`) add nothing a count needs and are not read.
 * Only English messages (lc_messages C or en); a translated log's session lines are not read.
 *
 * Owns: the texts. Never: counting (sessions.ts).
 */
import type { AnyLogEvent } from '../../domain/index.js';

export type SessionLine =
  | { kind: 'received'; host: string }
  | { kind: 'authorized'; replication: boolean; user: string; database: string | null; application: string | null }
  | { kind: 'disconnection'; sessionMs: number; user: string; database: string; host: string }
  | { kind: 'auth_failure'; reason: AuthFailureReason; user: string | null; host: string | null; afterAuthorization: boolean }
  /** A FATAL that ends a login after its `connection authorized` line, for other causes than the role. */
  | { kind: 'refused_after_authorization' };

/** Why a login was refused: the password, pg_hba.conf, the role, or another method's failure. */
export type AuthFailureReason = 'password' | 'no_pg_hba_entry' | 'pg_hba_reject' | 'role' | 'other';

const RECEIVED = /^connection received: host=(.*?)(?: port=\d+)?$/;
const DATABASE_MARK = ' database=';
const APPLICATION_MARK = ' application_name=';
const SESSION_TIME = /^disconnection: session time: (\d+):(\d{2}):(\d{2})\.(\d{3}) user=/;
// `%s authentication failed for user "%s"` for every method (password, md5 and scram alike say
// "password"; LDAP, Ident, Peer, certificate, RADIUS, PAM, BSD, GSSAPI, SSPI, "trust", 18+ OAuth
// bearer), and `authentication failed for user "%s": host rejected` / `: invalid authentication method`.
const METHOD_FAILED = /^(?:(.+) )?authentication failed for user "(.*?)"(?::.*)?$/;
const HBA = /^(no pg_hba\.conf entry for (?:replication connection from )?|pg_hba\.conf rejects (?:replication )?connection for )host "(.*?)", user "(.*?)"/;
// Checked by InitPostgres after the `connection authorized` line was written, so the login that
// line announced never became a session (no disconnection line follows). PG 16+: "reserved for
// roles with ..." replaced "reserved for non-replication superuser connections".
const ROLE = /^role "(.*?)" (?:does not exist|is not permitted to log in)$/;
const REFUSED_AFTER_AUTHORIZATION =
  /^(?:database ".*" does not exist|permission denied for database ".*"|database ".*" is not currently accepting connections|cannot connect to invalid database ".*"|too many connections for (?:role|database) ".*"|remaining connection slots are reserved for .*)$/;

// Most of a busy log (`duration:`, `statement:` lines) is turned away by its first two
// characters, before any other field of the event is looked at.
const CHAR_C = 'c'.charCodeAt(0);
const CHAR_R = 'r'.charCodeAt(0);
const CHAR_D = 'd'.charCodeAt(0);
const CHAR_I = 'i'.charCodeAt(0);

export function sessionLine(event: AnyLogEvent): SessionLine | null {
  const level = event.level;
  if (level === 'LOG') {
    const message = event.message;
    const first = message.charCodeAt(0);
    if (first === CHAR_D) return message.charCodeAt(1) === CHAR_I && event.language === undefined ? disconnection(message) : null;
    if ((first !== CHAR_C && first !== CHAR_R) || event.language !== undefined) return null;
    if (message.startsWith('connection received: ')) {
      const received = RECEIVED.exec(message);
      return received ? { kind: 'received', host: received[1]! } : null;
    }
    if (message.startsWith('connection authorized: user=')) return authorized(message, false, 'connection authorized: user='.length);
    if (message.startsWith('replication connection authorized: user=')) return authorized(message, true, 'replication connection authorized: user='.length);
    return null;
  }
  if (level !== 'FATAL' || event.language !== undefined) return null;
  if (REFUSED_AFTER_AUTHORIZATION.test(event.message)) return { kind: 'refused_after_authorization' };
  return authFailure(event);
}

/**
 * `user=%s` + ` database=%s` + ` application_name=%s` + ` SSL enabled (...)` + ` GSS (...)`, each
 * part after the user optional (13: SSL with `compression=`; 16+: GSS with `delegated_credentials=`).
 * Cut at the parts' markers, in order, rather than matched by a regex of lazy groups (which
 * backtracks over the whole line at every character).
 */
function authorized(message: string, replication: boolean, userAt: number): SessionLine {
  const ssl = message.indexOf(' SSL enabled (', userAt);
  const gss = message.indexOf(' GSS (', userAt);
  const body = message.slice(userAt, ssl >= 0 ? ssl : gss >= 0 ? gss : message.length);
  const databaseAt = body.indexOf(DATABASE_MARK);
  const applicationAt = body.indexOf(APPLICATION_MARK, Math.max(databaseAt, 0));
  const userEnd = databaseAt >= 0 ? databaseAt : applicationAt >= 0 ? applicationAt : body.length;
  return {
    kind: 'authorized',
    replication,
    user: body.slice(0, userEnd),
    database: databaseAt < 0 ? null : body.slice(databaseAt + DATABASE_MARK.length, applicationAt >= 0 ? applicationAt : body.length),
    application: applicationAt < 0 ? null : body.slice(applicationAt + APPLICATION_MARK.length),
  };
}

function disconnection(message: string): SessionLine | null {
  const time = SESSION_TIME.exec(message);
  if (!time) return null;
  const [hours, minutes, seconds, millis] = [time[1], time[2], time[3], time[4]].map(Number) as [number, number, number, number];
  // `user=%s database=%s host=%s` + ` port=%s` for TCP: cut at the last markers (a name may hold a space).
  const rest = message.slice(time[0].length);
  const databaseAt = rest.lastIndexOf(DATABASE_MARK);
  const hostAt = rest.lastIndexOf(' host=');
  if (databaseAt < 0 || hostAt < databaseAt) return null;
  const portAt = rest.lastIndexOf(' port=');
  const host = rest.slice(hostAt + ' host='.length, portAt > hostAt ? portAt : rest.length);
  return {
    kind: 'disconnection', sessionMs: ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis,
    user: rest.slice(0, databaseAt), database: rest.slice(databaseAt + DATABASE_MARK.length, hostAt), host,
  };
}

/** A refused login: by its text, or by its SQLSTATE class 28 (invalid authorization specification) when logged. */
function authFailure(event: AnyLogEvent): SessionLine | null {
  const message = event.message;
  const hba = HBA.exec(message);
  if (hba) return { kind: 'auth_failure', reason: hba[1]!.startsWith('no ') ? 'no_pg_hba_entry' : 'pg_hba_reject', user: hba[3]!, host: hba[2]!, afterAuthorization: false };
  const method = METHOD_FAILED.exec(message);
  if (method) return { kind: 'auth_failure', reason: method[1] === 'password' ? 'password' : 'other', user: method[2]!, host: null, afterAuthorization: false };
  const role = ROLE.exec(message);
  if (role) return { kind: 'auth_failure', reason: 'role', user: role[1]!, host: null, afterAuthorization: true };
  if (event.sqlstate?.startsWith('28')) return { kind: 'auth_failure', reason: event.sqlstate === '28P01' ? 'password' : 'other', user: event.user, host: null, afterAuthorization: false };
  return null;
}
