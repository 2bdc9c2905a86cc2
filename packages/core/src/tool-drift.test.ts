import { describe, expect, it } from 'vitest';
import { detectToolDrift, diffTools } from './tool-drift.ts';

const t = (name: string, hash: string) => ({ name, hash });

describe('diffTools', () => {
  it('reports added, removed and altered tools, sorted by name', () => {
    const diff = diffTools(
      [t('search', 'a'), t('fetch', 'b'), t('delete', 'c')],
      [t('zeta', 'z'), t('fetch', 'B'), t('search', 'a'), t('alpha', 'x')],
    );
    expect(diff).toEqual({ added: ['alpha', 'zeta'], removed: ['delete'], altered: ['fetch'] });
  });

  it('is empty for identical lists in any order', () => {
    expect(diffTools([t('a', '1'), t('b', '2')], [t('b', '2'), t('a', '1')])).toEqual({
      added: [],
      removed: [],
      altered: [],
    });
  });
});

describe('detectToolDrift', () => {
  it('is an event whenever the tools hash changes', () => {
    const event = detectToolDrift({ hash: 'h1', tools: [t('a', '1')] }, { hash: 'h2', tools: [t('a', '2')] });
    expect(event).toEqual({ old_hash: 'h1', new_hash: 'h2', added: [], removed: [], altered: ['a'] });
  });

  it('is an event even when the per-tool lists are unknown', () => {
    expect(detectToolDrift({ hash: 'h1', tools: null }, { hash: 'h2', tools: null })).toEqual({
      old_hash: 'h1',
      new_hash: 'h2',
      added: [],
      removed: [],
      altered: [],
    });
  });

  it('is no event for an unchanged hash, a first listing or a missing listing', () => {
    expect(detectToolDrift({ hash: 'h1', tools: [] }, { hash: 'h1', tools: [t('x', '1')] })).toBeNull();
    expect(detectToolDrift({ hash: null, tools: null }, { hash: 'h1', tools: [] })).toBeNull();
    expect(detectToolDrift({ hash: 'h1', tools: [] }, { hash: null, tools: null })).toBeNull();
  });
});
