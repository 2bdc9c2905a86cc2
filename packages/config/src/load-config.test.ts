import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load-config.ts';

describe('loadConfig', () => {
  it('gives the documented defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(8080);
    expect(c.HOST).toBe('0.0.0.0');
    expect(c.mode).toBe('embedded');
    expect(c.PROBE_INTERVAL_S).toBe(300);
    expect(c.PROBE_TIMEOUT_MS).toBe(10_000);
    expect(c.PROBE_CONCURRENCY).toBe(100);
    expect(c.PROBE_ALLOW_PRIVATE_NETWORKS).toBe(false);
    expect(c.publicBaseUrl).toBe('http://localhost:8080');
    expect(c.dataDir.endsWith('.observatory')).toBe(true);
  });

  it('is distributed with DATABASE_URL and parses flags and numbers', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://u@127.0.0.1:5432/db',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PORT: '9000',
      PROBE_ALLOW_PRIVATE_NETWORKS: 'true',
      TRUST_PROXY: '10.0.0.0/8,127.0.0.1',
      PUBLIC_BASE_URL: 'https://obs.example.com/',
    });
    expect(c.mode).toBe('distributed');
    expect(c.PORT).toBe(9000);
    expect(c.PROBE_ALLOW_PRIVATE_NETWORKS).toBe(true);
    expect(c.TRUST_PROXY).toBe('10.0.0.0/8,127.0.0.1');
    expect(c.publicBaseUrl).toBe('https://obs.example.com');
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: '' }).mode).toBe('embedded');
  });

  it('refuses bad values with one line per bad variable, naming it', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        PROBE_ALLOW_PRIVATE_NETWORKS: 'maybe',
        DATA_SINCE: '2026-13-45',
        PROBE_INTERVAL_S: '1',
        TRUST_PROXY: '2',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(6);
    for (const name of [
      'PORT',
      'DATABASE_URL',
      'PROBE_ALLOW_PRIVATE_NETWORKS',
      'DATA_SINCE',
      'PROBE_INTERVAL_S',
      'TRUST_PROXY',
    ]) {
      expect(problems.some((p) => p.startsWith(`${name}:`))).toBe(true);
    }
  });
});
