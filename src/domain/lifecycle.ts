/** Anything with a lifetime. app.ts starts components in order and stops them in reverse. */
export interface Component {
  readonly name: string;
  start(): Promise<void>;
  /** Must finish in-flight work (flush batches) and return; called once on shutdown. */
  stop(): Promise<void>;
}
