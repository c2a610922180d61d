/**
 * The central store's reads, with a lost or refused connection turned into StoreUnavailableError
 * (the API's 503): the central database being down is the fleet's state, not pgvigil serve's bug,
 * and the pool reconnects on the next request. Other errors pass unchanged (a 500, logged).
 */
import { errorCode, errorMessage, isConnectionError } from '../lib/pg-errors.js';
import { StoreUnavailableError, type StoreReads } from '../store/store-reads.js';

export function unreachableAsUnavailable(reads: StoreReads, where: string): StoreReads {
  const guarded = <A extends unknown[], R>(read: (...args: A) => R | Promise<R>) => async (...args: A): Promise<R> => {
    try {
      return await read.apply(reads, args);
    } catch (err) {
      if (!isConnectionError(errorCode(err))) throw err;
      throw new StoreUnavailableError(`${where} is unreachable (${errorMessage(err)}); each request tries again`, { cause: err });
    }
  };
  return {
    events: guarded(reads.events),
    series: guarded(reads.series),
    alerts: guarded(reads.alerts),
    alert: guarded(reads.alert),
    reportWindow: guarded(reads.reportWindow),
  };
}
