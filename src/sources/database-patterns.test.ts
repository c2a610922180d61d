import { describe, expect, it } from 'vitest';
import { databaseMatcher } from './database-patterns.js';

describe('databaseMatcher', () => {
  it.each([
    // include, exclude, name, visited
    [[], [], 'shop', true],
    [['shop_*'], [], 'shop_eu', true],
    [['shop_*'], [], 'shop', false],
    [['shop_*'], [], 'myshop_eu', false],
    [['tenant_??'], [], 'tenant_07', true],
    [['tenant_??'], [], 'tenant_107', false],
    [[], ['*_archive'], 'sales_archive', false],
    [[], ['*_archive'], 'archive_sales', true],
    [['shop_*'], ['shop_test*'], 'shop_test1', false],
    // Only * and ? are special: a dot, brackets and a plus are themselves, and case matters.
    [['a.b'], [], 'axb', false],
    [['a.b'], [], 'a.b', true],
    [['db[1]+'], [], 'db[1]+', true],
    [['db[1]+'], [], 'db1', false],
    [['Shop'], [], 'shop', false],
  ])('include %j exclude %j: %s visited = %s', (include, exclude, name, visited) => {
    expect(databaseMatcher({ include, exclude })(name)).toBe(visited);
  });
});
