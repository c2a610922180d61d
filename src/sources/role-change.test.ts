import { describe, expect, it } from 'vitest';
import { describeRoleChange, roleChange, roleChangeNotice } from './role-change.js';

const primary = { inRecovery: false };
const standby = { inRecovery: true };

describe('roleChange', () => {
  it.each([
    ['a standby promoted: its new timeline', standby, primary, 2, { from_role: 'standby', to_role: 'primary', timeline_id: 2, since_last_run: false }],
    ['a primary come back as a standby: no timeline of its own', primary, standby, 3, { from_role: 'primary', to_role: 'standby', timeline_id: null, since_last_run: false }],
    ['the same role', standby, standby, 1, null],
    ['the first probe: nothing to compare', null, primary, 1, null],
  ] as const)('%s', (_title, before, after, timeline, expected) => {
    expect(roleChange(before, after, timeline)).toEqual(expected);
  });

  it('says what changed and what pgvigil does about it', () => {
    expect(describeRoleChange('db2', { from_role: 'standby', to_role: 'primary', timeline_id: 2, since_last_run: false }))
      .toBe('role of db2 changed: standby -> primary (timeline 2): promoted (a failover or switchover); polled as a primary from now on');
    expect(describeRoleChange('db1', { from_role: 'primary', to_role: 'standby', timeline_id: null, since_last_run: false }))
      .toBe('role of db1 changed: primary -> standby: now a standby (following another primary); polled as a standby from now on');
  });

  it('says when the role changed while pgvigil was not running', () => {
    const change = roleChange(standby, primary, 3, true)!;
    expect(change).toEqual({ from_role: 'standby', to_role: 'primary', timeline_id: 3, since_last_run: true });
    expect(describeRoleChange('db2', change)).toBe('role of db2 changed since pgvigil last ran: standby -> primary (timeline 3): ' +
      'promoted (a failover or switchover); polled as a primary from now on');
    expect(roleChangeNotice('db2', null, change, 5_000).summary).toBe('db2 promoted to primary (timeline 3) since pgvigil last ran');
  });
});

describe('roleChangeNotice', () => {
  it('tells the notifiers who was promoted, in which cluster, on which timeline', () => {
    expect(roleChangeNotice('db2', 'shop', { from_role: 'standby', to_role: 'primary', timeline_id: 2, since_last_run: false }, 1_000)).toEqual({
      target: 'db2', summary: 'db2 promoted to primary (timeline 2) in cluster shop', tsMs: 1_000,
      details: { cluster: 'shop', from_role: 'standby', to_role: 'primary', timeline_id: 2, since_last_run: false },
    });
    expect(roleChangeNotice('db1', null, { from_role: 'primary', to_role: 'standby', timeline_id: null, since_last_run: false }, 2_000).summary).toBe('db1 became a standby');
  });
});
