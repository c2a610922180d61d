/** The cluster code lives in src/demo (`pgvigil demo` runs it too); tests import it from here. */
export * from '../../src/demo/pg-cluster.js';
