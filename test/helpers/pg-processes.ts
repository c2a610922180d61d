/** Process helpers live in src/demo (`pgvigil demo` uses them too); tests import them from here. */
export * from '../../src/demo/processes.js';
