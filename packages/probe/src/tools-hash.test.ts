import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprintTools } from './tools-hash.ts';

const echo = {
  name: 'echo',
  description: 'Echoes',
  inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
};
const add = { name: 'add', inputSchema: { type: 'object', properties: { a: { type: 'number' } } } };

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1], c: null } })).toBe('{"a":{"c":null,"d":[3,1]},"b":1}');
  });
});

describe('fingerprintTools', () => {
  it('hashes canonical JSON of [{name, description, inputSchema}] sorted by name', () => {
    const { toolsHash, tools } = fingerprintTools([echo, add]);
    const expected = createHash('sha256')
      .update(canonicalJson([add, echo]))
      .digest('hex');
    expect(toolsHash).toBe(expected);
    expect(tools.map((t) => t.name)).toEqual(['add', 'echo']);
    expect(tools[1]!.hash).toBe(createHash('sha256').update(canonicalJson(echo)).digest('hex'));
  });

  it('ignores tool order, key order and fields outside name/description/inputSchema', () => {
    const reordered = {
      inputSchema: { required: ['message'], properties: { message: { type: 'string' } }, type: 'object' },
      annotations: { title: 'Echo' },
      description: 'Echoes',
      name: 'echo',
    };
    expect(fingerprintTools([add, reordered]).toolsHash).toBe(fingerprintTools([echo, add]).toolsHash);
  });

  it('changes when a description changes, and says which tool changed', () => {
    const before = fingerprintTools([echo, add]);
    const after = fingerprintTools([{ ...echo, description: 'Echoes (now with logging)' }, add]);
    expect(after.toolsHash).not.toBe(before.toolsHash);
    expect(after.tools[0]).toEqual(before.tools[0]);
    expect(after.tools[1]!.hash).not.toBe(before.tools[1]!.hash);
  });

  it('fingerprints an empty list as the hash of []', () => {
    expect(fingerprintTools([])).toEqual({
      toolsHash: createHash('sha256').update('[]').digest('hex'),
      tools: [],
    });
  });
});
