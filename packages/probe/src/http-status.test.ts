import { describe, expect, it } from 'vitest';
import { failureForStatus, resourceMetadataUrl } from './http-status.ts';

describe('resourceMetadataUrl', () => {
  it('reads a quoted or bare resource_metadata parameter', () => {
    expect(
      resourceMetadataUrl(
        'Bearer realm="mcp", resource_metadata="https://api.example/.well-known/oauth-protected-resource"',
      ),
    ).toBe('https://api.example/.well-known/oauth-protected-resource');
    expect(resourceMetadataUrl('Bearer resource_metadata=https://a.example/prm, scope="x"')).toBe(
      'https://a.example/prm',
    );
  });

  it('ignores missing, relative or non-http values', () => {
    expect(resourceMetadataUrl(undefined)).toBeNull();
    expect(resourceMetadataUrl('Bearer realm="x"')).toBeNull();
    expect(resourceMetadataUrl('Bearer resource_metadata="/prm"')).toBeNull();
    expect(resourceMetadataUrl('Bearer resource_metadata="javascript:alert(1)"')).toBeNull();
  });
});

describe('failureForStatus', () => {
  it('classifies auth challenges, 4xx and 5xx', () => {
    expect(failureForStatus(401, {}).errorType).toBe('auth');
    expect(failureForStatus(403, { 'www-authenticate': 'Bearer' }).errorType).toBe('auth');
    expect(failureForStatus(403, {}).errorType).toBe('http_4xx');
    expect(failureForStatus(404, {}).httpStatus).toBe(404);
    expect(failureForStatus(503, {}).errorType).toBe('http_5xx');
  });
});
