/**
 * Collectors against a real PostgreSQL 18 primary and streaming standby (collectors-scenarios.ts).
 */
import { describe } from 'vitest';
import { collectorScenarios } from './collectors-scenarios.js';

describe('collectors against PostgreSQL 18 (primary and standby)', () => collectorScenarios(18));
