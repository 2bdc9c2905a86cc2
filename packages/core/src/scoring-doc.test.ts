import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderWorkedExamples } from './scoring-examples.test-support.ts';
import { TRUST_RULES } from './trust-rules.ts';

const doc = readFileSync(new URL('../../../docs/scoring.md', import.meta.url), 'utf8');

function between(begin: string, end: string): string {
  const from = doc.indexOf(begin);
  const to = doc.indexOf(end);
  expect(from, `docs/scoring.md lacks ${begin}`).toBeGreaterThan(-1);
  expect(to, `docs/scoring.md lacks ${end}`).toBeGreaterThan(from);
  return doc.slice(from + begin.length, to).trim();
}

/** A markdown table as cells, so column padding (the formatter aligns tables) does not matter. */
function cells(table: string): string[][] {
  return table
    .trim()
    .split('\n')
    .map((line) =>
      line
        .split('|')
        .map((c) => c.trim())
        .map((c) => (/^-+$/.test(c) ? '-' : c)),
    );
}

describe('docs/scoring.md', () => {
  it('shows the worked examples exactly as the code computes them', () => {
    expect(cells(between('<!-- worked-examples:begin -->', '<!-- worked-examples:end -->'))).toEqual(
      cells(renderWorkedExamples()),
    );
  });

  it('cites the rules the code uses', () => {
    const rules = between('<!-- trust-rules:begin -->', '<!-- trust-rules:end -->');
    expect(JSON.parse(rules.replace(/^```json\n|\n```$/g, ''))).toEqual(
      JSON.parse(JSON.stringify(TRUST_RULES)),
    );
  });
});
