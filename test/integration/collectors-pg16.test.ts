/**
 * Collectors against a real PostgreSQL 16 primary and streaming standby (collectors-scenarios.ts),
 * from the npm package's 16 binaries.
 */
import { describe } from 'vitest';
import { collectorScenarios } from './collectors-scenarios.js';

describe('collectors against PostgreSQL 16 (primary and standby)', () => collectorScenarios(16));
