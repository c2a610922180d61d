/**
 * Collectors against a real PostgreSQL 17 primary and streaming standby (collectors-scenarios.ts),
 * from the npm package's 17 binaries.
 */
import { describe } from 'vitest';
import { collectorScenarios } from './collectors-scenarios.js';

describe('collectors against PostgreSQL 17 (primary and standby)', () => collectorScenarios(17));
