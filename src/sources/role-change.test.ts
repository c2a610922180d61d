import { describe, expect, it } from 'vitest';
import { describeRoleChange, roleChange, roleChangeNotice } from './role-change.js';

const primary = { inRecovery: false };
const standby = { inRecovery: true };

describe('roleChange', () => {
  it.each([
    ['a standby promoted: its new timeline', standby, primary, 2, { from_role: 'standby', to_role: 'primary', timeline_id: 2 }],
    ['a primary come back as a standby: no timeline of its own', primary, standby, 3, { from_role: 'primary', to_role: 'standby', timeline_id: null }],
    ['the same role', standby, standby, 1, null],
    ['the first probe: nothing to compare', null, primary, 1, null],
  ] as const)('%s', (_title, before, after, timeline, expected) => {
    expect(roleChange(before, after, timeline)).toEqual(expected);
  });

  it('says what changed and what pgvigil does about it', () => {
    expect(describeRoleChange('db2', { from_role: 'standby', to_role: 'primary', timeline_id: 2 }))
      .toBe('role of db2 changed: standby -> primary (timeline 2): promoted (a failover or switchover); polled as a primary from now on');
    expect(describeRoleChange('db1', { from_role: 'primary', to_role: 'standby', timeline_id: null }))
      .toBe('role of db1 changed: primary -> standby: now a standby (following another primary); polled as a standby from now on');
  });
});

describe('roleChangeNotice', () => {
  it('tells the notifiers who was promoted, in which cluster, on which timeline', () => {
    expect(roleChangeNotice('db2', 'shop', { from_role: 'standby', to_role: 'primary', timeline_id: 2 }, 1_000)).toEqual({
      target: 'db2', summary: 'db2 promoted to primary (timeline 2) in cluster shop', tsMs: 1_000,
      details: { cluster: 'shop', from_role: 'standby', to_role: 'primary', timeline_id: 2 },
    });
    expect(roleChangeNotice('db1', null, { from_role: 'primary', to_role: 'standby', timeline_id: null }, 2_000).summary).toBe('db1 became a standby');
  });
});
