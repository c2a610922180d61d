/**
 * Collectors against a real PostgreSQL 13 primary and streaming standby (collectors-scenarios.ts),
 * from the npm package's 13 binaries.
 */
import { describe } from 'vitest';
import { collectorScenarios } from './collectors-scenarios.js';

describe('collectors against PostgreSQL 13 (primary and standby)', () => collectorScenarios(13));
