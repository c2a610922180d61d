export * from './log-entry.js';
export * from './log-event.js';
export * from './event-details.js';
export * from './sample.js';
export * from './alert.js';
export * from './clock.js';
export * from './lifecycle.js';
export * from './lock-name.js';
