/**
 * Collectors against a real PostgreSQL 14 primary and streaming standby (collectors-scenarios.ts),
 * from the npm package's 14 binaries.
 */
import { describe } from 'vitest';
import { collectorScenarios } from './collectors-scenarios.js';

describe('collectors against PostgreSQL 14 (primary and standby)', () => collectorScenarios(14));
