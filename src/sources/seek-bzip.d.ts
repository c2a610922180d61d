/**
 * The part of seek-bzip (plain JavaScript, no types of its own) that log-inputs.ts uses: the
 * decoder and its block loop, as Bunzip.decode runs it (lib/index.js, seek-bzip 2.0).
 */
declare module 'seek-bzip' {
  interface ByteInput {
    readByte(): number;
    eof(): boolean;
  }
  interface ByteOutput {
    writeByte(byte: number): void;
  }
  class Bunzip {
    constructor(input: ByteInput, output: ByteOutput);
    /** Reads the next block's header; false at the end of a stream. */
    _init_block(): boolean;
    /** Decodes the current block into the output. */
    _read_bunzip(): void;
    /** Starts the next stream of a multi-stream file. */
    _start_bunzip(input: ByteInput, output: ByteOutput): void;
    readonly reader: { read(bits: number): number };
    readonly streamCRC: number;
    static Stream: new () => ByteInput;
  }
  export default Bunzip;
}
