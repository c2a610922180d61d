/**
 * Collectors against a real PostgreSQL 15 primary and streaming standby (collectors-scenarios.ts).
 */
import { describeWithTool } from '../helpers/tools.js';
import { collectorScenarios } from './collectors-scenarios.js';

describeWithTool('pg15', 'collectors against PostgreSQL 15 (primary and standby)', () => collectorScenarios(15));
